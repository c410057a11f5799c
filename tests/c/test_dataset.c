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
  nnrt_dataset_release(d);
  snprintf(spec, sizeof spec,
           "{\"format\": \"idx\", \"images\": \"%s\", \"labels\": \"%s\", \"limit\": 3, \"scale\": 1}", path_buf[0],
           path_buf[1]);
  CHECK_OK(nnrt_dataset_load(ctx, spec, &d));
  CHECK_OK(nnrt_dataset_size(d, &n));
  CHECK(n == 3);
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
  CHECK(keep == (nnrt_dataset *)0x1);

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
