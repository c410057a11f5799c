/* Training while other threads predict, on one context (run under ThreadSanitizer too):
**  - three threads predict on model A and one on model B, without pause, while two threads train A
**    and B: each fit must finish (a reader-preferring lock let the predictors starve the trainer);
**  - nnrt_trainer_cancel from another thread while fit runs and predictors hammer the model: fit
**    returns NNRT_ERR_CANCELLED;
**  - handles released in any order while work is in flight on the objects they kept alive. */
#include <pthread.h>
#include <stdlib.h>

#include "c_test.h"

#define EXAMPLES 256
#define PREDICTORS 3

static const char *mlp =
    "{\"input\": [4], \"seed\": 7, \"layers\": [{\"type\": \"dense\", \"units\": 16, \"activation\": \"tanh\"},"
    " {\"type\": \"output\", \"units\": 2, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int stop_predicting = 0;

static int stopped(void) {
  int s;
  pthread_mutex_lock(&mutex);
  s = stop_predicting;
  pthread_mutex_unlock(&mutex);
  return s;
}

typedef struct {
  nnrt_model *model;
  const nnrt_array *x;
  long predictions, failures;
} predictor;

static void *predict_loop(void *arg) {
  predictor *p = (predictor *)arg;
  while (!stopped()) {
    nnrt_array *y = NULL;
    if (nnrt_model_predict(p->model, p->x, &y) != NNRT_OK) ++p->failures;
    nnrt_array_release(y);
    ++p->predictions;
  }
  return NULL;
}

typedef struct {
  nnrt_trainer *trainer;
  nnrt_dataset *data;
  int32_t epochs;
  nnrt_status status;
  long batches; /* seen by the progress callback, under `mutex` */
} fitter;

static int count_batch(const nnrt_progress *p, void *user) {
  fitter *f = (fitter *)user;
  if (!p->epoch_end) {
    pthread_mutex_lock(&mutex);
    ++f->batches;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mutex);
  }
  return 0;
}

static void *fit_thread(void *arg) {
  fitter *f = (fitter *)arg;
  f->status = nnrt_trainer_fit(f->trainer, f->data, NULL, f->epochs);
  return NULL;
}

static void make_blobs(float *x, int32_t *y) {
  int i, j;
  unsigned s = 99;
  for (i = 0; i < EXAMPLES; ++i) {
    y[i] = i % 2;
    for (j = 0; j < 4; ++j) {
      s = s * 1103515245u + 12345u;
      x[i * 4 + j] = (y[i] ? 1.0f : -1.0f) + ((float)((s >> 16) & 0x7fff) / 32768.0f - 0.5f);
    }
  }
}

int main(int argc, char **argv) {
  static float xv[EXAMPLES * 4];
  static int32_t yv[EXAMPLES];
  int64_t xs[2] = {EXAMPLES, 4}, ys[1] = {EXAMPLES}, bs[2] = {32, 4};
  nnrt_context *ctx = NULL;
  nnrt_array *x = NULL, *y = NULL, *batch = NULL;
  nnrt_dataset *data = NULL;
  nnrt_model *a = NULL, *b = NULL;
  nnrt_trainer *ta = NULL, *tb = NULL;
  pthread_t pred_threads[PREDICTORS + 1], fit_a, fit_b;
  predictor preds[PREDICTORS + 1];
  fitter fa, fb;
  long predictions = 0;
  int i;

  make_blobs(xv, yv);
  CHECK_OK(nnrt_context_create(argc > 1 ? argv[1] : "{\"threads\": 2}", &ctx));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xs, xv, sizeof xv, &x));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, ys, yv, sizeof yv, &y));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, bs, xv, 32 * 4 * sizeof(float), &batch));
  CHECK_OK(nnrt_dataset_from_arrays(ctx, x, y, &data));
  CHECK_OK(nnrt_model_create(ctx, mlp, &a));
  CHECK_OK(nnrt_model_create(ctx, mlp, &b));
  CHECK_OK(nnrt_trainer_create(a, "{\"batch_size\": 8, \"prefetch\": 2}", &ta));
  CHECK_OK(nnrt_trainer_create(b, "{\"batch_size\": 8, \"prefetch\": 0}", &tb));
  if (c_test_failures) return c_test_finish("test_concurrency");

  /* Part 1: two fits of 3 epochs (96 steps each) while four threads predict without pause. */
  for (i = 0; i <= PREDICTORS; ++i) {
    preds[i].model = i < PREDICTORS ? a : b;
    preds[i].x = batch;
    preds[i].predictions = preds[i].failures = 0;
    CHECK(pthread_create(&pred_threads[i], NULL, predict_loop, &preds[i]) == 0);
  }
  fa.trainer = ta;
  fa.data = data;
  fa.epochs = 3;
  fa.batches = 0;
  fb = fa;
  fb.trainer = tb;
  CHECK_OK(nnrt_trainer_set_progress(ta, count_batch, &fa));
  CHECK_OK(nnrt_trainer_set_progress(tb, count_batch, &fb));
  CHECK(pthread_create(&fit_a, NULL, fit_thread, &fa) == 0);
  CHECK(pthread_create(&fit_b, NULL, fit_thread, &fb) == 0);
  /* Released while its objects are in use: arrays, models and datasets keep it alive. */
  nnrt_context_release(ctx);
  pthread_join(fit_a, NULL);
  pthread_join(fit_b, NULL);
  CHECK(fa.status == NNRT_OK && fb.status == NNRT_OK);
  CHECK(fa.batches == 3 * EXAMPLES / 8 && fb.batches == 3 * EXAMPLES / 8);

  /* Part 2: cancel from this thread while fit runs (the predictors still at it). */
  fa.epochs = 1000000;
  fa.batches = 0;
  CHECK(pthread_create(&fit_a, NULL, fit_thread, &fa) == 0);
  pthread_mutex_lock(&mutex);
  while (fa.batches < 5) pthread_cond_wait(&changed, &mutex);
  pthread_mutex_unlock(&mutex);
  CHECK_OK(nnrt_trainer_cancel(ta));
  pthread_join(fit_a, NULL);
  CHECK(fa.status == NNRT_ERR_CANCELLED);

  pthread_mutex_lock(&mutex);
  stop_predicting = 1;
  pthread_mutex_unlock(&mutex);
  for (i = 0; i <= PREDICTORS; ++i) {
    pthread_join(pred_threads[i], NULL);
    CHECK(preds[i].failures == 0);
    predictions += preds[i].predictions;
  }
  printf("test_concurrency: %ld + %ld training steps and a cancelled fit (%ld steps) beside %ld predictions\n",
         (long)(3 * EXAMPLES / 8), (long)(3 * EXAMPLES / 8), fa.batches, predictions);

  /* Release order: the trainers after the handles they depend on. */
  nnrt_dataset_release(data);
  nnrt_model_release(a);
  nnrt_model_release(b);
  nnrt_array_release(x);
  nnrt_array_release(y);
  nnrt_array_release(batch);
  nnrt_trainer_release(tb);
  nnrt_trainer_release(ta);
  return c_test_finish("test_concurrency");
}
