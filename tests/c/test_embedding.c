/* Embedding: arrays over the caller's memory (nnrt_array_wrap_host), predictions written into the
** caller's output (nnrt_model_predict_into), and calls stopped by run options (cancel, timeout, abort
** callback) from the calling thread and from another one (run under ThreadSanitizer too), models
** sharing parameters (nnrt_model_share) and loaded from a mapped checkpoint, and an idle process.
**
** argv[1], when given, is the context's options (the backend). */
#include <pthread.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "c_test.h"

static const char *context_options = "{\"threads\": 2}";
/* Whether the context's backend keeps arrays in host memory, where nnrt_array_wrap_host can lend the
** caller's memory (main finds out). On a GPU (the fake one in tests/plugins) it is refused. */
static int lends = 1;
static const char *device_memory_skip =
    "the backend keeps arrays in device memory, where nnrt_array_wrap_host is refused "
    "(test_wrap_is_refused_on_device_memory checks that)";

/* 4 inputs, 2 outputs. */
static const char *mlp =
    "{\"input\": [4], \"seed\": 7, \"layers\": [{\"type\": \"dense\", \"units\": 16, \"activation\": \"tanh\"},"
    " {\"type\": \"output\", \"units\": 2, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";

/* 12 dense layers: a pass of a few dozen ops, to stop in the middle of. */
static const char *deep =
    "{\"input\": [8], \"seed\": 3, \"layers\": ["
    "{\"type\": \"dense\", \"units\": 8, \"activation\": \"relu\"}, {\"type\": \"dense\", \"units\": 8, \"activation\": \"tanh\"},"
    "{\"type\": \"dense\", \"units\": 8, \"activation\": \"relu\"}, {\"type\": \"dense\", \"units\": 8, \"activation\": \"tanh\"},"
    "{\"type\": \"dense\", \"units\": 8, \"activation\": \"relu\"}, {\"type\": \"dense\", \"units\": 8, \"activation\": \"tanh\"},"
    "{\"type\": \"dense\", \"units\": 8, \"activation\": \"relu\"}, {\"type\": \"dense\", \"units\": 8, \"activation\": \"tanh\"},"
    "{\"type\": \"dense\", \"units\": 8, \"activation\": \"relu\"}, {\"type\": \"dense\", \"units\": 8, \"activation\": \"tanh\"},"
    "{\"type\": \"dense\", \"units\": 8, \"activation\": \"relu\"},"
    " {\"type\": \"output\", \"units\": 3, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";

static nnrt_context *new_context(void) {
  nnrt_context *ctx = NULL;
  CHECK_OK(nnrt_context_create(context_options, &ctx));
  return ctx;
}

static nnrt_model *new_model(nnrt_context *ctx, const char *config) {
  nnrt_model *m = NULL;
  CHECK_OK(nnrt_model_create(ctx, config, &m));
  return m;
}

/* Counts the calls of a release callback; `user` is an int counter. */
static void count_release(void *data, void *user) {
  (void)data;
  ++*(int *)user;
}

/* The prediction of a copy of x (row-major, [n, features]): the reference result. */
static void predict_copy(nnrt_context *ctx, nnrt_model *m, const float *x, int64_t n, int64_t features, float *y,
                         size_t y_bytes) {
  int64_t shape[2];
  nnrt_array *in = NULL, *out = NULL;
  shape[0] = n;
  shape[1] = features;
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape, x, (size_t)(n * features) * sizeof(float), &in));
  CHECK_OK(nnrt_model_predict(m, in, &out));
  CHECK_OK(nnrt_array_to_host(out, y, y_bytes));
  nnrt_array_release(in);
  nnrt_array_release(out);
}

/* The input and the output are the caller's: changing the input's bytes in place (no nnrt call)
** changes the next prediction, which lands in the caller's output buffer. */
static void test_wrapped_input_and_output_are_used_in_place(void) {
  if (!lends) {
    C_TEST_SKIP(device_memory_skip);
    return;
  }
  nnrt_context *ctx = new_context();
  nnrt_model *m = new_model(ctx, mlp);
  float x[3 * 4], y[3 * 2], want[3 * 2], first[3 * 2];
  int64_t xs[2] = {3, 4}, ys[2] = {3, 2};
  int released = 0, i;
  nnrt_array *in = NULL, *out = NULL;
  for (i = 0; i < 12; ++i) x[i] = (float)(i % 5) * 0.25f - 0.5f;
  CHECK_OK(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, xs, NULL, x, sizeof x, count_release, &released, &in));
  CHECK_OK(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, ys, NULL, y, sizeof y, count_release, &released, &out));
  /* Twice: the first call records the prediction plan, the second replays it into `out`. */
  for (i = 0; i < 2; ++i) {
    memset(y, 0, sizeof y);
    CHECK_OK(nnrt_model_predict_into(m, in, out, NULL));
    predict_copy(ctx, m, x, 3, 4, want, sizeof want);
    CHECK(memcmp(y, want, sizeof y) == 0);
  }
  memcpy(first, y, sizeof y);
  for (i = 0; i < 12; ++i) x[i] = -x[i] * 2.0f + 0.125f;  /* the caller's bytes change, nnrt is not told */
  CHECK_OK(nnrt_model_predict_into(m, in, out, NULL));
  predict_copy(ctx, m, x, 3, 4, want, sizeof want);
  CHECK(memcmp(y, want, sizeof y) == 0);
  CHECK(memcmp(y, first, sizeof y) != 0);
  /* nnrt_array_to_host reads the caller's memory too. */
  CHECK_OK(nnrt_array_to_host(out, want, sizeof want));
  CHECK(memcmp(y, want, sizeof y) == 0);
  CHECK(released == 0);
  nnrt_array_release(in);
  CHECK(released == 1);  /* the prediction kept no reference */
  nnrt_array_release(out);
  CHECK(released == 2);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

