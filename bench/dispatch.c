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
static double time_op(nnrt_context *ctx, const char *name, nnrt_array **in, int n_in, const char *attrs,
                      long iterations) {
  double start = 0;
  for (long i = -iterations / 10; i < iterations; ++i) { /* the first tenth warms the caches */
    nnrt_array *out = NULL;
    if (i == 0) start = now();
    if (nnrt_op(ctx, name, (const nnrt_array *const *)in, n_in, attrs, &out, 1) != NNRT_OK) return -1;
    nnrt_array_release(out);
  }
  return (now() - start) / (double)iterations * 1e6;
}

int main(int argc, char **argv) {
  long iterations = argc > 1 ? atol(argv[1]) : 200000;
  const char *backends[] = {"reference", "onednn"};
  float a[64];
  int64_t shape4[1] = {4}, shape8x8[2] = {8, 8};
  int i;
  for (i = 0; i < 64; ++i) a[i] = (float)i / 64;
  printf("%-28s %10s %10s\n", "nnrt_op (us per call)", backends[0], backends[1]);
  for (i = 0; i < 3; ++i) {
    const char *label = i == 0 ? "add f32[4]" : i == 1 ? "relu f32[4]" : "matmul 8x8x8";
    double us[2] = {-1, -1};
    int b;
    for (b = 0; b < 2; ++b) {
      char options[64];
      nnrt_context *ctx = NULL;
      nnrt_array *x = NULL, *y = NULL, *in[2];
      snprintf(options, sizeof options, "{\"backend\": \"%s\", \"threads\": 1}", backends[b]);
      if (nnrt_context_create(options, &ctx) != NNRT_OK) continue; /* that backend did not load */
      if (i < 2) {
        nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, shape4, a, sizeof(float) * 4, &x);
        nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, shape4, a, sizeof(float) * 4, &y);
      } else {
        nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape8x8, a, sizeof a, &x);
        nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape8x8, a, sizeof a, &y);
      }
      in[0] = x;
      in[1] = y;
      us[b] = time_op(ctx, i == 0 ? "add" : i == 1 ? "relu" : "matmul", in, i == 1 ? 1 : 2, NULL, iterations);
      nnrt_array_release(x);
      nnrt_array_release(y);
      nnrt_context_release(ctx);
    }
    printf("%-28s", label);
    for (b = 0; b < 2; ++b) {
      if (us[b] < 0) printf(" %10s", "n/a");
      else printf(" %10.2f", us[b]);
    }
    printf("\n");
  }
  return 0;
}
