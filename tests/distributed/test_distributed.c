/* Distributed training over the communicator NNRT_TEST_COMM names ("mpi" by default, run by
** mpirun.sh under `mpirun -np 2`; "gloo", run by gloo_launch.sh). Every rank runs the same scenario
** (argv[1]) and prints "rank R ok" when its checks pass:
**   equivalence     2 ranks x batch 8 train as 1 process x batch 16 (SGD, momentum, Adam; 5 steps),
**                   2 ranks x 2 workers x batch 4 too, and "average" every step matches "allreduce"
**                   for plain SGD; the result names the rank and world size.
**   mismatch        rank 1 asks for another learning rate: nnrt_trainer_create fails on both ranks.
**   early_stopping  every rank stops on the same epoch and only rank 0 writes the best model (each
**                   rank works in its own folder argv[2]/<rank>).
**   hang            the last rank stops answering mid-epoch: every other rank's fit fails within
**                   the timeout, naming that rank and no other (run on 2 and on 3 ranks).
**   kill            the last rank dies mid-epoch (SIGKILL): as hang, every other rank's fit fails
**                   within the timeout, naming that rank (mpirun.sh runs each rank under
**                   outlive_killed_rank.sh, so that mpirun does not end them first).
** The rank and world size come from the launcher's environment: Open MPI's, or NNRT_GLOO_RANK and
** NNRT_GLOO_SIZE.
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "c_test.h"
#include "data_parallel_common.h"

static int32_t rank = -1, world = 0, launched = 0;
static const char *comm = "mpi"; /* the "comm" of every trainer's "distributed" options */

/* The trainer's rank and world size must be the launcher's. */
static void check_rank(nnrt_trainer *t) {
  int32_t mine = -1;
  CHECK_OK(nnrt_trainer_rank(t, &mine, &world));
  CHECK(world == launched);
  CHECK(mine == rank);
}

static void equivalence(void) {
  static const char *optimizers[] = {"{\"type\": \"sgd\", \"learning_rate\": 0.1}",
                                     "{\"type\": \"sgd\", \"learning_rate\": 0.1, \"momentum\": 0.9}",
                                     "{\"type\": \"adam\", \"learning_rate\": 0.01}"};
  nnrt_dataset *data = make_data(80); /* 5 steps of 16 examples */
  char one[512], two[512];
  size_t k;
  nnrt_trainer *probe = NULL;
  nnrt_model *m = NULL;
  char result[4096];
  size_t len = 0;
  for (k = 0; k < 3; ++k) {
    nnrt_model *local, *dist, *dist_workers;
    snprintf(one, sizeof one, "{\"optimizer\": %s, \"batch_size\": 16, \"seed\": 5}", optimizers[k]);
    local = train(data, one, NULL);
    snprintf(two, sizeof two, "{\"optimizer\": %s, \"batch_size\": 8, \"seed\": 5, \"distributed\": {\"comm\": \"%s\"}}",
             optimizers[k], comm);
    dist = train(data, two, NULL);
    snprintf(two, sizeof two,
             "{\"optimizer\": %s, \"batch_size\": 4, \"seed\": 5, \"workers\": 2, \"distributed\": {\"comm\": \"%s\"}}",
             optimizers[k], comm);
    dist_workers = train(data, two, NULL);
    printf("rank %d: %s: 2 ranks x 8 vs 1 x 16: %.3g relative; 2 ranks x 2 workers x 4: %.3g\n", rank, optimizers[k],
           max_relative_difference(local, dist), max_relative_difference(local, dist_workers));
    CHECK(max_relative_difference(local, dist) <= 1e-5);
    CHECK(max_relative_difference(local, dist_workers) <= 1e-5);
    nnrt_model_release(local);
    nnrt_model_release(dist);
    nnrt_model_release(dist_workers);
  }
  {
    nnrt_model *local = train(data, "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.1}, \"batch_size\": 16, \"seed\": 5}", NULL);
    nnrt_model *avg;
    snprintf(two, sizeof two,
             "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.1}, \"batch_size\": 8, \"seed\": 5,"
             " \"mode\": \"average\", \"distributed\": {\"comm\": \"%s\"}}", comm);
    avg = train(data, two, NULL);
    printf("rank %d: average@1 over 2 ranks vs allreduce: %.3g relative\n", rank, max_relative_difference(local, avg));
    CHECK(max_relative_difference(local, avg) <= 1e-5);
    nnrt_model_release(local);
    nnrt_model_release(avg);
  }
  {
    /* Tiny buckets (a few parameters each, started in order however the gradients arrive), and
    ** an odd batch count: in the last step rank 0 has a batch and sends while backward runs,
    ** rank 1 has none and sends zeros. */
    nnrt_dataset *odd = make_data(72);
    const char *adam = "{\"type\": \"adam\", \"learning_rate\": 0.01}";
    nnrt_model *local, *dist, *dist_workers;
    snprintf(one, sizeof one, "{\"optimizer\": %s, \"batch_size\": 16, \"seed\": 5}", adam);
    local = train(odd, one, NULL);
    snprintf(two, sizeof two,
             "{\"optimizer\": %s, \"batch_size\": 8, \"seed\": 5, \"distributed\": {\"comm\": \"%s\","
             " \"bucket_mib\": 0.0001}}", adam, comm);
    dist = train(odd, two, NULL);
    snprintf(two, sizeof two,
             "{\"optimizer\": %s, \"batch_size\": 4, \"seed\": 5, \"workers\": 2, \"distributed\": {\"comm\": \"%s\","
             " \"bucket_mib\": 0.0001}}", adam, comm);
    dist_workers = train(odd, two, NULL);
    printf("rank %d: 100-byte buckets, odd batch count: %.3g relative; with 2 workers: %.3g\n", rank,
           max_relative_difference(local, dist), max_relative_difference(local, dist_workers));
    CHECK(max_relative_difference(local, dist) <= 1e-5);
    CHECK(max_relative_difference(local, dist_workers) <= 1e-5);
    nnrt_model_release(local);
    nnrt_model_release(dist);
    nnrt_model_release(dist_workers);
    nnrt_dataset_release(odd);
  }
  CHECK_OK(nnrt_model_create(ctx, convnet, &m));
  snprintf(two, sizeof two, "{\"distributed\": {\"comm\": \"%s\", \"compression\": \"bf16\"}}", comm);
  CHECK_OK(nnrt_trainer_create(m, two, &probe));
  if (probe) {
    check_rank(probe);
    CHECK_OK(nnrt_trainer_fit(probe, data, NULL, 1));
    CHECK_OK(nnrt_trainer_result(probe, result, sizeof result, &len));
    CHECK(strstr(result, "\"world_size\":2") != NULL);
  }
  nnrt_trainer_release(probe);
  nnrt_model_release(m);
  nnrt_dataset_release(data);
}