/* Strided memory: a column-major input, and an output whose rows are padded (the padding is left
** alone). */
static void test_strided_input_and_output(void) {
  if (!lends) {
    C_TEST_SKIP(device_memory_skip);
    return;
  }
  nnrt_context *ctx = new_context();
  nnrt_model *m = new_model(ctx, mlp);
  float row_major[5 * 4], col_major[4 * 5], padded[5 * 3], want[5 * 2];
  int64_t xs[2] = {5, 4}, x_strides[2] = {1, 5}, ys[2] = {5, 2}, y_strides[2] = {3, 1};
  nnrt_array *in = NULL, *out = NULL;
  int i, j, pad_kept = 1;
  for (i = 0; i < 5; ++i)
    for (j = 0; j < 4; ++j) row_major[i * 4 + j] = col_major[j * 5 + i] = (float)(i - j) * 0.3f;
  for (i = 0; i < 15; ++i) padded[i] = 42.0f;
  CHECK_OK(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, xs, x_strides, col_major, sizeof col_major, NULL, NULL, &in));
  CHECK_OK(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, ys, y_strides, padded, sizeof padded - sizeof(float), NULL,
                                NULL, &out));
  CHECK_OK(nnrt_model_predict_into(m, in, out, NULL));
  predict_copy(ctx, m, row_major, 5, 4, want, sizeof want);
  for (i = 0; i < 5; ++i) {
    CHECK_NEAR(padded[i * 3], want[i * 2], 1e-6);
    CHECK_NEAR(padded[i * 3 + 1], want[i * 2 + 1], 1e-6);
    if (i < 4 && padded[i * 3 + 2] != 42.0f) pad_kept = 0;
  }
  CHECK(pad_kept);
  nnrt_array_release(in);
  nnrt_array_release(out);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

static void test_bad_wraps_and_outputs(void) {
  if (!lends) {
    C_TEST_SKIP(device_memory_skip);
    return;
  }
  nnrt_context *ctx = new_context();
  nnrt_model *m = new_model(ctx, mlp);
  float buf[16];
  unsigned char bytes[16];
  int64_t s2[2] = {2, 4}, neg[2] = {4, -1}, ys[2] = {2, 2}, wrong[2] = {2, 3}, shape[NNRT_MAX_DIMS];
  int32_t ndim = 0;
  int released = 0;
  nnrt_array *a = NULL, *in = NULL, *out = NULL;
  memset(buf, 0, sizeof buf);
  CHECK_STATUS(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, s2, NULL, NULL, 32, count_release, &released, &a),
               NNRT_ERR_INVALID_ARGUMENT, "data is NULL");
  CHECK_STATUS(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, s2, neg, buf, sizeof buf, count_release, &released, &a),
               NNRT_ERR_INVALID_ARGUMENT, "strides[1] is -1");
  CHECK_STATUS(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, s2, NULL, buf, 31, count_release, &released, &a),
               NNRT_ERR_INVALID_ARGUMENT, "reaches 32 bytes");
  CHECK_STATUS(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, s2, NULL, (char *)buf + 1, 32, count_release, &released,
                                    &a),
               NNRT_ERR_INVALID_ARGUMENT, "not aligned");
  CHECK_STATUS(nnrt_array_wrap_host(ctx, NNRT_DTYPE_BOOL, 2, s2, NULL, bytes, 8, count_release, &released, &a),
               NNRT_ERR_DTYPE, "nnrt_array_from_host");
  CHECK_STATUS(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, s2, NULL, buf, 32, NULL, NULL, NULL),
               NNRT_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK(released == 0); /* never called for a wrap that failed */
  /* An empty array needs no memory: release is called at once. */
  s2[0] = 0;
  CHECK_OK(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, s2, NULL, NULL, 0, count_release, &released, &a));
  CHECK(released == 1);
  nnrt_array_release(a);
  s2[0] = 2;

  CHECK_OK(nnrt_model_output_shape(m, 5, &ndim, shape));
  CHECK(ndim == 2 && shape[0] == 5 && shape[1] == 2);
  CHECK_STATUS(nnrt_model_output_shape(m, -1, &ndim, shape), NNRT_ERR_INVALID_ARGUMENT, "batch is -1");

  CHECK_OK(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, s2, NULL, buf, 32, NULL, NULL, &in));
  CHECK_OK(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, wrong, NULL, buf + 8, 24, NULL, NULL, &out));
  CHECK_STATUS(nnrt_model_predict_into(m, in, out, NULL), NNRT_ERR_SHAPE, "the prediction for this input is [2, 2]");
  nnrt_array_release(out);
  CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F64, 2, ys, &out));
  CHECK_STATUS(nnrt_model_predict_into(m, in, out, NULL), NNRT_ERR_DTYPE, "the prediction is f32");
  nnrt_array_release(out);
  CHECK_STATUS(nnrt_model_predict_into(m, in, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "output is NULL");
  CHECK_STATUS(nnrt_model_predict_into(m, in, (nnrt_array *)m, NULL), NNRT_ERR_INVALID_ARGUMENT,
               "output is not a live nnrt_array");
  /* An output made by nnrt (not wrapped) is written too. */
  CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, ys, &out));
  CHECK_OK(nnrt_model_predict_into(m, in, out, NULL));
  {
    float got[4], want[4];
    CHECK_OK(nnrt_array_to_host(out, got, sizeof got));
    predict_copy(ctx, m, buf, 2, 4, want, sizeof want);
    CHECK(memcmp(got, want, sizeof got) == 0);
  }
  nnrt_array_release(out);
  nnrt_array_release(in);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

