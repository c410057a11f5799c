/* Early stopping (the trainer's "early_stopping" options): each stop condition ends fit with
** NNRT_OK and says so in nnrt_trainer_result, the model ends on its best epoch, and "save_best"
** keeps that model on disk. The data: two separable blobs, the model a small MLP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c_test.h"

#define N 64

static nnrt_context *ctx;
static nnrt_dataset *data, *regression;

static const char *mlp =
    "{\"input\": [4], \"seed\": 7, \"layers\": [{\"type\": \"dense\", \"units\": 8, \"activation\": \"tanh\"},"
    " {\"type\": \"output\", \"units\": 2, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";

/* A dataset of N examples of 4 features; labels are N i32 classes or N x 1 f32 targets. */
static nnrt_dataset *dataset_of(const float *x, nnrt_dtype label_dtype, const void *labels) {
  int64_t xs[2] = {N, 4}, ys[2] = {N, 1};
  nnrt_array *xa = NULL, *ya = NULL;
  nnrt_dataset *out = NULL;
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xs, x, sizeof(float) * N * 4, &xa));
  CHECK_OK(nnrt_array_from_host(ctx, label_dtype, label_dtype == NNRT_DTYPE_I32 ? 1 : 2, ys, labels, 4 * N, &ya));
  CHECK_OK(nnrt_dataset_from_arrays(ctx, xa, ya, &out));
  nnrt_array_release(xa);
  nnrt_array_release(ya);
  return out;
}

/* Two blobs: class 0 around -1, class 1 around +1 (deterministic). */
static nnrt_dataset *make_blobs(void) {
  static float x[N * 4];
  static int32_t y[N];
  unsigned s = 12345;
  int i, j;
  for (i = 0; i < N; ++i) {
    y[i] = i % 2;
    for (j = 0; j < 4; ++j) {
      s = s * 1103515245u + 12345u;
      x[i * 4 + j] = (y[i] ? 1.0f : -1.0f) + ((float)((s >> 16) & 0x7fff) / 32768.0f - 0.5f);
    }
  }
  return dataset_of(x, NNRT_DTYPE_I32, y);
}

/* A linear regression: the target is the sum of the 4 features. */
static nnrt_dataset *make_regression(void) {
  static float x[N * 4], y[N];
  int i;
  for (i = 0; i < N * 4; ++i) x[i] = (float)((i * 7) % 11) - 5.0f;
  for (i = 0; i < N; ++i) y[i] = x[i * 4] + x[i * 4 + 1] + x[i * 4 + 2] + x[i * 4 + 3];
  return dataset_of(x, NNRT_DTYPE_F32, y);
}

static const char *linear =
    "{\"input\": [4], \"seed\": 7, \"layers\": [{\"type\": \"output\", \"units\": 1, \"activation\": \"identity\","
    " \"loss\": \"mse\"}]}";

/* Trains a fresh model of `config` on `d` (also the validation set) for `epochs` and leaves the
** result JSON in buf. */
static nnrt_status train_on(const char *config, nnrt_dataset *d, const char *options, int32_t epochs, char *buf,
                            size_t cap, nnrt_model **model_out) {
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_status s;
  size_t len;
  buf[0] = 0;
  CHECK_OK(nnrt_model_create(ctx, config, &m));
  CHECK_OK(nnrt_trainer_create(m, options, &t));
  s = nnrt_trainer_fit(t, d, d, epochs);
  CHECK_OK(nnrt_trainer_result(t, buf, cap, &len));
  nnrt_trainer_release(t);
  if (model_out)
    *model_out = m;
  else
    nnrt_model_release(m);
  return s;
}

static nnrt_status train(const char *options, int32_t epochs, char *buf, size_t cap, nnrt_model **model_out) {
  return train_on(mlp, data, options, epochs, buf, cap, model_out);
}

static void expect(const char *result, const char *text) {
  CHECK(strstr(result, text) != NULL);
  if (!strstr(result, text)) fprintf(stderr, "  %s lacks %s\n", result, text);
}

static void test_patience(void) {
  char buf[4096];
  /* A learning rate too small to change the accuracy: the first epoch stays the best, and two
  ** epochs without improvement stop the run after epoch 2. */
  CHECK_OK(train("{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 1e-12}, \"batch_size\": 16,"
                 " \"early_stopping\": {\"metric\": \"accuracy\", \"patience\": 2}}",
                 20, buf, sizeof buf, NULL));
  expect(buf, "\"stop_reason\":\"patience\"");
  expect(buf, "\"epochs\":3");
  expect(buf, "\"best_epoch\":0");
  expect(buf, "\"metric\":\"accuracy\"");
}

