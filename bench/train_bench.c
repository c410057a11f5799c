/* Training throughput of nnrt on Fashion-MNIST, for bench/lenet: trains one model for some epochs
** and prints one JSON line with images/s, test accuracy and peak RSS.
**
**   train_bench <lenet|mlp> <data folder> <epochs> <threads> [backend] [limit] [precision] [batch] [warmup]
**
** warmup > 0 first trains that many untimed steps (plus the timed epochs' last, partial batch), so
** that plans, kernels and caches built at first use are not in the figure (bench/gpu sets it, as
** its PyTorch peer warms up too); by default the first steps are timed.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_common.h"

#include "lenet_example.h"

static const char *lenet = NNRT_LENET_CONFIG; /* examples/lenet.json */

int main(int argc, char **argv) {
  const char *which, *dir, *backend, *precision;
  int epochs, threads, batch, warmup;
  long limit;
  char options[256], spec[1024], limit_text[64] = "", trainer_options[512];
  nnrt_context *ctx = NULL;
  nnrt_model *model = NULL;
  nnrt_trainer *trainer = NULL;
  nnrt_dataset *train = NULL, *test = NULL, *warm = NULL;
  nnrt_evaluation *eval = NULL;
  int64_t examples = 0;
  double accuracy = 0, start, seconds;
  struct rusage usage;
  char result[16384];
  size_t len;

  if (argc < 5) {
    fprintf(stderr, "usage: %s <lenet|mlp> <data folder> <epochs> <threads> [backend] [limit] [precision] [batch] [warmup]\n",
            argv[0]);
    return 2;
  }
  which = argv[1];
  dir = argv[2];
  epochs = atoi(argv[3]);
  threads = atoi(argv[4]);
  backend = argc > 5 ? argv[5] : "auto";
  limit = argc > 6 ? atol(argv[6]) : 0;
  precision = argc > 7 ? argv[7] : "f32";
  batch = argc > 8 ? atoi(argv[8]) : 64;
  warmup = argc > 9 ? atoi(argv[9]) : 0;

  snprintf(options, sizeof options, "{\"backend\": \"%s\", \"threads\": %d}", backend, threads);
  CHECK(nnrt_context_create(options, &ctx));
  if (limit > 0) snprintf(limit_text, sizeof limit_text, ", \"limit\": %ld", limit);
  snprintf(spec, sizeof spec,
           "{\"format\": \"idx\", \"images\": \"%s/train-images-idx3-ubyte.gz\", \"labels\": "
           "\"%s/train-labels-idx1-ubyte.gz\"%s}", dir, dir, limit_text);
  CHECK(nnrt_dataset_load(ctx, spec, &train));
  snprintf(spec, sizeof spec,
           "{\"format\": \"idx\", \"images\": \"%s/t10k-images-idx3-ubyte.gz\", \"labels\": "
           "\"%s/t10k-labels-idx1-ubyte.gz\"}", dir, dir);
  CHECK(nnrt_dataset_load(ctx, spec, &test));
  CHECK(nnrt_dataset_size(train, &examples));

  CHECK(nnrt_model_create(ctx, strcmp(which, "mlp") == 0 ? BENCH_MLP_CONFIG : lenet, &model));
  snprintf(trainer_options, sizeof trainer_options,
           "{\"optimizer\": {\"type\": \"adagrad\", \"learning_rate\": 0.01}, \"l2\": 0.0005, \"batch_size\": %d,"
           " \"shuffle\": true, \"seed\": 1%s%s%s}", batch, strcmp(precision, "f32") ? ", \"precision\": \"" : "",
           strcmp(precision, "f32") ? precision : "", strcmp(precision, "f32") ? "\"" : "");
  CHECK(nnrt_trainer_create(model, trainer_options, &trainer));
  if (warmup > 0) {
    /* Full batches, then one of the size the timed epochs end with. */
    snprintf(spec, sizeof spec,
             "{\"format\": \"idx\", \"images\": \"%s/train-images-idx3-ubyte.gz\", \"labels\": "
             "\"%s/train-labels-idx1-ubyte.gz\", \"limit\": %lld}", dir, dir,
             (long long)warmup * batch + (long long)(examples % batch));
    CHECK(nnrt_dataset_load(ctx, spec, &warm));
    CHECK(nnrt_trainer_fit(trainer, warm, NULL, 1));
    nnrt_dataset_release(warm);
  }
  start = bench_now();
  CHECK(nnrt_trainer_fit(trainer, train, NULL, epochs));
  seconds = bench_now() - start;
  /* The cache's peak is read before the evaluation, whose larger f32 batches would hide it. */
  CHECK(nnrt_context_describe(ctx, result, sizeof result, &len));
  CHECK(nnrt_model_evaluate(model, test, &eval));
  CHECK(nnrt_evaluation_accuracy(eval, &accuracy));
  getrusage(RUSAGE_SELF, &usage);
  {
    /* The memory cache's peak during training: what the model's arrays needed at most
    ** (activations, gradients, weights and optimizer state). */
    const char *peak = strstr(result, "\"peak_bytes\":");
    double peak_mb = peak ? atof(peak + strlen("\"peak_bytes\":")) / (1024.0 * 1024.0) : 0;
    const char *name = strstr(result, "\"backend\":\"");
    char selected[32] = "?";
    if (name) sscanf(name + strlen("\"backend\":\""), "%31[^\"]", selected);
    printf("{\"runtime\": \"nnrt\", \"model\": \"%s\", \"backend\": \"%s\", \"precision\": \"%s\", \"threads\": %d, "
           "\"epochs\": %d, \"batch\": %d, \"warmup_steps\": %d, \"examples\": %lld, \"seconds\": %.3f, \"images_per_second\": %.1f, \"test_accuracy\": %.4f, "
           "\"peak_rss_mb\": %.1f, \"cache_peak_mb\": %.2f}\n",
           which, selected, precision, threads, epochs, batch, warmup, (long long)examples, seconds, (double)examples * epochs / seconds,
           accuracy, usage.ru_maxrss / 1024.0, peak_mb);
  }
  nnrt_evaluation_release(eval);
  nnrt_trainer_release(trainer);
  nnrt_model_release(model);
  nnrt_dataset_release(test);
  nnrt_dataset_release(train);
  nnrt_context_release(ctx);
  return 0;
}