/* One buffer as both input and output: the result is the prediction of the input as it was. */
static void test_output_in_the_input_memory(void) {
  nnrt_context *ctx;
  nnrt_model *m;
  float x[4 * 4], want[4 * 4];
  int64_t shape[2] = {4, 4};
  nnrt_array *a = NULL;
  int i, pass;
  if (!lends) return; /* wrapping is refused there (test_wrap_is_refused_on_device_memory) */
  ctx = new_context();
  m = new_model(ctx, "{\"input\": [4], \"seed\": 2, \"layers\": [{\"type\": \"dense\", \"units\": 4, \"bias\": false}]}");
  for (pass = 0; pass < 2; ++pass) { /* recording, then replaying the plan */
    for (i = 0; i < 16; ++i) x[i] = (float)(i % 7) * 0.5f - 1.0f;
    predict_copy(ctx, m, x, 4, 4, want, sizeof want);
    CHECK_OK(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, shape, NULL, x, sizeof x, NULL, NULL, &a));
    CHECK_OK(nnrt_model_predict_into(m, a, a, NULL));
    for (i = 0; i < 16; ++i) CHECK_NEAR(x[i], want[i], 1e-6);
    nnrt_array_release(a);
  }
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

/* ---- run options ------------------------------------------------------------------------------ */

typedef struct {
  int calls, stop_at; /* return nonzero at call stop_at (0: never) */
} abort_counter;

static int count_checks(void *user) {
  abort_counter *c = (abort_counter *)user;
  ++c->calls;
  return c->stop_at && c->calls >= c->stop_at;
}

static nnrt_array *deep_input(nnrt_context *ctx, int64_t n) {
  float x[16 * 8];
  int64_t shape[2];
  int i;
  nnrt_array *a = NULL;
  shape[0] = n;
  shape[1] = 8;
  for (i = 0; i < n * 8; ++i) x[i] = (float)((i * 7) % 11) * 0.1f - 0.5f;
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape, x, (size_t)(n * 8) * sizeof(float), &a));
  return a;
}

