/* Many threads share one context: ops run concurrently, and each thread has its own last error. */
#include <pthread.h>

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
  nnrt_context_release(ctx);
  return c_test_finish("test_threads");
}
