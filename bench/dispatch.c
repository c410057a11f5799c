/* bench/dispatch: the cost of one nnrt_op call through the public C API on tiny arrays, where the
** work is nothing and the figure is nnrt's own overhead: argument checks, the attribute JSON, the
** op cache lookup (the primitive is created once), the output allocation from the memory cache and
** the backend's op_run. Compare with bench/ops, which times op_run alone.
**
**   dispatch [iterations]      prints microseconds per call for each backend that loads */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <nnrt/nnrt.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Microseconds per nnrt_op(name) on the given inputs, or -1 when the op fails. */
static double time_op(nnrt_context *ctx, const char *name, nnrt_array **in, int n_in, long iterations) {
  double start = 0;
  for (long i = -iterations / 10; i < iterations; ++i) { /* the first tenth warms the caches */
    nnrt_array *out = NULL;
    if (i == 0) start = now();
    if (nnrt_op(ctx, name, (const nnrt_array *const *)in, n_in, NULL, &out, 1) != NNRT_OK) return -1;
    nnrt_array_release(out);
  }
  return (now() - start) / (double)iterations * 1e6;
}

/* The timed calls: each input is `shape` (f32). */
static const struct {
  const char *label, *op;
  int n_inputs, ndim;
  int64_t shape[2];
} cases[] = {
    {"add f32[4]", "add", 2, 1, {4, 1}},
    {"relu f32[4]", "relu", 1, 1, {4, 1}},
    {"matmul 8x8x8", "matmul", 2, 2, {8, 8}},
};

int main(int argc, char **argv) {
  long iterations = argc > 1 ? atol(argv[1]) : 200000;
  const char *backends[] = {"reference", "onednn"};
  float a[64];
  size_t c;
  int i, b;
  for (i = 0; i < 64; ++i) a[i] = (float)i / 64;
  printf("%-28s %10s %10s\n", "nnrt_op (us per call)", backends[0], backends[1]);
  for (c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const size_t bytes = sizeof(float) * (size_t)(cases[c].shape[0] * (cases[c].ndim == 2 ? cases[c].shape[1] : 1));
    printf("%-28s", cases[c].label);
    for (b = 0; b < 2; ++b) {
      char options[64];
      nnrt_context *ctx = NULL;
      nnrt_array *in[2] = {NULL, NULL};
      double us = -1;
      snprintf(options, sizeof options, "{\"backend\": \"%s\", \"threads\": 1}", backends[b]);
      if (nnrt_context_create(options, &ctx) == NNRT_OK) { /* else that backend did not load */
        for (i = 0; i < cases[c].n_inputs; ++i)
          nnrt_array_from_host(ctx, NNRT_DTYPE_F32, cases[c].ndim, cases[c].shape, a, bytes, &in[i]);
        us = time_op(ctx, cases[c].op, in, cases[c].n_inputs, iterations);
        for (i = 0; i < cases[c].n_inputs; ++i) nnrt_array_release(in[i]);
        nnrt_context_release(ctx);
      }
      if (us < 0) printf(" %10s", "n/a");
      else printf(" %10.2f", us);
    }
    printf("\n");
  }
  return 0;
}