/* An abort callback that says stop at its 5th check stops the pass there: the ops after it never
** ran (a whole pass makes many more checks), nothing is output, and the model works at once. */
static void test_abort_callback_stops_mid_pass(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = new_model(ctx, deep);
  nnrt_array *x = deep_input(ctx, 4), *y = NULL, *plain = NULL;
  nnrt_run_options *o = NULL;
  abort_counter counter = {0, 0};
  int pass;
  float got[12], want[12];
  CHECK_OK(nnrt_run_options_create(&o));
  CHECK_OK(nnrt_run_options_set_abort_callback(o, count_checks, &counter));
  /* pass 0 records the plan (ops dispatched one by one), pass 1 replays it. */
  for (pass = 0; pass < 2; ++pass) {
    int whole;
    counter.calls = 0;
    counter.stop_at = 0;
    CHECK_OK(nnrt_model_predict_ex(m, x, o, &y));
    whole = counter.calls;
    CHECK(whole >= 12);  /* at least one check per layer */
    nnrt_array_release(y);
    y = NULL;
    counter.calls = 0;
    counter.stop_at = 5;
    CHECK_STATUS(nnrt_model_predict_ex(m, x, o, &y), NNRT_ERR_CANCELLED, "abort callback");
    CHECK(y == NULL);
    CHECK(counter.calls == 5);
    CHECK(counter.calls < whole);
  }
  CHECK_OK(nnrt_model_predict(m, x, &plain));
  CHECK_OK(nnrt_array_to_host(plain, want, sizeof want));
  counter.stop_at = 0;
  CHECK_OK(nnrt_model_predict_ex(m, x, o, &y));
  CHECK_OK(nnrt_array_to_host(y, got, sizeof got));
  CHECK(memcmp(got, want, sizeof got) == 0);
  nnrt_array_release(y);
  nnrt_array_release(plain);
  nnrt_array_release(x);
  nnrt_run_options_release(o);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

static void test_cancel_reset_and_timeout(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = new_model(ctx, deep);
  nnrt_array *x = deep_input(ctx, 2), *y = NULL, *out = NULL;
  nnrt_run_options *o = NULL;
  int64_t ys[2] = {2, 3};
  CHECK_STATUS(nnrt_run_options_create(NULL), NNRT_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_OK(nnrt_run_options_create(&o));
  CHECK_OK(nnrt_run_options_cancel(o));
  CHECK_STATUS(nnrt_model_predict_ex(m, x, o, &y), NNRT_ERR_CANCELLED, "nnrt_run_options_cancel");
  CHECK(y == NULL);
  CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, ys, &out));
  CHECK_STATUS(nnrt_model_predict_into(m, x, out, o), NNRT_ERR_CANCELLED, "cancelled");
  CHECK_OK(nnrt_run_options_reset(o));
  CHECK_OK(nnrt_model_predict_ex(m, x, o, &y));
  nnrt_array_release(y);
  y = NULL;
  CHECK_OK(nnrt_model_predict_into(m, x, out, o));

  CHECK_STATUS(nnrt_run_options_set_timeout(o, -1), NNRT_ERR_INVALID_ARGUMENT, "seconds is -1");
  CHECK_STATUS(nnrt_run_options_set_timeout(o, NAN), NNRT_ERR_INVALID_ARGUMENT, "expected a finite number");
  CHECK_OK(nnrt_run_options_set_timeout(o, 1e-9)); /* past before the first op is reached */
  CHECK_STATUS(nnrt_model_predict_ex(m, x, o, &y), NNRT_ERR_DEADLINE_EXCEEDED, "past its timeout of 1e-09 s");
  CHECK(y == NULL);
  CHECK_STATUS(nnrt_model_predict_into(m, x, out, o), NNRT_ERR_DEADLINE_EXCEEDED, "timeout");
  CHECK(strcmp(nnrt_status_name(NNRT_ERR_DEADLINE_EXCEEDED), "NNRT_ERR_DEADLINE_EXCEEDED") == 0);
  CHECK_OK(nnrt_run_options_set_timeout(o, 600));
  CHECK_OK(nnrt_model_predict_ex(m, x, o, &y));
  nnrt_array_release(y);
  CHECK_OK(nnrt_run_options_set_timeout(o, 0));
  CHECK_STATUS(nnrt_run_options_cancel(NULL), NNRT_ERR_INVALID_ARGUMENT, "o is NULL");
  CHECK_STATUS(nnrt_run_options_reset(NULL), NNRT_ERR_INVALID_ARGUMENT, "o is NULL");
  CHECK_STATUS(nnrt_run_options_set_abort_callback(NULL, count_checks, NULL), NNRT_ERR_INVALID_ARGUMENT, "o is NULL");
  CHECK_STATUS(nnrt_run_options_cancel((nnrt_run_options *)m), NNRT_ERR_INVALID_ARGUMENT, "not a live");
  CHECK_STATUS(nnrt_model_predict_ex(m, x, (nnrt_run_options *)m, &y), NNRT_ERR_INVALID_ARGUMENT,
               "options is not a live nnrt_run_options");
  nnrt_array_release(out);
  nnrt_array_release(x);
  nnrt_run_options_release(o);
  nnrt_run_options_release(NULL);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

/* Evaluation stops between batches and ops; loads stop between their stages. */
static void test_evaluate_and_load_stop(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = new_model(ctx, deep), *loaded = NULL;
  nnrt_array *x = deep_input(ctx, 16), *labels = NULL;
  nnrt_dataset *data = NULL;
  nnrt_evaluation *e = NULL;
  nnrt_run_options *o = NULL;
  abort_counter counter = {0, 0};
  int64_t n = 16, whole;
  int64_t label_values[16];
  char path[] = "/tmp/nnrt-test-embedding-XXXXXX";
  int fd, i;
  for (i = 0; i < 16; ++i) label_values[i] = i % 3;
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I64, 1, &n, label_values, sizeof label_values, &labels));
  CHECK_OK(nnrt_dataset_from_arrays(ctx, x, labels, &data));
  CHECK_OK(nnrt_run_options_create(&o));
  CHECK_OK(nnrt_run_options_set_abort_callback(o, count_checks, &counter));
  CHECK_OK(nnrt_model_evaluate_ex(m, data, o, &e));
  nnrt_evaluation_release(e);
  e = NULL;
  whole = counter.calls;
  counter.calls = 0;
  counter.stop_at = 3;
  CHECK_STATUS(nnrt_model_evaluate_ex(m, data, o, &e), NNRT_ERR_CANCELLED, "abort callback");
  CHECK(e == NULL && counter.calls == 3 && whole > 3);
  counter.stop_at = 0;
  CHECK_OK(nnrt_run_options_set_timeout(o, 1e-9));
  CHECK_STATUS(nnrt_model_evaluate_ex(m, data, o, &e), NNRT_ERR_DEADLINE_EXCEEDED, "timeout");
  CHECK(e == NULL);
  CHECK_OK(nnrt_run_options_set_timeout(o, 0));

  fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  CHECK_OK(nnrt_model_save(m, path));
  counter.calls = 0;
  counter.stop_at = 0;
  CHECK_OK(nnrt_model_load_ex(ctx, path, o, &loaded));
  nnrt_model_release(loaded);
  loaded = NULL;
  whole = counter.calls;
  counter.calls = 0;
  counter.stop_at = whole; /* the last check: before the last parameter's upload */
  CHECK_STATUS(nnrt_model_load_ex(ctx, path, o, &loaded), NNRT_ERR_CANCELLED, "abort callback");
  CHECK(loaded == NULL && counter.calls == whole);
  counter.stop_at = 0;
  CHECK_OK(nnrt_run_options_set_timeout(o, 1e-9));
  CHECK_STATUS(nnrt_model_load_ex(ctx, path, o, &loaded), NNRT_ERR_DEADLINE_EXCEEDED, "timeout");
  CHECK(loaded == NULL);
  CHECK_OK(nnrt_run_options_set_timeout(o, 0));
  CHECK_OK(nnrt_run_options_cancel(o));
  CHECK_STATUS(nnrt_model_load_ex(ctx, path, o, &loaded), NNRT_ERR_CANCELLED, "cancelled");
  CHECK(loaded == NULL);
  /* An ONNX import, where the converter plugin is here: the same stops. */
  {
    char onnx[sizeof path + 8];
    snprintf(onnx, sizeof onnx, "%s.onnx", path);
    if (nnrt_model_export_onnx(m, onnx) != NNRT_OK) {
      C_TEST_SKIP("the ONNX converter plugin is not here: nnrt_model_import_onnx_ex's stops unchecked");
    } else {
      CHECK_STATUS(nnrt_model_import_onnx_ex(ctx, onnx, NULL, o, &loaded), NNRT_ERR_CANCELLED, "cancelled");
      CHECK(loaded == NULL);
      CHECK_OK(nnrt_run_options_reset(o));
      CHECK_OK(nnrt_run_options_set_timeout(o, 1e-9));
      CHECK_STATUS(nnrt_model_import_onnx_ex(ctx, onnx, NULL, o, &loaded), NNRT_ERR_DEADLINE_EXCEEDED, "timeout");
      CHECK(loaded == NULL);
      CHECK_OK(nnrt_run_options_set_timeout(o, 0));
      counter.calls = 0;
      counter.stop_at = 2; /* after the converter's parse, before the model is built */
      CHECK_STATUS(nnrt_model_import_onnx_ex(ctx, onnx, NULL, o, &loaded), NNRT_ERR_CANCELLED, "abort callback");
      CHECK(loaded == NULL && counter.calls == 2);
      counter.stop_at = 0;
      CHECK_OK(nnrt_model_import_onnx_ex(ctx, onnx, NULL, o, &loaded));
      nnrt_model_release(loaded);
      loaded = NULL;
      unlink(onnx);
    }
    CHECK_OK(nnrt_run_options_cancel(o));
  }
  CHECK_OK(nnrt_model_load_ex(ctx, path, NULL, &loaded));
  nnrt_model_release(loaded);
  unlink(path);

  nnrt_run_options_release(o);
  nnrt_dataset_release(data);
  nnrt_array_release(labels);
  nnrt_array_release(x);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

