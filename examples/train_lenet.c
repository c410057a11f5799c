/* Trains the classic LeNet on Fashion-MNIST through nnrt's C API, printing progress and the
** evaluation on the test set.
**
**   train_lenet [data folder] [epochs] [training examples] [minimum accuracy]
**
** The data folder holds train-images-idx3-ubyte.gz and friends (default: Debian's
** dataset-fashion-mnist, /usr/share/datasets/fashion-mnist). With a minimum accuracy, the exit
** status is 1 when the test accuracy falls below it (the test suite runs it that way). */
#include <stdio.h>
#include <stdlib.h>

#include <nnrt/nnrt.h>

#include "lenet_example.h"

#define CHECK(call)                                                                            \
  do {                                                                                         \
    nnrt_status s_ = (call);                                                                   \
    if (s_ != NNRT_OK) {                                                                       \
      fprintf(stderr, "%s failed: %s: %s\n", #call, nnrt_status_name(s_), nnrt_last_error()); \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

/* The model and trainer options are examples/lenet.json and examples/lenet_trainer.json, embedded
** by the build (lenet_example.h): Adam with a cosine schedule over 8 epochs, about 0.90 test accuracy
** after all 8. (The seed's AdaGrad, lr 0.01 with l2 5e-4, reaches about 0.83 after one epoch.) */
static const char *lenet = NNRT_LENET_CONFIG;
static const char *trainer_options = NNRT_LENET_TRAINER;

static int on_progress(const nnrt_progress *p, void *user) {
  (void)user;
  if (p->epoch_end) {
    printf("epoch %d done: %.0f images/s, test accuracy %.4f\n", p->epoch + 1, p->examples_per_second,
           p->validation_score);
  } else if (p->batch % 100 == 0) {
    printf("epoch %d batch %4lld/%lld  loss %.4f  %.0f images/s\n", p->epoch + 1, (long long)p->batch,
           (long long)p->batches_per_epoch, p->loss, p->examples_per_second);
  }
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
  int epochs = argc > 2 ? atoi(argv[2]) : 1;
  long limit = argc > 3 ? atol(argv[3]) : 0;
  double min_accuracy = argc > 4 ? atof(argv[4]) : 0;
  char spec[1024], limit_text[64] = "";
  nnrt_context *ctx = NULL;
  nnrt_model *model = NULL;
  nnrt_trainer *trainer = NULL;
  nnrt_dataset *train = NULL, *test = NULL;
  nnrt_evaluation *eval = NULL;
  char *report;
  size_t len;
  double accuracy;

  if (epochs < 1) {
    fprintf(stderr, "epochs must be at least 1, got %d\n", epochs);
    return 2;
  }
  CHECK(nnrt_context_create(NULL, &ctx));
  if (limit > 0) snprintf(limit_text, sizeof limit_text, ", \"limit\": %ld", limit);
  snprintf(spec, sizeof spec,
           "{\"format\": \"idx\", \"images\": \"%s/train-images-idx3-ubyte.gz\", \"labels\": "
           "\"%s/train-labels-idx1-ubyte.gz\"%s}", dir, dir, limit_text);
  CHECK(nnrt_dataset_load(ctx, spec, &train));
  snprintf(spec, sizeof spec,
           "{\"format\": \"idx\", \"images\": \"%s/t10k-images-idx3-ubyte.gz\", \"labels\": "
           "\"%s/t10k-labels-idx1-ubyte.gz\"}", dir, dir);
  CHECK(nnrt_dataset_load(ctx, spec, &test));

  CHECK(nnrt_model_create(ctx, lenet, &model));
  CHECK(nnrt_trainer_create(model, trainer_options, &trainer));
  CHECK(nnrt_trainer_set_progress(trainer, on_progress, NULL));
  CHECK(nnrt_trainer_fit(trainer, train, test, epochs));

  CHECK(nnrt_model_evaluate(model, test, &eval));
  CHECK(nnrt_evaluation_accuracy(eval, &accuracy));
  CHECK(nnrt_evaluation_report(eval, NULL, 0, &len));
  report = (char *)malloc(len + 1);
  CHECK(nnrt_evaluation_report(eval, report, len + 1, &len));
  printf("evaluation: %s\n", report);
  printf("test_accuracy=%.4f\n", accuracy);
  free(report);
  if (accuracy < min_accuracy) fprintf(stderr, "test accuracy %.4f is below %.4f\n", accuracy, min_accuracy);

  nnrt_evaluation_release(eval);
  nnrt_trainer_release(trainer);
  nnrt_model_release(model);
  nnrt_dataset_release(test);
  nnrt_dataset_release(train);
  nnrt_context_release(ctx);
  return accuracy < min_accuracy ? 1 : 0;
}