static void test_max_epochs(void) {
  char buf[4096];
  CHECK_OK(train("{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01}, \"batch_size\": 16,"
                 " \"early_stopping\": {\"metric\": \"loss\", \"max_epochs\": 2}}",
                 10, buf, sizeof buf, NULL));
  expect(buf, "\"stop_reason\":\"max_epochs\"");
  expect(buf, "\"epochs\":2");
  expect(buf, "\"metric\":\"loss\"");
}

static void test_max_minutes(void) {
  char buf[4096];
  CHECK_OK(train("{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01}, \"batch_size\": 16,"
                 " \"early_stopping\": {\"max_minutes\": 1e-9}}",
                 1000, buf, sizeof buf, NULL));
  expect(buf, "\"stop_reason\":\"max_time\"");
}

static void test_invalid_score(void) {
  char buf[4096];
  /* A learning rate far too large for a regression: the weights and the loss overflow to inf and
  ** NaN, and training stops there, with NNRT_OK and the reason, rather than going on with garbage.
  ** (Datasets refuse NaN inputs outright.) */
  CHECK_OK(train_on(linear, regression,
                    "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 1000}, \"batch_size\": 16,"
                    " \"early_stopping\": {\"metric\": \"loss\", \"patience\": 5}}",
                    50, buf, sizeof buf, NULL));
  expect(buf, "\"stop_reason\":\"invalid_score\"");
}

static void test_save_best(const char *path) {
  char buf[4096];
  nnrt_model *trained = NULL, *loaded = NULL;
  nnrt_array *a = NULL, *b = NULL;
  float wa[32], wb[32];
  char options[512];
  remove(path);
  snprintf(options, sizeof options,
           "{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.05}, \"batch_size\": 16,"
           " \"early_stopping\": {\"metric\": \"loss\", \"patience\": 3, \"save_best\": \"%s\"}}",
           path);
  CHECK_OK(train(options, 12, buf, sizeof buf, &trained));
  CHECK(strstr(buf, "\"best_epoch\":null") == NULL);
  /* The model in memory ends on its best epoch, and the file holds that same model. */
  CHECK_OK(nnrt_model_load(ctx, path, &loaded));
  if (loaded) {
    CHECK_OK(nnrt_model_get_param(trained, "layer0.weight", &a));
    CHECK_OK(nnrt_model_get_param(loaded, "layer0.weight", &b));
    CHECK_OK(nnrt_array_to_host(a, wa, sizeof wa));
    CHECK_OK(nnrt_array_to_host(b, wb, sizeof wb));
    CHECK(memcmp(wa, wb, sizeof wa) == 0);
    nnrt_array_release(a);
    nnrt_array_release(b);
    nnrt_model_release(loaded);
  }
  nnrt_model_release(trained);
  remove(path);
}

static void test_bad_options(void) {
  nnrt_model *m = NULL;
  nnrt_trainer *keep = (nnrt_trainer *)0x1;
  CHECK_OK(nnrt_model_create(ctx, mlp, &m));
  CHECK_STATUS(nnrt_trainer_create(m, "{\"early_stopping\": {\"metric\": \"f1\"}}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "metric");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"early_stopping\": {\"patience\": -1}}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "patience");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"early_stopping\": {\"pateince\": 3}}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "pateince");
  CHECK(keep == (nnrt_trainer *)0x1);
  nnrt_model_release(m);
}

int main(int argc, char **argv) {
  char path[256];
  const char *base = getenv("TMPDIR");
  CHECK_OK(nnrt_context_create(argc > 1 ? argv[1] : NULL, &ctx));
  if (!ctx) return c_test_finish("test_early_stopping");
  snprintf(path, sizeof path, "%.200s/nnrt-best-%ld.safetensors", base && *base ? base : "/tmp",
           (long)getpid());
  data = make_blobs();
  regression = make_regression();
  test_patience();
  test_max_epochs();
  test_max_minutes();
  test_invalid_score();
  test_save_best(path);
  test_bad_options();
  nnrt_dataset_release(data);
  nnrt_dataset_release(regression);
  nnrt_context_release(ctx);
  return c_test_finish("test_early_stopping");
}