/* ---- another thread cancels ------------------------------------------------------------------- */

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int mid_call = 0, cancel_sent = 0;

/* At its 4th check, the call tells the canceller it is mid-way and waits until the cancel is sent;
** then says "go on", so that only the other thread's cancel can stop it. */
static int wait_for_cancel(void *user) {
  int *checks = (int *)user;
  if (++*checks != 4) return 0;
  pthread_mutex_lock(&mutex);
  mid_call = 1;
  pthread_cond_broadcast(&changed);
  while (!cancel_sent) pthread_cond_wait(&changed, &mutex);
  pthread_mutex_unlock(&mutex);
  return 0;
}

static void *canceller(void *arg) {
  nnrt_run_options *o = (nnrt_run_options *)arg;
  struct timespec give_up;
  clock_gettime(CLOCK_REALTIME, &give_up);
  give_up.tv_sec += 30; /* a call that never asks: the test fails instead of hanging */
  pthread_mutex_lock(&mutex);
  while (!mid_call && pthread_cond_timedwait(&changed, &mutex, &give_up) == 0) {
  }
  nnrt_run_options_cancel(o);
  cancel_sent = 1;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&mutex);
  return NULL;
}

static void test_cancel_from_another_thread_mid_call(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = new_model(ctx, deep);
  nnrt_array *x = deep_input(ctx, 4), *y = NULL;
  nnrt_run_options *o = NULL;
  pthread_t t;
  int checks = 0;
  CHECK_OK(nnrt_run_options_create(&o));
  CHECK_OK(nnrt_run_options_set_abort_callback(o, wait_for_cancel, &checks));
  CHECK(pthread_create(&t, NULL, canceller, o) == 0);
  CHECK_STATUS(nnrt_model_predict_ex(m, x, o, &y), NNRT_ERR_CANCELLED, "cancelled by nnrt_run_options_cancel");
  pthread_join(t, NULL);
  CHECK(y == NULL && checks == 4);
  nnrt_array_release(x);
  nnrt_run_options_release(o);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

/* Predictors loop on one set of options while another thread cancels at a moment of its choosing:
** every call returns OK or CANCELLED, every predictor stops, and after a reset all work again. */
#define RACERS 3

typedef struct {
  nnrt_model *model;
  nnrt_array *x;
  nnrt_run_options *options;
  long ok, cancelled, other;
} racer;

static void *race(void *arg) {
  racer *r = (racer *)arg;
  time_t give_up = time(NULL) + 60; /* a cancel that never lands fails the test instead of hanging it */
  while (time(NULL) < give_up) {
    nnrt_array *y = NULL;
    nnrt_status s = nnrt_model_predict_ex(r->model, r->x, r->options, &y);
    nnrt_array_release(y);
    if (s == NNRT_OK) ++r->ok;
    else if (s == NNRT_ERR_CANCELLED) {
      ++r->cancelled;
      return NULL;
    } else {
      ++r->other;
      return NULL;
    }
  }
  ++r->other;
  return NULL;
}

static void test_canceller_races_predictions(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = new_model(ctx, deep);
  nnrt_array *x = deep_input(ctx, 8), *y = NULL;
  nnrt_run_options *o = NULL;
  racer r[RACERS];
  pthread_t t[RACERS];
  int i;
  CHECK_OK(nnrt_run_options_create(&o));
  for (i = 0; i < RACERS; ++i) {
    r[i].model = m;
    r[i].x = x;
    r[i].options = o;
    r[i].ok = r[i].cancelled = r[i].other = 0;
    CHECK(pthread_create(&t[i], NULL, race, &r[i]) == 0);
  }
  {
    struct timespec pause = {0, 20000000}; /* 20 ms of predictions before the cancel */
    nanosleep(&pause, NULL);
  }
  CHECK_OK(nnrt_run_options_cancel(o));
  for (i = 0; i < RACERS; ++i) {
    pthread_join(t[i], NULL);
    CHECK(r[i].cancelled == 1 && r[i].other == 0);
  }
  CHECK_OK(nnrt_run_options_reset(o));
  CHECK_OK(nnrt_model_predict_ex(m, x, o, &y));
  nnrt_array_release(y);
  nnrt_array_release(x);
  nnrt_run_options_release(o);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

/* ---- shared parameters ---------------------------------------------------------------------- */

/* 1024 -> 2048 -> 1024 -> 4: about 16.8 MB of parameters. */
static const char *wide =
    "{\"input\": [1024], \"seed\": 5, \"layers\": [{\"type\": \"dense\", \"units\": 2048, \"activation\": \"relu\"},"
    " {\"type\": \"dense\", \"units\": 1024, \"activation\": \"relu\"},"
    " {\"type\": \"output\", \"units\": 4, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";

static double resident_mb(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1e6;
}

/* Its own case, so that a sanitizer build can skip it: AddressSanitizer keeps freed memory
** resident in its quarantine (up to 256 MB), which no allocator of nnrt's controls. */
static void check_shared_residency(double grown) {
#if defined(__SANITIZE_ADDRESS__)
  (void)grown;
  C_TEST_SKIP("AddressSanitizer's quarantine keeps freed memory resident: the residency of shared models is "
              "measured in the release build");
#else
  /* Less than one copy of the parameters (16.8 MB); eight copies would be 134 MB. The instances'
  ** own plans and a fake GPU's staging take a few MB. */
  if (!C_TEST_RECORD(grown < 16)) fprintf(stderr, "8 shared instances grew resident memory by %.1f MB\n", grown);
  printf("8 shared instances of a 16.8 MB model: resident memory +%.1f MB\n", grown);
#endif
}

static void predict_wide(nnrt_model *m, const nnrt_array *x, float *y) {
  nnrt_array *out = NULL;
  CHECK_OK(nnrt_model_predict(m, x, &out));
  CHECK_OK(nnrt_array_to_host(out, y, 2 * 4 * sizeof(float)));
  nnrt_array_release(out);
}

/* Eight instances of one model cost its parameters once; training one, or setting a parameter of
** another, copies that model's parameters and changes nothing the others predict. */
static void test_shared_parameters_cost_once_and_copy_on_write(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *base = new_model(ctx, wide), *shares[8];
  nnrt_trainer *t = NULL;
  nnrt_array *x = NULL, *labels = NULL, *bias = NULL;
  static float xv[2 * 1024];
  float bias_values[4] = {1, -2, 3, -4};
  int64_t xs[2] = {2, 1024}, n = 2, bias_shape[1] = {4};
  int64_t label_values[2] = {1, 3};
  float before[8], after[8], trained[8], set[8];
  double rss0, loss = 0;
  int i;
  for (i = 0; i < 2 * 1024; ++i) xv[i] = (float)((i * 13) % 17) * 0.05f - 0.4f;
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xs, xv, sizeof xv, &x));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I64, 1, &n, label_values, sizeof label_values, &labels));
  predict_wide(base, x, before);
  rss0 = resident_mb();
  for (i = 0; i < 8; ++i) CHECK_OK(nnrt_model_share(i == 0 ? base : shares[i - 1], &shares[i]));
  for (i = 0; i < 8; ++i) {
    predict_wide(shares[i], x, after);
    CHECK(memcmp(before, after, sizeof before) == 0);
  }
  check_shared_residency(resident_mb() - rss0);
  { /* A share reports the same summary, placement of its ops included, without having predicted. */
    static char base_summary[1 << 16], share_summary[1 << 16];
    size_t len = 0;
    nnrt_model *fresh = NULL;
    CHECK_OK(nnrt_model_share(base, &fresh));
    CHECK_OK(nnrt_model_summary(base, base_summary, sizeof base_summary, &len));
    CHECK_OK(nnrt_model_summary(fresh, share_summary, sizeof share_summary, &len));
    CHECK(strcmp(base_summary, share_summary) == 0 && strstr(share_summary, "\"forward\":{\"matmul\"") != NULL);
    nnrt_model_release(fresh);
  }

  /* Train shares[3]: its parameters become its own. */
  CHECK_OK(nnrt_trainer_create(shares[3], "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.5}}", &t));
  CHECK_OK(nnrt_trainer_step(t, x, labels, &loss));
  CHECK_OK(nnrt_trainer_step(t, x, labels, &loss));
  predict_wide(shares[3], x, trained);
  CHECK(memcmp(before, trained, sizeof before) != 0);
  predict_wide(base, x, after);
  CHECK(memcmp(before, after, sizeof before) == 0);
  predict_wide(shares[7], x, after);
  CHECK(memcmp(before, after, sizeof before) == 0);
  /* Setting a parameter of shares[5] changes it alone. */
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, bias_shape, bias_values, sizeof bias_values, &bias));
  CHECK_OK(nnrt_model_set_param(shares[5], "layer2.bias", bias));
  predict_wide(shares[5], x, set);
  CHECK(memcmp(before, set, sizeof before) != 0);
  predict_wide(base, x, after);
  CHECK(memcmp(before, after, sizeof before) == 0);
  /* The base released first: the others keep the parameters. */
  nnrt_model_release(base);
  predict_wide(shares[0], x, after);
  CHECK(memcmp(before, after, sizeof before) == 0);
  CHECK_STATUS(nnrt_model_share(NULL, &base), NNRT_ERR_INVALID_ARGUMENT, "m is NULL");
  CHECK_STATUS(nnrt_model_share(shares[0], NULL), NNRT_ERR_INVALID_ARGUMENT, "out is NULL");
  nnrt_trainer_release(t);
  for (i = 0; i < 8; ++i) nnrt_model_release(shares[i]);
  nnrt_array_release(bias);
  nnrt_array_release(labels);
  nnrt_array_release(x);
  nnrt_context_release(ctx);
}

