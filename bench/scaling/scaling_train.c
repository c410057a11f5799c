/* Training throughput for bench/scaling/run: trains LeNet or the MLP 784-1024-1024-10 on synthetic
** 28x28 images for a number of epochs and prints one line (rank 0 only) with images/s.
**
**   scaling_train <lenet|mlp> <threads> <examples> <epochs> '<extra trainer options, JSON members>'
**
** e.g. scaling_train mlp 1 4096 2 '"workers": 2, "mode": "average", "averaging_frequency": 5'.
** Under mpirun add '"distributed": {"comm": "mpi"}': each rank then trains on its shard. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bench_common.h"

#include "lenet_example.h" /* NNRT_LENET_CONFIG: examples/lenet.json, embedded by the build */

/* With "distributed" in "allreduce" mode: how long the ends of backward waited for all-reduces
** still running (over all fits so far); 0 otherwise. */
static double comm_wait_seconds(const nnrt_trainer *t) {
  static char result[1 << 16];
  size_t len = 0;
  const char *key = "\"comm_wait_seconds\":", *at;
  CHECK(nnrt_trainer_result(t, result, sizeof result, &len));
  at = strstr(result, key);
  return at ? atof(at + strlen(key)) : 0.0;
}

int main(int argc, char **argv) {
  char context_options[128], options[1024];
  nnrt_context *ctx = NULL;
  nnrt_model *model = NULL;
  nnrt_trainer *trainer = NULL;
  nnrt_dataset *data = NULL;
  nnrt_array *x = NULL, *y = NULL;
  float *pixels;
  int32_t *labels, rank = 0, world = 1;
  int64_t n, i, xs[4], ys[1];
  int threads, epochs;
  double start, seconds, waited_in_warm_up;
  if (argc < 6) {
    fprintf(stderr, "usage: %s <lenet|mlp> <threads> <examples> <epochs> '<trainer option members>'\n", argv[0]);
    return 2;
  }
  threads = atoi(argv[2]);
  n = atol(argv[3]);
  epochs = atoi(argv[4]);
  snprintf(context_options, sizeof context_options, "{\"threads\": %d}", threads);
  CHECK(nnrt_context_create(context_options, &ctx));
  pixels = malloc(sizeof(float) * (size_t)n * 784);
  labels = malloc(sizeof(int32_t) * (size_t)n);
  srand(7);
  for (i = 0; i < n * 784; ++i) pixels[i] = (float)rand() / (float)RAND_MAX;
  for (i = 0; i < n; ++i) labels[i] = (int32_t)(i % 10);
  xs[0] = n, xs[1] = 1, xs[2] = 28, xs[3] = 28, ys[0] = n;
  CHECK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 4, xs, pixels, sizeof(float) * (size_t)n * 784, &x));
  CHECK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, ys, labels, sizeof(int32_t) * (size_t)n, &y));
  CHECK(nnrt_dataset_from_arrays(ctx, x, y, &data));
  CHECK(nnrt_model_create(ctx, strcmp(argv[1], "mlp") == 0 ? BENCH_MLP_CONFIG : NNRT_LENET_CONFIG, &model));
  snprintf(options, sizeof options,
           "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.01, \"momentum\": 0.9}, \"batch_size\": 64,"
           " \"seed\": 1%s%s}", argv[5][0] ? ", " : "", argv[5]);
  CHECK(nnrt_trainer_create(model, options, &trainer));
  CHECK(nnrt_trainer_rank(trainer, &rank, &world));
  CHECK(nnrt_trainer_fit(trainer, data, NULL, 1)); /* warm-up: caches, primitives */
  waited_in_warm_up = comm_wait_seconds(trainer);
  start = bench_now();
  CHECK(nnrt_trainer_fit(trainer, data, NULL, epochs));
  seconds = bench_now() - start;
  if (rank == 0) {
    printf("%s threads=%d ranks=%d images/s=%.1f seconds=%.3f comm_wait_seconds=%.4f options={%s}\n", argv[1],
           threads, world, (double)n * epochs / seconds, seconds, comm_wait_seconds(trainer) - waited_in_warm_up,
           argv[5]);
  }
  nnrt_trainer_release(trainer);
  nnrt_model_release(model);
  nnrt_dataset_release(data);
  nnrt_array_release(x);
  nnrt_array_release(y);
  nnrt_context_release(ctx);
  free(pixels);
  free(labels);
  return 0;
}
