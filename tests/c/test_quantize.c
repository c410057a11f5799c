/* int8 inference (nnrt_model_quantize): a calibrated copy of a float model whose dense and conv2d
** layers compute in integers. Checks that the quantized model predicts close to the float one, that
** its arithmetic is the documented one (recomputed here from its integer weights and scales), that
** it saves, loads and shares, and that what it cannot do is refused with the reason.
**
** argv[1], when given, is the context's options (the backend). */
#include <stdint.h>
#include <unistd.h>

#include "c_test.h"

static const char *context_options = "{\"threads\": 2}";

/* 1x12x12 images: two convolutions (the second grouped), a pooling, two dense layers. */
static const char *cnn =
    "{\"input\": [1, 12, 12], \"seed\": 11, \"layers\": ["
    "{\"type\": \"conv2d\", \"name\": \"c1\", \"filters\": 8, \"kernel\": 3, \"padding\": \"same\", \"activation\": \"relu\"},"
    "{\"type\": \"conv2d\", \"name\": \"c2\", \"filters\": 8, \"kernel\": 3, \"groups\": 2, \"stride\": 2, \"activation\": \"tanh\"},"
    "{\"type\": \"maxpool2d\", \"kernel\": 2},"
    "{\"type\": \"flatten\"},"
    "{\"type\": \"dense\", \"name\": \"d1\", \"units\": 16, \"activation\": \"relu\"},"
    "{\"type\": \"output\", \"units\": 4, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";

/* One dense layer whose input takes negative values (an I8 input), read out raw. */
static const char *linear =
    "{\"input\": [5], \"seed\": 5, \"layers\": [{\"type\": \"dense\", \"name\": \"d\", \"units\": 3}]}";

enum { kImages = 48, kPixels = 144 };

static nnrt_context *new_context(void) {
  nnrt_context *ctx = NULL;
  CHECK_OK(nnrt_context_create(context_options, &ctx));
  return ctx;
}

/* Uniform in [lo, hi) from a small LCG: the same numbers on every run. */
static float next_uniform(uint32_t *state, float lo, float hi) {
  *state = *state * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(*state >> 8) / 16777216.0f;
}

static nnrt_array *array_of(nnrt_context *ctx, int32_t ndim, const int64_t *shape, const float *values) {
  nnrt_array *a = NULL;
  int64_t n = 1;
  int32_t i;
  for (i = 0; i < ndim; ++i) n *= shape[i];
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, ndim, shape, values, (size_t)n * sizeof(float), &a));
  return a;
}

/* A dataset of `n` examples of `features` values (labels all 0). */
static nnrt_dataset *dataset_of(nnrt_context *ctx, const float *x, int64_t n, int32_t ndim, const int64_t *example) {
  int64_t shape[4] = {n, 1, 1, 1}, i;
  int64_t *labels = (int64_t *)calloc((size_t)n, sizeof(int64_t));
  nnrt_array *xa, *ya = NULL;
  nnrt_dataset *d = NULL;
  for (i = 0; i < ndim; ++i) shape[i + 1] = example[i];
  xa = array_of(ctx, ndim + 1, shape, x);
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I64, 1, &n, labels, (size_t)n * sizeof(int64_t), &ya));
  CHECK_OK(nnrt_dataset_from_arrays(ctx, xa, ya, &d));
  nnrt_array_release(xa);
  nnrt_array_release(ya);
  free(labels);
  return d;
}

static void predict(nnrt_context *ctx, nnrt_model *m, const float *x, int32_t ndim, const int64_t *shape, float *y,
                    size_t y_bytes) {
  nnrt_array *in = array_of(ctx, ndim, shape, x), *out = NULL;
  CHECK_OK(nnrt_model_predict(m, in, &out));
  CHECK_OK(nnrt_array_to_host(out, y, y_bytes));
  nnrt_array_release(out);
  nnrt_array_release(in);
}