/* A large checkpoint's load stops while it is being read, not only between stages. */
static void test_a_load_stops_while_reading(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = new_model(ctx, wide), *loaded = NULL;
  nnrt_run_options *o = NULL;
  abort_counter counter = {0, 0};
  char path[] = "/tmp/nnrt-test-embedding-wide-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  CHECK_OK(nnrt_model_save(m, path));
  CHECK_OK(nnrt_run_options_create(&o));
  CHECK_OK(nnrt_run_options_set_abort_callback(o, count_checks, &counter));
  CHECK_OK(nnrt_model_load_ex(ctx, path, o, &loaded));
  nnrt_model_release(loaded);
  loaded = NULL;
  CHECK(counter.calls > 256); /* 16.8 MB read 64 KB at a time, a check before each read */
  counter.calls = 0;
  counter.stop_at = 100; /* 6.5 MB into the file */
  CHECK_STATUS(nnrt_model_load_ex(ctx, path, o, &loaded), NNRT_ERR_CANCELLED, "abort callback");
  CHECK(loaded == NULL && counter.calls == 100);
  unlink(path);
  nnrt_run_options_release(o);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

/* ---- mapped checkpoints ---------------------------------------------------------------------- */

/* How many of this process's mappings are of `path` (/proc/self/maps names the file). */
static int mappings_of(const char *path) {
  char line[4096];
  int n = 0;
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f)) n += strstr(line, path) != NULL;
  fclose(f);
  return n;
}

