/* Datasets: load IDX and CSV files, make one from arrays, and every bad-input path. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "c_test.h"

static char dir[256];
static char path_buf[4][320];

/* Writes `n` bytes to <dir>/<name> and returns the path (one of four static buffers). */
static const char *write_file(int slot, const char *name, const void *bytes, size_t n) {
  FILE *f;
  snprintf(path_buf[slot], sizeof path_buf[slot], "%s/%s", dir, name);
  f = fopen(path_buf[slot], "wb");
  CHECK(f != NULL);
  if (f) {
    CHECK(fwrite(bytes, 1, n, f) == n);
    fclose(f);
  }
  return path_buf[slot];
}

static void remove_file(const char *name) {
  char p[320];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  remove(p);
}

/* Checks that loading `spec` fails with `status` and a message mentioning `text`, leaving out alone. */
static void check_load_fails(nnrt_context *ctx, const char *spec, nnrt_status status, const char *text) {
  nnrt_dataset *d = (nnrt_dataset *)0x1;
  CHECK_STATUS(nnrt_dataset_load(ctx, spec, &d), status, text);
  CHECK(d == (nnrt_dataset *)0x1);
}

/* The last two examples of an IDX dataset below (of all four: images 2 and 3, labels 4 and 1; of
** the first three: images 1 and 2, labels 1 and 4), as nnrt_dataset_examples gives them: F32
** features times `scale`, I64 labels. */
static void check_idx_examples(nnrt_context *ctx, const nnrt_dataset *d, float scale) {
  static const unsigned char pixels[8] = {8, 9, 10, 11, 12, 13, 14, 255};
  nnrt_array *f = NULL, *l = NULL;
  nnrt_dtype dt = NNRT_DTYPE_BOOL;
  int32_t nd = 0;
  int64_t shape[NNRT_MAX_DIMS], labels[2] = {-1, -1}, size = 0;
  float got[8];
  int i;
  CHECK_OK(nnrt_dataset_size(d, &size));
  CHECK_OK(nnrt_dataset_examples(ctx, d, size - 2, 2, &f, &l));
  CHECK_OK(nnrt_array_info(f, &dt, &nd, shape));
  /* [N, rows, cols] images become one-channel examples [1, rows, cols] */
  CHECK(dt == NNRT_DTYPE_F32 && nd == 4 && shape[0] == 2 && shape[1] == 1 && shape[2] == 2 && shape[3] == 2);
  CHECK_OK(nnrt_array_to_host(f, got, sizeof got));
  for (i = 0; i < 8 && size == 4; ++i) CHECK_NEAR(got[i], pixels[i] * scale, 1e-6);
  CHECK_OK(nnrt_array_info(l, &dt, &nd, shape));
  CHECK(dt == NNRT_DTYPE_I64 && nd == 1 && shape[0] == 2);
  CHECK_OK(nnrt_array_to_host(l, labels, sizeof labels));
  CHECK(size == 4 ? labels[0] == 4 && labels[1] == 1 : labels[0] == 1 && labels[1] == 4);
  nnrt_array_release(f);
  nnrt_array_release(l);
}

