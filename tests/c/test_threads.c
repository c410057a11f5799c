/* Many threads share one context: ops run concurrently, and each thread has its own last error.
** Datasets and evaluations are immutable, so threads share them too (nnrt.h, "Thread safety"):
** trainers on several threads fit on one dataset and evaluate on it, then threads read one
** evaluation, and every result equals that of the same work done on one thread. */
#include <pthread.h>
#include <stdlib.h>

#include "c_test.h"

#define THREADS 8
#define ROUNDS 50

static nnrt_context *ctx;

typedef struct {
  int id;
  int failures;
  int own_error_seen;
} worker_state;

static void *worker(void *arg) {
  worker_state *w = (worker_state *)arg;
  int64_t shape[2] = {16, 16};
  float a_[256], got[256];
  int r, i;
  for (i = 0; i < 256; ++i) a_[i] = (float)(w->id * 1000 + i);
  for (r = 0; r < ROUNDS; ++r) {
    nnrt_array *a = NULL, *s = NULL, *m = NULL;
    const nnrt_array *in[2];
    if (nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape, a_, sizeof a_, &a) != NNRT_OK) {
      ++w->failures;
      continue;
    }
    in[0] = a;
    in[1] = a;
    if (nnrt_op(ctx, "add", in, 2, NULL, &s, 1) != NNRT_OK) ++w->failures;
    if (nnrt_op(ctx, "matmul", in, 2, NULL, &m, 1) != NNRT_OK) ++w->failures;
    if (s && nnrt_array_to_host(s, got, sizeof got) == NNRT_OK) {
      for (i = 0; i < 256; ++i)
        if (got[i] != 2 * a_[i]) ++w->failures;
    }
    /* A failure on this thread sets this thread's message only. */
    if (nnrt_op(ctx, "no_such_op", in, 1, NULL, &s, 1) != NNRT_ERR_UNSUPPORTED) ++w->failures;
    if (strstr(nnrt_last_error(), "no_such_op")) ++w->own_error_seen;
    nnrt_array_release(a);
    nnrt_array_release(s);
    nnrt_array_release(m);
  }
  return NULL;
}

#define SHARERS 4
#define EXAMPLES 96

static nnrt_dataset *shared_data;
static nnrt_evaluation *shared_eval;
static const char *blob_model =
    "{\"input\": [3], \"seed\": 9, \"layers\": [{\"type\": \"dense\", \"units\": 8, \"activation\": \"tanh\"},"
    " {\"type\": \"output\", \"units\": 3, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";

typedef struct {
  char report[8192]; /* the evaluation report after training, "" on failure */
  int failures;
} sharer_state;

/* Trains a fresh model on the shared dataset and evaluates it there; keeps the report. */
static void *train_on_shared_dataset(void *arg) {
  sharer_state *w = (sharer_state *)arg;
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_evaluation *e = NULL;
  size_t len = 0;
  int64_t n = 0;
  w->report[0] = 0;
  if (nnrt_model_create(ctx, blob_model, &m) != NNRT_OK ||
      nnrt_trainer_create(m, "{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.05}, \"batch_size\": 16,"
                             " \"seed\": 4}", &t) != NNRT_OK ||
      nnrt_trainer_fit(t, shared_data, shared_data, 3) != NNRT_OK || nnrt_dataset_size(shared_data, &n) != NNRT_OK ||
      nnrt_model_evaluate(m, shared_data, &e) != NNRT_OK ||
      nnrt_evaluation_report(e, w->report, sizeof w->report, &len) != NNRT_OK || len >= sizeof w->report) {
    fprintf(stderr, "sharer: %s\n", nnrt_last_error());
    ++w->failures;
  }
  if (n != EXAMPLES) ++w->failures;
  nnrt_evaluation_release(e);
  nnrt_trainer_release(t);
  nnrt_model_release(m);
  return NULL;
}