/* The largest absolute difference between two predictions of n values. */
static double max_difference(const float *a, const float *b, int n) {
  double most = 0;
  int i;
  for (i = 0; i < n; ++i) {
    double d = (double)a[i] - (double)b[i];
    if (d < 0) d = -d;
    if (d > most || d != d) most = d != d ? 1e30 : d;
  }
  return most;
}

/* Anonymous resident memory (RssAnon): what copies of parameters cost, unlike a file's mapped pages. */
static double anonymous_mb(void) {
  char line[256];
  double kb = 0;
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "RssAnon: %lf kB", &kb) == 1) break;
  fclose(f);
  return kb / 1e3;
}

static void check_mapped_residency(double grown) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)grown;
  C_TEST_SKIP("a sanitizer's own anonymous memory (AddressSanitizer's quarantine, ThreadSanitizer's shadow of "
              "every byte read) grows with the loads: the memory of mapped loads is measured in the release build");
#else
  /* Eight loads that copied would hold eight copies of 16.8 MB (134 MB) of anonymous memory. */
  if (!C_TEST_RECORD(grown < 16)) fprintf(stderr, "8 mapped loads grew anonymous memory by %.1f MB\n", grown);
  printf("8 loads of a 16.8 MB checkpoint: anonymous memory +%.1f MB\n", grown);
#endif
}

static void read_whole_file(const char *path, unsigned char *buf, size_t cap, size_t *len) {
  FILE *f = fopen(path, "rb");
  *len = 0;
  CHECK(f != NULL);
  if (!f) return;
  *len = fread(buf, 1, cap, f);
  fclose(f);
}

/* Models loaded from one file use its mapped pages as their parameters, on a host-memory backend:
** eight loads cost no anonymous memory per model, a write (set_param, training) copies the writer's
** parameters out of the mapping and changes neither the file nor the other models, the file may
** be replaced or deleted while mapped, and the mapping goes with the last model. With
** "map_checkpoints": false, or on a device backend, nothing stays mapped. */
static void test_loaded_parameters_are_the_files_pages(void) {
  static unsigned char file_before[17 << 20], file_after[17 << 20];
  static float xv[2 * 1024];
  char path[] = "/tmp/nnrt-test-embedding-mapped-XXXXXX";
  nnrt_context *ctx = new_context(), *unmapped_ctx = NULL;
  nnrt_model *m = new_model(ctx, wide), *loaded[8], *copied = NULL, *other = new_model(ctx, deep);
  nnrt_trainer *t = NULL;
  nnrt_array *x = NULL, *labels = NULL, *bias = NULL;
  float bias_values[4] = {1, -2, 3, -4}, before[8], after[8], mapped[8];
  int64_t xs[2] = {2, 1024}, n = 2, bias_shape[1] = {4}, label_values[2] = {1, 3};
  size_t len_before = 0, len_after = 0;
  double anon0, loss = 0;
  char options[256];
  int i, fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  for (i = 0; i < 2 * 1024; ++i) xv[i] = (float)((i * 7) % 19) * 0.04f - 0.3f;
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xs, xv, sizeof xv, &x));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I64, 1, &n, label_values, sizeof label_values, &labels));
  CHECK_OK(nnrt_model_save(m, path));
  read_whole_file(path, file_before, sizeof file_before, &len_before);
  predict_wide(m, x, before);
  nnrt_model_release(m);

  anon0 = anonymous_mb();
  for (i = 0; i < 8; ++i) CHECK_OK(nnrt_model_load(ctx, path, &loaded[i]));
  CHECK(mappings_of(path) == (lends ? 1 : 0)); /* one mapping, shared by the eight */
  if (lends) check_mapped_residency(anonymous_mb() - anon0);
  /* The loads predict what the saved model did. Within rounding only: the saved model's weights have
  ** rows padded in memory and the mapped ones the file's rows, and oneDNN's AVX-512 products sum in
  ** another order for another layout. The eight loads, all of one layout, agree bit for bit. */
  predict_wide(loaded[0], x, mapped);
  CHECK(max_difference(before, mapped, 8) < 1e-6);
  for (i = 1; i < 8; ++i) {
    predict_wide(loaded[i], x, after);
    CHECK(memcmp(mapped, after, sizeof mapped) == 0);
  }

  /* Writes copy the writer's parameters; the file and the other models keep theirs. */
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, bias_shape, bias_values, sizeof bias_values, &bias));
  CHECK_OK(nnrt_model_set_param(loaded[2], "layer2.bias", bias));
  predict_wide(loaded[2], x, after);
  CHECK(memcmp(before, after, sizeof before) != 0);
  CHECK_OK(nnrt_trainer_create(loaded[3], "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.5}}", &t));
  CHECK_OK(nnrt_trainer_step(t, x, labels, &loss));
  predict_wide(loaded[3], x, after);
  CHECK(memcmp(before, after, sizeof before) != 0);
  read_whole_file(path, file_after, sizeof file_after, &len_after);
  CHECK(len_before > 16000000 && len_before == len_after && memcmp(file_before, file_after, len_before) == 0);
  CHECK(mappings_of(path) == (lends ? 1 : 0)); /* six models still use it */

  /* Another model saved over the path (a rename) and the path deleted: the loaded ones do not change. */
  CHECK_OK(nnrt_model_save(other, path));
  unlink(path);
  for (i = 0; i < 8; ++i) {
    if (i == 2 || i == 3) continue;
    predict_wide(loaded[i], x, after);
    CHECK(memcmp(mapped, after, sizeof mapped) == 0);
  }
  /* The writers hold no part of the mapping: it goes with the six others. */
  for (i = 0; i < 8; ++i)
    if (i != 2 && i != 3) nnrt_model_release(loaded[i]);
  CHECK(mappings_of("nnrt-test-embedding-mapped") == 0);
  predict_wide(loaded[2], x, after);
  CHECK(memcmp(before, after, sizeof before) != 0);
  nnrt_trainer_release(t);
  nnrt_model_release(loaded[2]);
  nnrt_model_release(loaded[3]);

  /* Reading instead of mapping, as the option asks. */
  snprintf(options, sizeof options, "%.*s, \"map_checkpoints\": false}", (int)strlen(context_options) - 1,
           context_options);
  CHECK_OK(nnrt_context_create(options, &unmapped_ctx));
  m = new_model(ctx, wide);
  CHECK_OK(nnrt_model_save(m, path));
  predict_wide(m, x, before);
  CHECK_OK(nnrt_model_load(unmapped_ctx, path, &copied));
  CHECK(mappings_of(path) == 0);
  {
    nnrt_array *x2 = NULL;
    CHECK_OK(nnrt_array_from_host(unmapped_ctx, NNRT_DTYPE_F32, 2, xs, xv, sizeof xv, &x2));
    predict_wide(copied, x2, after);
    nnrt_array_release(x2);
  }
  CHECK(memcmp(before, after, sizeof before) == 0);
  CHECK_STATUS(nnrt_context_create("{\"map_checkpoints\": 1}", &unmapped_ctx), NNRT_ERR_INVALID_ARGUMENT,
               "map_checkpoints");
  unlink(path);
  nnrt_model_release(copied);
  nnrt_model_release(m);
  nnrt_model_release(other);
  nnrt_array_release(bias);
  nnrt_array_release(labels);
  nnrt_array_release(x);
  nnrt_context_release(unmapped_ctx);
  nnrt_context_release(ctx);
}

