/* bench/sgemm_peak: the fp32 matrix-multiply rate this machine reaches, measured with OpenBLAS's
** cblas_sgemm on square matrices, as the yardstick bench/lenet divides useful FLOP/s by (the
** practical fp32 FMA peak: a tuned sgemm runs close to the FMA units' limit, and no clock or
** turbo figure has to be trusted). Prints one JSON line, with the kernel OpenBLAS chose ("core").
**
**     build/bench/sgemm_peak THREADS
*/
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"

/* The best rate of a few products of n x n matrices, after one to warm up. */
static double best_gflops(int n) {
  float *a = malloc(sizeof(float) * (size_t)n * (size_t)n), *b = malloc(sizeof(float) * (size_t)n * (size_t)n),
        *c = malloc(sizeof(float) * (size_t)n * (size_t)n);
  double best = 0;
  if (!a || !b || !c) {
    fprintf(stderr, "sgemm_peak: out of memory for n = %d\n", n);
    exit(1);
  }
  for (size_t i = 0; i < (size_t)n * (size_t)n; ++i) {
    a[i] = (float)(i % 7) * 0.125f;
    b[i] = (float)(i % 5) * 0.25f;
  }
  for (int rep = 0; rep < 6; ++rep) {
    double start = bench_now(), seconds;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a, n, b, n, 0.f, c, n);
    seconds = bench_now() - start;
    if (rep > 0 && 2.0 * n * n * n / seconds * 1e-9 > best) best = 2.0 * n * n * n / seconds * 1e-9;
  }
  free(a);
  free(b);
  free(c);
  return best;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  double best = 0;
  int best_n = 0;
  static const int sizes[] = {512, 1024, 2048};
  if (threads < 1) {
    fprintf(stderr, "usage: sgemm_peak THREADS (a count >= 1; got %s)\n", argc > 1 ? argv[1] : "nothing");
    return 2;
  }
  openblas_set_num_threads(threads);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    double g = best_gflops(sizes[i]);
    if (g > best) {
      best = g;
      best_n = sizes[i];
    }
  }
  /* The kernel OpenBLAS picked for this CPU: one without the CPU's widest vectors (a VM can hide the
  ** model it would recognise) makes a low yardstick, and bench/lenet says so. */
  printf("{\"runtime\": \"openblas sgemm\", \"threads\": %d, \"n\": %d, \"gflops\": %.1f, \"core\": \"%s\"}\n",
         threads, best_n, best, openblas_get_corename());
  return 0;
}