/* A parameter's values as floats into `out` (room for `cap`); returns the count. */
static int64_t param_values(nnrt_model *m, const char *name, float *out, int64_t cap) {
  nnrt_array *p = NULL;
  size_t bytes = 0;
  if (nnrt_model_get_param(m, name, &p) != NNRT_OK) {
    CHECK_OK(nnrt_model_get_param(m, name, &p));
    return 0;
  }
  CHECK_OK(nnrt_array_nbytes(p, &bytes));
  CHECK(bytes <= (size_t)cap * sizeof(float));
  if (bytes <= (size_t)cap * sizeof(float)) CHECK_OK(nnrt_array_to_host(p, out, bytes));
  nnrt_array_release(p);
  return (int64_t)(bytes / sizeof(float));
}

static void make_images(float *x, int64_t n, uint32_t seed) {
  int64_t i;
  for (i = 0; i < n * kPixels; ++i) x[i] = next_uniform(&seed, 0.0f, 1.0f);
}

static void test_quantized_cnn_predicts_like_the_float_one(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = NULL, *q = NULL;
  nnrt_dataset *calibration;
  static float x[kImages * kPixels], w[1152];
  float yf[kImages * 4], yq[kImages * 4], worst = 0;
  int64_t shape[4] = {kImages, 1, 12, 12}, example[3] = {1, 12, 12}, i, n;
  int integral = 1, within = 1, agree = 0;
  char summary[65536];
  size_t len = 0;
  make_images(x, kImages, 1);
  CHECK_OK(nnrt_model_create(ctx, cnn, &m));
  calibration = dataset_of(ctx, x, kImages, 3, example);
  CHECK_OK(nnrt_model_quantize(m, calibration, "{\"batches\": 0, \"batch_size\": 16}", &q));
  if (!q) goto done;
  predict(ctx, m, x, 4, shape, yf, sizeof yf);
  predict(ctx, q, x, 4, shape, yq, sizeof yq);
  for (i = 0; i < kImages; ++i) {
    int j, af = 0, aq = 0;
    for (j = 0; j < 4; ++j) {
      float d = fabsf(yf[i * 4 + j] - yq[i * 4 + j]);
      if (d > worst) worst = d;
      if (yf[i * 4 + j] > yf[i * 4 + af]) af = j;
      if (yq[i * 4 + j] > yq[i * 4 + aq]) aq = j;
    }
    agree += af == aq;
  }
  printf("quantized CNN: largest probability difference %.4f, %d of %d top classes agree\n", worst, agree, kImages);
  CHECK(worst < 0.02f);
  CHECK(agree >= kImages - 2);
  /* The weights are integers within 7 bits, with a positive scale per filter. */
  n = param_values(q, "c2.weight", w, 1152);
  CHECK(n == 8 * 4 * 9);
  for (i = 0; i < n; ++i) {
    if (w[i] != floorf(w[i])) integral = 0;
    if (fabsf(w[i]) > 63) within = 0;
  }
  CHECK(integral && within);
  n = param_values(q, "c2.weight_scale", w, 1152);
  CHECK(n == 8);
  for (i = 0; i < n; ++i) CHECK(w[i] > 0);
  /* The summary shows the integer ops and the layers' quantization. */
  CHECK_OK(nnrt_model_summary(q, summary, sizeof summary, &len));
  CHECK(strstr(summary, "conv2d_int8") != NULL && strstr(summary, "matmul_int8") != NULL);
  CHECK(strstr(summary, "\"input_dtype\":\"u8\"") != NULL);
done:
  nnrt_dataset_release(calibration);
  nnrt_model_release(q);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

/* y = input_scale * weight_scale[u] * sum_k q(x_k) * w[u, k] + bias[u], with q(x) = round(x /
** input_scale) (half to even) clamped to I8: recomputed here from the model's own numbers. */
static void test_arithmetic_is_the_documented_one(const char *options, int32_t max_abs) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = NULL, *q = NULL;
  nnrt_dataset *calibration;
  float x[40], y[24], w[15], scale[3], bias[3], reach = 0, input_scale, expected;
  int64_t shape[2] = {8, 5}, example = 5, i, u, k;
  uint32_t seed = 3;
  int row_reaches_limit = 1;
  for (i = 0; i < 40; ++i) {
    x[i] = next_uniform(&seed, -2.0f, 1.5f);
    if (fabsf(x[i]) > reach) reach = fabsf(x[i]);
  }
  CHECK_OK(nnrt_model_create(ctx, linear, &m));
  calibration = dataset_of(ctx, x, 8, 1, &example);
  CHECK_OK(nnrt_model_quantize(m, calibration, options, &q));
  if (!q) goto done;
  predict(ctx, q, x, 2, shape, y, sizeof y);
  CHECK(param_values(q, "d.weight", w, 15) == 15);
  CHECK(param_values(q, "d.weight_scale", scale, 3) == 3);
  CHECK(param_values(q, "d.bias", bias, 3) == 3);
  input_scale = (float)(reach / 127.0);
  for (u = 0; u < 3; ++u) {
    float top = 0;
    for (k = 0; k < 5; ++k) top = fabsf(w[u * 5 + k]) > top ? fabsf(w[u * 5 + k]) : top;
    if (top != (float)max_abs) row_reaches_limit = 0;
  }
  CHECK(row_reaches_limit); /* each row's largest weight maps to the limit */
  for (i = 0; i < 8; ++i) {
    for (u = 0; u < 3; ++u) {
      int32_t acc = 0;
      for (k = 0; k < 5; ++k) {
        double v = nearbyint((double)x[i * 5 + k] / (double)(reach / 127.0));
        if (v > 127) v = 127;
        if (v < -128) v = -128;
        acc += (int32_t)v * (int32_t)w[u * 5 + k];
      }
      expected = input_scale * scale[u] * (float)acc + bias[u];
      CHECK_NEAR(y[i * 3 + u], expected, 1e-5 * (fabs(expected) + 1));
    }
  }
done:
  nnrt_dataset_release(calibration);
  nnrt_model_release(q);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

static void test_seven_bit_arithmetic(void) { test_arithmetic_is_the_documented_one("{}", 63); }
static void test_eight_bit_arithmetic(void) { test_arithmetic_is_the_documented_one("{\"weight_bits\": 8}", 127); }

static void test_saved_loaded_and_shared(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = NULL, *q = NULL, *loaded = NULL, *shared = NULL;
  nnrt_dataset *calibration;
  static float x[kImages * kPixels];
  float y[kImages * 4], y2[kImages * 4];
  int64_t shape[4] = {kImages, 1, 12, 12}, example[3] = {1, 12, 12};
  char path[] = "/tmp/nnrt_quantize_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  make_images(x, kImages, 2);
  CHECK_OK(nnrt_model_create(ctx, cnn, &m));
  calibration = dataset_of(ctx, x, kImages, 3, example);
  CHECK_OK(nnrt_model_quantize(m, calibration, "{\"exclude\": [\"c1\"]}", &q));
  if (!q) goto done;
  predict(ctx, q, x, 4, shape, y, sizeof y);
  CHECK_OK(nnrt_model_save(q, path));
  CHECK_OK(nnrt_model_load(ctx, path, &loaded));
  if (loaded) {
    predict(ctx, loaded, x, 4, shape, y2, sizeof y2);
    CHECK(memcmp(y, y2, sizeof y) == 0);
  }
  CHECK_OK(nnrt_model_share(q, &shared));
  if (shared) {
    predict(ctx, shared, x, 4, shape, y2, sizeof y2);
    CHECK(memcmp(y, y2, sizeof y) == 0);
  }
  {
    /* The excluded layer stays float: its weights are not all integers. */
    float w[72];
    int64_t i, n = param_values(q, "c1.weight", w, 72);
    int integral = 1;
    nnrt_array *scale = NULL;
    for (i = 0; i < n; ++i) integral &= w[i] == floorf(w[i]);
    CHECK(n == 72 && !integral);
    CHECK_STATUS(nnrt_model_get_param(q, "c1.weight_scale", &scale), NNRT_ERR_INVALID_ARGUMENT, "no parameter");
  }
done:
  unlink(path);
  nnrt_dataset_release(calibration);
  nnrt_model_release(shared);
  nnrt_model_release(loaded);
  nnrt_model_release(q);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

static void test_refusals(void) {
  nnrt_context *ctx = new_context();
  nnrt_model *m = NULL, *q = NULL, *again = NULL, *plain = NULL;
  nnrt_trainer *t = NULL;
  nnrt_dataset *calibration, *wrong;
  static float x[kImages * kPixels];
  int64_t example[3] = {1, 12, 12}, other[3] = {1, 10, 10};
  int8_t big[1152];
  nnrt_array *v = NULL;
  make_images(x, kImages, 3);
  CHECK_OK(nnrt_model_create(ctx, cnn, &m));
  calibration = dataset_of(ctx, x, kImages, 3, example);
  wrong = dataset_of(ctx, x, 4, 3, other);
  CHECK_STATUS(nnrt_model_quantize(NULL, calibration, NULL, &q), NNRT_ERR_INVALID_ARGUMENT, "m");
  CHECK_STATUS(nnrt_model_quantize(m, NULL, NULL, &q), NNRT_ERR_INVALID_ARGUMENT, "calibration");
  CHECK_STATUS(nnrt_model_quantize(m, calibration, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "out");
  CHECK_STATUS(nnrt_model_quantize(m, calibration, "{\"bits\": 8}", &q), NNRT_ERR_INVALID_ARGUMENT, "bits");
  CHECK_STATUS(nnrt_model_quantize(m, calibration, "{\"weight_bits\": 4}", &q), NNRT_ERR_INVALID_ARGUMENT,
               "weight_bits");
  CHECK_STATUS(nnrt_model_quantize(m, calibration, "{\"exclude\": [\"nope\"]}", &q), NNRT_ERR_INVALID_ARGUMENT,
               "nope");
  CHECK_STATUS(nnrt_model_quantize(m, calibration, "{\"exclude\": [\"c1\", \"c2\", \"d1\"]}", &q),
               NNRT_ERR_INVALID_ARGUMENT, "no dense or conv2d");
  CHECK_STATUS(nnrt_model_quantize(m, wrong, NULL, &q), NNRT_ERR_SHAPE, "calibration");
  CHECK_OK(nnrt_model_create(ctx, "{\"input\": [3], \"layers\": [{\"type\": \"activation\", \"activation\": \"relu\"}]}",
                             &plain));
  CHECK_STATUS(nnrt_model_quantize(plain, calibration, NULL, &again), NNRT_ERR_INVALID_ARGUMENT, "no dense or conv2d");
  CHECK_OK(nnrt_model_quantize(m, calibration, NULL, &q));
  if (!q) goto done;
  CHECK_STATUS(nnrt_model_quantize(q, calibration, NULL, &again), NNRT_ERR_UNSUPPORTED, "already quantized");
  CHECK_STATUS(nnrt_trainer_create(q, "{\"optimizer\": {\"type\": \"sgd\"}}", &t), NNRT_ERR_UNSUPPORTED, "quantized to int8");
  CHECK_STATUS(nnrt_model_export_onnx(q, "/tmp/nnrt_quantize_refused.onnx"), NNRT_ERR_UNSUPPORTED, "int8");
  /* A quantized weight takes i8 values within its 7 bits. */
  memset(big, 0, sizeof big);
  big[5] = 64;
  {
    int64_t wshape[4] = {8, 4, 3, 3};
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I8, 4, wshape, big, 8 * 4 * 9, &v));
    CHECK_STATUS(nnrt_model_set_param(q, "c2.weight", v), NNRT_ERR_INVALID_ARGUMENT, "[-63, 63]");
    nnrt_array_release(v);
    v = NULL;
    big[5] = -63;
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I8, 4, wshape, big, 8 * 4 * 9, &v));
    CHECK_OK(nnrt_model_set_param(q, "c2.weight", v));
    nnrt_array_release(v);
    v = NULL;
  }
  {
    int64_t wshape[4] = {8, 4, 3, 3};
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 4, wshape, x, 8 * 4 * 9 * sizeof(float), &v));
    CHECK_STATUS(nnrt_model_set_param(q, "c2.weight", v), NNRT_ERR_DTYPE, "i8");
  }
  nnrt_array_release(v);
done:
  nnrt_trainer_release(t);
  nnrt_dataset_release(wrong);
  nnrt_dataset_release(calibration);
  nnrt_model_release(again);
  nnrt_model_release(plain);
  nnrt_model_release(q);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
}

int main(int argc, char **argv) {
  if (argc > 1) context_options = argv[1];
  test_quantized_cnn_predicts_like_the_float_one();
  test_seven_bit_arithmetic();
  test_eight_bit_arithmetic();
  test_saved_loaded_and_shared();
  test_refusals();
  return c_test_finish("test_quantize");
}
