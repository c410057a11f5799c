/* Data-parallel LeNet on Fashion-MNIST: several workers in this process, and optionally several
** processes (ranks) on one or more hosts, through nnrt's C API.
**
**   train_lenet_parallel [data folder] [epochs] [training examples] [workers] [mpi]
**
** With "mpi" as the last argument it trains as one rank of a group launched by mpirun:
**
**   mpirun -np 2 ./train_lenet_parallel /usr/share/datasets/fashion-mnist 1 10000 1 mpi
**
** Each rank then trains on its own shard of every epoch, the gradients of every step are summed
** over all ranks and workers ("mode": "allreduce"), and rank 0 alone prints and saves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnrt/nnrt.h>

#include "lenet_example.h" /* NNRT_LENET_CONFIG: examples/lenet.json, embedded by the build */

#define CHECK(call)                                                                            \
  do {                                                                                         \
    nnrt_status s_ = (call);                                                                   \
    if (s_ != NNRT_OK) {                                                                       \
      fprintf(stderr, "%s failed: %s: %s\n", #call, nnrt_status_name(s_), nnrt_last_error()); \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)


static int32_t rank = 0;

static int on_progress(const nnrt_progress *p, void *user) {
  (void)user;
  if (rank != 0) return 0;
  if (p->epoch_end) {
    printf("epoch %d done: %.0f images/s on this rank, test accuracy %.4f\n", p->epoch + 1, p->examples_per_second,
           p->validation_score);
  } else if (p->batch % 50 == 0) {
    printf("epoch %d step %4lld/%lld  loss %.4f\n", p->epoch + 1, (long long)p->batch, (long long)p->batches_per_epoch,
           p->loss);
  }
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
  int epochs = argc > 2 ? atoi(argv[2]) : 1;
  long limit = argc > 3 ? atol(argv[3]) : 10000;
  int workers = argc > 4 ? atoi(argv[4]) : 2;
  int distributed = argc > 5 && strcmp(argv[5], "mpi") == 0;
  char spec[1024], options[512];
  nnrt_context *ctx = NULL;
  nnrt_model *model = NULL;
  nnrt_trainer *trainer = NULL;
  nnrt_dataset *train = NULL, *test = NULL;
  int32_t world = 1;

  CHECK(nnrt_context_create(NULL, &ctx));
  snprintf(spec, sizeof spec,
           "{\"format\": \"idx\", \"images\": \"%s/train-images-idx3-ubyte.gz\", \"labels\": "
           "\"%s/train-labels-idx1-ubyte.gz\", \"limit\": %ld}", dir, dir, limit);
  CHECK(nnrt_dataset_load(ctx, spec, &train));
  snprintf(spec, sizeof spec,
           "{\"format\": \"idx\", \"images\": \"%s/t10k-images-idx3-ubyte.gz\", \"labels\": "
           "\"%s/t10k-labels-idx1-ubyte.gz\", \"limit\": 2000}", dir, dir);
  CHECK(nnrt_dataset_load(ctx, spec, &test));
  CHECK(nnrt_model_create(ctx, NNRT_LENET_CONFIG, &model));
  /* Each worker (and rank) takes batches of 32: one step trains on workers * ranks * 32 examples. */
  snprintf(options, sizeof options,
           "{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.002}, \"batch_size\": 32, \"seed\": 1,"
           " \"workers\": %d, \"mode\": \"allreduce\"%s}",
           workers, distributed ? ", \"distributed\": {\"comm\": \"mpi\", \"timeout_s\": 60}" : "");
  CHECK(nnrt_trainer_create(model, options, &trainer));
  CHECK(nnrt_trainer_rank(trainer, &rank, &world));
  if (rank == 0) printf("%d rank(s) x %d worker(s), %ld training examples\n", world, workers, limit);
  CHECK(nnrt_trainer_set_progress(trainer, on_progress, NULL));
  /* Rank 0 evaluates after each epoch; the other ranks need no test set. */
  CHECK(nnrt_trainer_fit(trainer, train, rank == 0 ? test : NULL, epochs));
  if (rank == 0) {
    nnrt_evaluation *eval = NULL;
    double accuracy = 0;
    CHECK(nnrt_model_evaluate(model, test, &eval));
    CHECK(nnrt_evaluation_accuracy(eval, &accuracy));
    printf("test accuracy %.4f\n", accuracy);
    nnrt_evaluation_release(eval);
  }
  nnrt_trainer_release(trainer);
  nnrt_model_release(model);
  nnrt_dataset_release(test);
  nnrt_dataset_release(train);
  nnrt_context_release(ctx);
  return 0;
}