static void mismatch(void) {
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  int32_t me = rank;
  char opts[256];
  snprintf(opts, sizeof opts, "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": %s}, \"distributed\": {\"comm\": \"%s\"}}",
           me == 1 ? "0.2" : "0.1", comm);
  CHECK_OK(nnrt_model_create(ctx, convnet, &m));
  CHECK_STATUS(nnrt_trainer_create(m, opts, &t), NNRT_ERR_INVALID_ARGUMENT, "differ between ranks: rank(s) 1");
  printf("rank %d: %s\n", me, nnrt_last_error());
  CHECK(t == NULL);
  nnrt_model_release(m);
}

static void early_stopping(const char *base) {
  char dir[512], result[4096], opts[512];
  size_t len = 0;
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_dataset *data = make_data(80);
  struct stat st;
  snprintf(dir, sizeof dir, "%s/%d", base, rank);
  CHECK(mkdir(dir, 0700) == 0);
  CHECK(chdir(dir) == 0);
  CHECK_OK(nnrt_model_create(ctx, convnet, &m));
  /* A learning rate of 0: no epoch improves on epoch 0, so patience 2 stops after epoch 2. Rank 0
  ** alone has a validation set: its score decides for both. */
  snprintf(opts, sizeof opts,
           "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0}, \"batch_size\": 8,"
           " \"early_stopping\": {\"metric\": \"loss\", \"patience\": 2, \"save_best\": \"best.safetensors\"},"
           " \"distributed\": {\"comm\": \"%s\"}}", comm);
  CHECK_OK(nnrt_trainer_create(m, opts, &t));
  if (t) {
    check_rank(t);
    CHECK_OK(nnrt_trainer_fit(t, data, rank == 0 ? data : NULL, 20));
    CHECK_OK(nnrt_trainer_result(t, result, sizeof result, &len));
    printf("rank %d: %s\n", rank, result);
    CHECK(strstr(result, "\"stop_reason\":\"patience\"") != NULL);
    /* The overlap figure bench/scaling prints: how long backward's end waited for the buckets. */
    CHECK(strstr(result, "\"allreduce_buckets\":1") != NULL);
    CHECK(strstr(result, "\"comm_wait_seconds\":") != NULL);
    CHECK(strstr(result, "\"epochs\":3") != NULL);
    CHECK(strstr(result, "\"best_epoch\":0") != NULL);
    /* Rank 0 writes the best model; the other ranks write nothing. */
    CHECK((stat("best.safetensors", &st) == 0) == (rank == 0));
  }
  nnrt_trainer_release(t);
  nnrt_model_release(m);
  nnrt_dataset_release(data);
}