/* ---- idle ------------------------------------------------------------------------------------ */

static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
         (double)u.ru_stime.tv_usec * 1e-6;
}

static void sleep_seconds(double s) {
  struct timespec t;
  t.tv_sec = (time_t)s;
  t.tv_nsec = (long)((s - (double)t.tv_sec) * 1e9);
  nanosleep(&t, NULL);
}

/* A process that has predicted and now waits uses no CPU: no thread of nnrt's pool, of a backend's
** (OpenMP's, once its short spin ends) or of a prefetcher keeps polling. */
static void test_idle_process_uses_no_cpu(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = new_model(ctx, deep);
  nnrt_array *x = deep_input(ctx, 16);
  double before, used;
  int i;
  for (i = 0; i < 200; ++i) {
    nnrt_array *y = NULL;
    CHECK_OK(nnrt_model_predict(m, x, &y));
    nnrt_array_release(y);
  }
  sleep_seconds(0.2); /* spinning threads give up within milliseconds */
  before = cpu_seconds();
  sleep_seconds(1.0);
  used = cpu_seconds() - before;
  if (!C_TEST_RECORD(used < 0.05)) fprintf(stderr, "idle for 1 s, the process used %.3f s of CPU\n", used);
  nnrt_array_release(x);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

/* On a backend whose arrays are in device memory, wrapping is refused with the reason, release is
** never called, and predictions into an nnrt-made output and run options work as on the CPU. */
static void test_wrap_is_refused_on_device_memory(void) {
  nnrt_context *ctx;
  nnrt_model *m;
  nnrt_array *a = NULL, *x, *out = NULL, *y = NULL;
  nnrt_run_options *o = NULL;
  float buf[8] = {0}, got[6], want[6];
  int64_t shape[2] = {2, 4}, ys[2] = {2, 3};
  int released = 0;
  if (lends) return; /* a host-memory backend: the cases above */
  ctx = new_context();
  m = new_model(ctx, deep);
  x = deep_input(ctx, 2);
  CHECK_STATUS(nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 2, shape, NULL, buf, sizeof buf, count_release, &released, &a),
               NNRT_ERR_UNSUPPORTED, "use nnrt_array_from_host");
  CHECK(a == NULL && released == 0);
  CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, ys, &out));
  CHECK_OK(nnrt_model_predict_into(m, x, out, NULL));
  CHECK_OK(nnrt_array_to_host(out, got, sizeof got));
  CHECK_OK(nnrt_model_predict(m, x, &y));
  CHECK_OK(nnrt_array_to_host(y, want, sizeof want));
  CHECK(memcmp(got, want, sizeof got) == 0);
  CHECK_OK(nnrt_run_options_create(&o));
  CHECK_OK(nnrt_run_options_cancel(o));
  CHECK_STATUS(nnrt_model_predict_into(m, x, out, o), NNRT_ERR_CANCELLED, "cancelled");
  nnrt_run_options_release(o);
  nnrt_array_release(y);
  nnrt_array_release(out);
  nnrt_array_release(x);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

int main(int argc, char **argv) {
  if (argc > 1) context_options = argv[1];
  {
    nnrt_context *ctx = NULL;
    nnrt_array *probe = NULL;
    float one = 0;
    int64_t n = 1;
    if (nnrt_context_create(context_options, &ctx) == NNRT_OK &&
        nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, 1, &n, NULL, &one, sizeof one, NULL, NULL, &probe) ==
            NNRT_ERR_UNSUPPORTED) {
      lends = 0;
    }
    nnrt_array_release(probe);
    nnrt_context_release(ctx);
  }
  test_wrapped_input_and_output_are_used_in_place();
  test_strided_input_and_output();
  test_bad_wraps_and_outputs();
  test_wrap_is_refused_on_device_memory();
  test_output_in_the_input_memory();
  test_abort_callback_stops_mid_pass();
  test_cancel_reset_and_timeout();
  test_evaluate_and_load_stop();
  test_cancel_from_another_thread_mid_call();
  test_canceller_races_predictions();
  test_shared_parameters_cost_once_and_copy_on_write();
  test_a_load_stops_while_reading();
  test_loaded_parameters_are_the_files_pages();
  test_idle_process_uses_no_cpu();
  return c_test_finish("test_embedding");
}