/* Reads the shared evaluation many times; it must say the same every time. */
static void *read_shared_evaluation(void *arg) {
  sharer_state *w = (sharer_state *)arg;
  char report[8192];
  double accuracy = -1, first = -1;
  size_t len = 0;
  int r;
  for (r = 0; r < ROUNDS; ++r) {
    if (nnrt_evaluation_accuracy(shared_eval, &accuracy) != NNRT_OK ||
        nnrt_evaluation_report(shared_eval, report, sizeof report, &len) != NNRT_OK || strcmp(report, w->report) != 0) {
      ++w->failures;
    }
    if (r == 0) first = accuracy;
    if (accuracy != first) ++w->failures;
  }
  return NULL;
}

static void test_shared_dataset_and_evaluation(void) {
  float x[EXAMPLES * 3];
  int32_t y[EXAMPLES];
  int64_t xs[2] = {EXAMPLES, 3}, ys[1] = {EXAMPLES};
  nnrt_array *xa = NULL, *ya = NULL;
  pthread_t threads[SHARERS];
  sharer_state *alone = calloc(1, sizeof *alone), *states = calloc(SHARERS, sizeof *states);
  unsigned seed = 77;
  size_t len = 0;
  int i, j;
  for (i = 0; i < EXAMPLES; ++i) {
    y[i] = i % 3;
    for (j = 0; j < 3; ++j) {
      seed = seed * 1103515245u + 12345u;
      x[i * 3 + j] = (j == y[i] ? 1.5f : 0.0f) + ((float)((seed >> 16) & 0x7fff) / 32768.0f - 0.5f);
    }
  }
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xs, x, sizeof x, &xa));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, ys, y, sizeof y, &ya));
  CHECK_OK(nnrt_dataset_from_arrays(ctx, xa, ya, &shared_data));
  /* The work done on one thread: what every thread must get. */
  train_on_shared_dataset(alone);
  CHECK(alone->failures == 0 && strstr(alone->report, "\"accuracy\"") != NULL);
  for (i = 0; i < SHARERS; ++i) CHECK(pthread_create(&threads[i], NULL, train_on_shared_dataset, &states[i]) == 0);
  for (i = 0; i < SHARERS; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(states[i].failures == 0);
    CHECK(strcmp(states[i].report, alone->report) == 0);
  }
  /* One evaluation read by many threads. */
  {
    nnrt_model *m = NULL;
    CHECK_OK(nnrt_model_create(ctx, blob_model, &m));
    CHECK_OK(nnrt_model_evaluate(m, shared_data, &shared_eval));
    nnrt_model_release(m);
  }
  for (i = 0; i < SHARERS; ++i) {
    states[i].failures = 0;
    CHECK_OK(nnrt_evaluation_report(shared_eval, states[i].report, sizeof states[i].report, &len));
    CHECK(pthread_create(&threads[i], NULL, read_shared_evaluation, &states[i]) == 0);
  }
  for (i = 0; i < SHARERS; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(states[i].failures == 0);
  }
  nnrt_evaluation_release(shared_eval);
  nnrt_dataset_release(shared_data);
  nnrt_array_release(xa);
  nnrt_array_release(ya);
  free(alone);
  free(states);
}

int main(int argc, char **argv) {
  pthread_t threads[THREADS];
  worker_state states[THREADS];
  int i;
  CHECK_OK(nnrt_context_create(argc > 1 ? argv[1] : "{\"threads\": 2}", &ctx));
  for (i = 0; i < THREADS; ++i) {
    states[i].id = i;
    states[i].failures = 0;
    states[i].own_error_seen = 0;
    CHECK(pthread_create(&threads[i], NULL, worker, &states[i]) == 0);
  }
  for (i = 0; i < THREADS; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(states[i].failures == 0);
    CHECK(states[i].own_error_seen == ROUNDS);
  }
  /* The main thread made no failing call: its message is still empty. */
  CHECK(strcmp(nnrt_last_error(), "") == 0);
  test_shared_dataset_and_evaluation();
  nnrt_context_release(ctx);
  return c_test_finish("test_threads");
}