/* The last rank misbehaves at its third step. */
static int misbehave(const nnrt_progress *p, void *user) {
  const char *how = user;
  if (rank == world - 1 && !p->epoch_end && p->iteration == 3) {
    if (strcmp(how, "kill") == 0) raise(SIGKILL);
    sleep(12); /* longer than rank 0's timeout */
  }
  return 0;
}

static void fault(const char *how) {
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_dataset *data = make_data(400);
  time_t start;
  nnrt_status s;
  char opts[256];
  snprintf(opts, sizeof opts, "{\"batch_size\": 8, \"distributed\": {\"comm\": \"%s\", \"timeout_s\": 3}}", comm);
  CHECK_OK(nnrt_model_create(ctx, convnet, &m));
  CHECK_OK(nnrt_trainer_create(m, opts, &t));
  if (t) {
    check_rank(t);
    CHECK_OK(nnrt_trainer_set_progress(t, misbehave, (void *)how));
    start = time(NULL);
    s = nnrt_trainer_fit(t, data, NULL, 50);
    printf("rank %d: fit returned %s after %ld s: %s\n", rank, nnrt_status_name(s), (long)(time(NULL) - start),
           nnrt_last_error());
    fflush(stdout);
    CHECK(s == NNRT_ERR_BACKEND);
    if (rank != world - 1) {
      char culprit[64];
      int32_t r;
      snprintf(culprit, sizeof culprit, "rank %d ", (int)(world - 1));
      CHECK(strstr(nnrt_last_error(), culprit) != NULL);
      /* The ranks that waited in the collective are not blamed. */
      for (r = 0; r < world - 1; ++r) {
        snprintf(culprit, sizeof culprit, ": rank %d ", (int)r);
        CHECK(strstr(nnrt_last_error(), culprit) == NULL);
        snprintf(culprit, sizeof culprit, "; rank %d ", (int)r);
        CHECK(strstr(nnrt_last_error(), culprit) == NULL);
      }
      CHECK(time(NULL) - start <= 10);
    }
  }
  /* The communicator is broken: the trainer can only be released. */
  nnrt_trainer_release(t);
  nnrt_model_release(m);
  nnrt_dataset_release(data);
}

int main(int argc, char **argv) {
  const char *scenario = argc > 1 ? argv[1] : "equivalence";
  /* Before a trainer exists the rank comes from the launcher's environment (Open MPI's mpirun, or
  ** gloo_launch.sh's NNRT_GLOO_*). */
  const char *env = getenv("NNRT_TEST_COMM");
  int gloo;
  if (env) comm = env;
  gloo = strcmp(comm, "gloo") == 0;
  env = getenv(gloo ? "NNRT_GLOO_RANK" : "OMPI_COMM_WORLD_RANK");
  rank = env ? atoi(env) : 0;
  env = getenv(gloo ? "NNRT_GLOO_SIZE" : "OMPI_COMM_WORLD_SIZE");
  launched = env ? atoi(env) : 1;
  CHECK_OK(nnrt_context_create("{\"threads\": 1}", &ctx));
  if (!ctx) return c_test_finish("test_distributed");
  if (strcmp(scenario, "equivalence") == 0) {
    equivalence();
  } else if (strcmp(scenario, "mismatch") == 0) {
    mismatch();
  } else if (strcmp(scenario, "early_stopping") == 0 && argc > 2) {
    early_stopping(argv[2]);
  } else if (strcmp(scenario, "hang") == 0 || strcmp(scenario, "kill") == 0) {
    fault(scenario);
  } else {
    fprintf(stderr, "usage: test_distributed equivalence | mismatch | early_stopping DIR | hang | kill\n");
    return 2;
  }
  nnrt_context_release(ctx);
  if (c_test_failures == 0) printf("rank %d ok\n", rank);
  fflush(stdout);
  return c_test_finish("test_distributed");
}
