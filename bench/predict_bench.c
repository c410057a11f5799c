/* Inference latency and throughput of nnrt, for bench/predict: builds LeNet (examples/lenet.json)
** or the MLP 784-1024-1024-10, times nnrt_model_predict on one batch again and again for a while,
** and prints one JSON line. With an ONNX path it first exports the model there, so that the peers
** run the very same weights.
**
**   predict_bench <lenet|mlp> <threads> <batch> <seconds | Ncalls> [model.onnx to write | ""] [backend]
**
** Each timed call is nnrt_model_predict and the copy of its output into host memory (what a caller
** reads); the input was made once, before, on the context's backend (on a GPU: device memory).
** "1000calls" for <seconds> makes exactly 1000 timed calls after the warm-up, whatever they take:
** for instruction counts under callgrind.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"

#include "lenet_example.h" /* NNRT_LENET_CONFIG */

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  char options[128];
  nnrt_context *ctx = NULL;
  nnrt_model *model = NULL;
  nnrt_array *x = NULL;
  float *pixels, *output;
  int64_t batch, i, n = 0, cap = 1 << 16, dims[4];
  int threads;
  long calls = 0;
  double seconds, start, *latencies;
  if (argc < 5) {
    fprintf(stderr, "usage: %s <lenet|mlp> <threads> <batch> <seconds | Ncalls> [model.onnx to write | \"\"] [backend]\n",
            argv[0]);
    return 2;
  }
  threads = atoi(argv[2]);
  batch = atol(argv[3]);
  seconds = atof(argv[4]);
  if (strstr(argv[4], "calls")) {
    calls = atol(argv[4]);
    if (calls < 1 || calls > cap) {
      fprintf(stderr, "%s: expected 1 to %ld calls, got %s\n", argv[0], (long)cap, argv[4]);
      return 2;
    }
  }
  snprintf(options, sizeof options, "{\"threads\": %d, \"backend\": \"%.32s\"}", threads, argc > 6 ? argv[6] : "auto");
  CHECK(nnrt_context_create(options, &ctx));
  CHECK(nnrt_model_create(ctx, strcmp(argv[1], "mlp") == 0 ? BENCH_MLP_CONFIG : NNRT_LENET_CONFIG, &model));
  if (argc > 5 && argv[5][0]) CHECK(nnrt_model_export_onnx(model, argv[5]));
  pixels = malloc(sizeof(float) * (size_t)batch * 784);
  output = malloc(sizeof(float) * (size_t)batch * 10);
  srand(7);
  for (i = 0; i < batch * 784; ++i) pixels[i] = (float)rand() / (float)RAND_MAX;
  dims[0] = batch, dims[1] = 1, dims[2] = 28, dims[3] = 28;
  CHECK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 4, dims, pixels, sizeof(float) * (size_t)batch * 784, &x));
  latencies = malloc(sizeof(double) * (size_t)cap);
  for (i = 0; i < 20; ++i) { /* warm-up: primitives, caches */
    nnrt_array *y = NULL;
    CHECK(nnrt_model_predict(model, x, &y));
    CHECK(nnrt_array_to_host(y, output, sizeof(float) * (size_t)batch * 10));
    nnrt_array_release(y);
  }
  start = bench_now();
  while (calls ? n < calls : n < cap && (bench_now() - start < seconds || n < 10)) {
    nnrt_array *y = NULL;
    double t = bench_now();
    CHECK(nnrt_model_predict(model, x, &y));
    CHECK(nnrt_array_to_host(y, output, sizeof(float) * (size_t)batch * 10));
    latencies[n++] = bench_now() - t;
    nnrt_array_release(y);
  }
  qsort(latencies, (size_t)n, sizeof(double), by_value);
  printf("{\"runtime\": \"nnrt %s\", \"model\": \"%s\", \"threads\": %d, \"batch\": %ld, \"calls\": %ld,"
         " \"latency_us\": %.1f, \"latency_p90_us\": %.1f, \"images_per_second\": %.1f}\n",
         nnrt_version_string(), argv[1], threads, (long)batch, (long)n, latencies[n / 2] * 1e6,
         latencies[n * 9 / 10] * 1e6, (double)batch / latencies[n / 2]);
  free(latencies);
  free(pixels);
  free(output);
  nnrt_array_release(x);
  nnrt_model_release(model);
  nnrt_context_release(ctx);
  return 0;
}