int main(void) {
  /* IDX: four 2x2 images and their labels; a labels file with three; a truncated images file. */
  static const unsigned char images[16 + 16] = {0, 0, 8, 3, 0, 0, 0, 4, 0, 0, 0,  2,  0,  0,  0,  2,
                                                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 255};
  static const unsigned char labels[8 + 4] = {0, 0, 8, 1, 0, 0, 0, 4, 3, 1, 4, 1};
  static const unsigned char three_labels[8 + 3] = {0, 0, 8, 1, 0, 0, 0, 3, 3, 1, 4};
  static const char csv[] = "label,a,b\r\n1, 0.5, 2\r\n0, -1, 3e2\r\n";
  static const char bad_csv[] = "1,2,3\n0,abc,1\n";
  static const char not_idx[] = "PK\3\4 not idx";
  const char *tmp = getenv("TMPDIR");
  char spec[2048];
  nnrt_context *ctx = NULL;
  nnrt_array *x = NULL, *y = NULL, *y_short = NULL, *x_nan = NULL;
  nnrt_dataset *d = NULL, *keep = (nnrt_dataset *)0x1;
  int64_t n = -1;

  snprintf(dir, sizeof dir, "%s/nnrt-c-dataset-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "mkdtemp failed\n");
    return 1;
  }
  CHECK_OK(nnrt_context_create("{\"backend\": \"reference\"}", &ctx));

  /* IDX, plain. */
  write_file(0, "images", images, sizeof images);
  write_file(1, "labels", labels, sizeof labels);
  snprintf(spec, sizeof spec, "{\"format\": \"idx\", \"images\": \"%s\", \"labels\": \"%s\"}", path_buf[0],
           path_buf[1]);
  CHECK_OK(nnrt_dataset_load(ctx, spec, &d));
  CHECK_OK(nnrt_dataset_size(d, &n));
  CHECK(n == 4);
  check_idx_examples(ctx, d, 1.0f / 255.0f);
  nnrt_dataset_release(d);
  snprintf(spec, sizeof spec,
           "{\"format\": \"idx\", \"images\": \"%s\", \"labels\": \"%s\", \"limit\": 3, \"scale\": 1}", path_buf[0],
           path_buf[1]);
  CHECK_OK(nnrt_dataset_load(ctx, spec, &d));
  CHECK_OK(nnrt_dataset_size(d, &n));
  CHECK(n == 3);
  check_idx_examples(ctx, d, 1.0f);
  nnrt_dataset_release(d);

  /* CSV with a header and \r\n. */
  write_file(2, "d.csv", csv, sizeof csv - 1);
  snprintf(spec, sizeof spec, "{\"format\": \"csv\", \"path\": \"%s\", \"header\": true}", path_buf[2]);
  CHECK_OK(nnrt_dataset_load(ctx, spec, &d));
  CHECK_OK(nnrt_dataset_size(d, &n));
  CHECK(n == 2);
  nnrt_dataset_release(d);

  /* load: bad arguments and specs. */
  CHECK_STATUS(nnrt_dataset_load(NULL, spec, &keep), NNRT_ERR_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_STATUS(nnrt_dataset_load(ctx, NULL, &keep), NNRT_ERR_INVALID_ARGUMENT, "spec_json is NULL");
  CHECK_STATUS(nnrt_dataset_load(ctx, spec, NULL), NNRT_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK(keep == (nnrt_dataset *)0x1);
  check_load_fails(ctx, "{\"format\": \"csv\",", NNRT_ERR_INVALID_ARGUMENT, "not valid JSON");
  check_load_fails(ctx, "[]", NNRT_ERR_INVALID_ARGUMENT, "expected a JSON object");
  check_load_fails(ctx, "{}", NNRT_ERR_INVALID_ARGUMENT, "spec.format is required");
  check_load_fails(ctx, "{\"format\": \"hdf5\"}", NNRT_ERR_INVALID_ARGUMENT, "hdf5");
  check_load_fails(ctx, "{\"format\": \"csv\", \"path\": \"x.csv\", \"colour\": 1}", NNRT_ERR_INVALID_ARGUMENT,
                   "unknown key 'spec.colour'");
  check_load_fails(ctx, "{\"format\": \"csv\", \"path\": 7}", NNRT_ERR_INVALID_ARGUMENT,
                   "spec.path: expected a string");
  check_load_fails(ctx, "{\"format\": \"idx\", \"images\": \"a\"}", NNRT_ERR_INVALID_ARGUMENT,
                   "spec.labels is required");
  check_load_fails(ctx, "{\"format\": \"idx\", \"images\": \"a\", \"labels\": \"b\", \"limit\": -1}",
                   NNRT_ERR_INVALID_ARGUMENT, "spec.limit");

  /* Files: missing, corrupt, inconsistent. */
  snprintf(spec, sizeof spec, "{\"format\": \"idx\", \"images\": \"%s/none.gz\", \"labels\": \"%s\"}", dir,
           path_buf[1]);
  check_load_fails(ctx, spec, NNRT_ERR_IO, "none.gz");
  write_file(3, "cut", images, sizeof images - 3);
  snprintf(spec, sizeof spec, "{\"format\": \"idx\", \"images\": \"%s\", \"labels\": \"%s\"}", path_buf[3],
           path_buf[1]);
  check_load_fails(ctx, spec, NNRT_ERR_CORRUPT, "truncated");
  write_file(2, "three", three_labels, sizeof three_labels);
  snprintf(spec, sizeof spec, "{\"format\": \"idx\", \"images\": \"%s\", \"labels\": \"%s\"}", path_buf[0],
           path_buf[2]);
  check_load_fails(ctx, spec, NNRT_ERR_CORRUPT, "holds 3");
  snprintf(spec, sizeof spec, "{\"format\": \"idx\", \"images\": \"%s\", \"labels\": \"%s\"}", path_buf[2],
           path_buf[1]);
  check_load_fails(ctx, spec, NNRT_ERR_CORRUPT, "holds 3");
  write_file(2, "bad.csv", bad_csv, sizeof bad_csv - 1);
  snprintf(spec, sizeof spec, "{\"format\": \"csv\", \"path\": \"%s\"}", path_buf[2]);
  check_load_fails(ctx, spec, NNRT_ERR_CORRUPT, "bad.csv:2:3");
  write_file(2, "magic", not_idx, sizeof not_idx - 1);
  snprintf(spec, sizeof spec, "{\"format\": \"idx\", \"images\": \"%s\", \"labels\": \"%s\"}", path_buf[2],
           path_buf[1]);
  check_load_fails(ctx, spec, NNRT_ERR_CORRUPT, "not an IDX file");

  /* from_arrays. */
  {
    float xs[6] = {1, 2, 3, 4, 5, 6}, nan_xs[6] = {1, 2, 3, 4, 5, 0};
    int64_t ys[3] = {0, 2, 1}, x_shape[2] = {3, 2}, y_shape[1] = {3}, short_shape[1] = {2};
    nan_xs[5] = (float)NAN;
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, x_shape, xs, sizeof xs, &x));
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, x_shape, nan_xs, sizeof nan_xs, &x_nan));
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I64, 1, y_shape, ys, sizeof ys, &y));
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I64, 1, short_shape, ys, 2 * sizeof ys[0], &y_short));
  }
  CHECK_OK(nnrt_dataset_from_arrays(ctx, x, y, &d));
  CHECK_OK(nnrt_dataset_size(d, &n));
  CHECK(n == 3);
  CHECK_STATUS(nnrt_dataset_from_arrays(NULL, x, y, &keep), NNRT_ERR_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_STATUS(nnrt_dataset_from_arrays(ctx, NULL, y, &keep), NNRT_ERR_INVALID_ARGUMENT, "features is NULL");
  CHECK_STATUS(nnrt_dataset_from_arrays(ctx, x, NULL, &keep), NNRT_ERR_INVALID_ARGUMENT, "labels is NULL");
  CHECK_STATUS(nnrt_dataset_from_arrays(ctx, x, y, NULL), NNRT_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(nnrt_dataset_from_arrays((nnrt_context *)x, x, y, &keep), NNRT_ERR_INVALID_ARGUMENT,
               "not a live nnrt_context");
  CHECK_STATUS(nnrt_dataset_from_arrays(ctx, (nnrt_array *)d, y, &keep), NNRT_ERR_INVALID_ARGUMENT,
               "features is not a live nnrt_array");
  CHECK_STATUS(nnrt_dataset_from_arrays(ctx, x, y_short, &keep), NNRT_ERR_SHAPE, "[3, 2]");
  CHECK_STATUS(nnrt_dataset_from_arrays(ctx, x_nan, y, &keep), NNRT_ERR_INVALID_ARGUMENT, "example 2");
  {
    unsigned char flags[6] = {0, 1, 1, 0, 1, 1};
    int64_t shape[2] = {3, 2};
    nnrt_array *bools = NULL;
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_BOOL, 2, shape, flags, sizeof flags, &bools));
    CHECK_STATUS(nnrt_dataset_from_arrays(ctx, bools, y, &keep), NNRT_ERR_DTYPE, "bool");
    nnrt_array_release(bools);
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_BOOL, 1, shape, flags, 3, &bools));
    CHECK_STATUS(nnrt_dataset_from_arrays(ctx, x, bools, &keep), NNRT_ERR_DTYPE, "bool");
    nnrt_array_release(bools);
  }
  CHECK(keep == (nnrt_dataset *)0x1);

  /* examples: a range of the dataset as new arrays; the labels may be skipped */
  {
    nnrt_array *f = NULL, *l = NULL, *keep_f = (nnrt_array *)0x1, *keep_l = (nnrt_array *)0x1;
    float fv[4] = {0};
    int64_t lv[2] = {-1, -1}, shape[NNRT_MAX_DIMS];
    int32_t nd = 0;
    CHECK_OK(nnrt_dataset_examples(ctx, d, 1, 2, &f, &l));
    CHECK_OK(nnrt_array_info(f, NULL, &nd, shape));
    CHECK(nd == 2 && shape[0] == 2 && shape[1] == 2);
    CHECK_OK(nnrt_array_to_host(f, fv, sizeof fv));
    CHECK(fv[0] == 3 && fv[1] == 4 && fv[2] == 5 && fv[3] == 6);
    CHECK_OK(nnrt_array_to_host(l, lv, sizeof lv));
    CHECK(lv[0] == 2 && lv[1] == 1);
    nnrt_array_release(f);
    nnrt_array_release(l);
    CHECK_OK(nnrt_dataset_examples(ctx, d, 3, 0, &f, NULL));
    CHECK_OK(nnrt_array_info(f, NULL, &nd, shape));
    CHECK(nd == 2 && shape[0] == 0 && shape[1] == 2);
    nnrt_array_release(f);
    CHECK_STATUS(nnrt_dataset_examples(ctx, d, 2, 2, &keep_f, &keep_l), NNRT_ERR_INVALID_ARGUMENT, "[2, 4)");
    CHECK_STATUS(nnrt_dataset_examples(ctx, d, 2, 2, &keep_f, &keep_l), NNRT_ERR_INVALID_ARGUMENT, "3 examples");
    CHECK_STATUS(nnrt_dataset_examples(ctx, d, -1, 1, &keep_f, &keep_l), NNRT_ERR_INVALID_ARGUMENT, "[-1, 0)");
    CHECK_STATUS(nnrt_dataset_examples(ctx, d, 0, -1, &keep_f, &keep_l), NNRT_ERR_INVALID_ARGUMENT, "outside");
    CHECK_STATUS(nnrt_dataset_examples(NULL, d, 0, 1, &keep_f, &keep_l), NNRT_ERR_INVALID_ARGUMENT, "ctx is NULL");
    CHECK_STATUS(nnrt_dataset_examples(ctx, NULL, 0, 1, &keep_f, &keep_l), NNRT_ERR_INVALID_ARGUMENT, "d is NULL");
    CHECK_STATUS(nnrt_dataset_examples(ctx, d, 0, 1, NULL, &keep_l), NNRT_ERR_INVALID_ARGUMENT, "features is NULL");
    CHECK_STATUS(nnrt_dataset_examples((nnrt_context *)d, d, 0, 1, &keep_f, &keep_l), NNRT_ERR_INVALID_ARGUMENT,
                 "not a live nnrt_context");
    CHECK_STATUS(nnrt_dataset_examples(ctx, (nnrt_dataset *)x, 0, 1, &keep_f, &keep_l), NNRT_ERR_INVALID_ARGUMENT,
                 "not a live nnrt_dataset");
    CHECK(keep_f == (nnrt_array *)0x1 && keep_l == (nnrt_array *)0x1);
  }

  /* size and release. */
  CHECK_STATUS(nnrt_dataset_size(NULL, &n), NNRT_ERR_INVALID_ARGUMENT, "d is NULL");
  CHECK_STATUS(nnrt_dataset_size(d, NULL), NNRT_ERR_INVALID_ARGUMENT, "examples is NULL");
  CHECK_STATUS(nnrt_dataset_size((nnrt_dataset *)x, &n), NNRT_ERR_INVALID_ARGUMENT, "not a live nnrt_dataset");
  CHECK_STATUS(nnrt_dataset_load((nnrt_context *)d, "{}", &keep), NNRT_ERR_INVALID_ARGUMENT, "not a live nnrt_context");
  nnrt_dataset_release(NULL);

  /* A dataset outlives the arrays and the context it came from. */
  nnrt_array_release(x);
  nnrt_array_release(y);
  nnrt_array_release(y_short);
  nnrt_array_release(x_nan);
  nnrt_context_release(ctx);
  CHECK_OK(nnrt_dataset_size(d, &n));
  CHECK(n == 3);
  nnrt_dataset_release(d);

  remove_file("images");
  remove_file("labels");
  remove_file("d.csv");
  remove_file("cut");
  remove_file("three");
  remove_file("bad.csv");
  remove_file("magic");
  rmdir(dir);
  return c_test_finish("test_dataset");
}
