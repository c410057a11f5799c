/* Data-parallel workers in one process (the trainer's "workers", "mode", "averaging_frequency"):
** N workers at batch b train the same model as 1 worker at batch N*b ("allreduce"), "average" with
** frequency 1 matches it for plain SGD, the reported loss follows "report_score_after_averaging",
** early stopping works with workers, and bad values are refused with a message.
** argv[1] (optional): the context options, e.g. {"backend": "reference"}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c_test.h"

#include "data_parallel_common.h"

/* 2 workers x batch 8 against 1 worker x batch 16, and 4 x 4 against 1 x 16, for one optimizer. */
static void check_allreduce(nnrt_dataset *data, const char *optimizer, const char *what) {
  char one[512], two[512], four[512];
  nnrt_model *m1, *m2, *m4;
  double d2, d4;
  snprintf(one, sizeof one, "{\"optimizer\": %s, \"batch_size\": 16, \"seed\": 5}", optimizer);
  snprintf(two, sizeof two, "{\"optimizer\": %s, \"batch_size\": 8, \"seed\": 5, \"workers\": 2}", optimizer);
  snprintf(four, sizeof four, "{\"optimizer\": %s, \"batch_size\": 4, \"seed\": 5, \"workers\": 4, \"prefetch\": 0}",
           optimizer);
  m1 = train(data, one, NULL);
  m2 = train(data, two, NULL);
  m4 = train(data, four, NULL);
  d2 = max_relative_difference(m1, m2);
  d4 = max_relative_difference(m1, m4);
  printf("%s: 2 workers x 8 vs 1 x 16: %.3g relative; 4 x 4: %.3g\n", what, d2, d4);
  CHECK(d2 <= 1e-5);
  CHECK(d4 <= 1e-5);
  nnrt_model_release(m1);
  nnrt_model_release(m2);
  nnrt_model_release(m4);
}

/* The trained models differ from the initial one: the equivalence above is not of untrained models. */
static void check_training_moves(nnrt_dataset *data) {
  nnrt_model *fresh = NULL, *trained = train(data, "{\"batch_size\": 8, \"workers\": 2, \"seed\": 5}", NULL);
  CHECK_OK(nnrt_model_create(ctx, convnet, &fresh));
  CHECK(max_relative_difference(fresh, trained) > 1e-3);
  nnrt_model_release(fresh);
  nnrt_model_release(trained);
}

static void check_average(nnrt_dataset *data) {
  const char *sgd = "\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.1}, \"seed\": 5";
  char opts[512];
  double loss_big = 0, loss_avg = 0, loss_w0 = 0, loss_small = 0;
  nnrt_model *big, *avg, *avg3, *w0, *small;
  snprintf(opts, sizeof opts, "{%s, \"batch_size\": 16}", sgd);
  big = train(data, opts, &loss_big);
  snprintf(opts, sizeof opts, "{%s, \"batch_size\": 8, \"workers\": 2, \"mode\": \"average\"}", sgd);
  avg = train(data, opts, &loss_avg);
  printf("average@1 vs allreduce (sgd): %.3g relative\n", max_relative_difference(big, avg));
  CHECK(max_relative_difference(big, avg) <= 1e-5);
  /* The step's reported loss is the mean over both workers: the 16-example batch's loss. */
  CHECK_NEAR(loss_avg, loss_big, 1e-5 * fabs(loss_big));

  /* Averaging every 3 steps is another algorithm: the replicas drift apart between averagings. */
  snprintf(opts, sizeof opts, "{%s, \"batch_size\": 8, \"workers\": 2, \"mode\": \"average\", \"averaging_frequency\": 3}",
           sgd);
  avg3 = train(data, opts, NULL);
  CHECK(max_relative_difference(big, avg3) > 1e-6);

  /* report_score_after_averaging false: worker 0's own loss, the first 8 examples' loss. */
  snprintf(opts, sizeof opts,
           "{%s, \"batch_size\": 8, \"workers\": 2, \"mode\": \"average\", \"report_score_after_averaging\": false}", sgd);
  w0 = train(data, opts, &loss_w0);
  snprintf(opts, sizeof opts, "{%s, \"batch_size\": 8}", sgd);
  small = train(data, opts, &loss_small);
  CHECK_NEAR(loss_w0, loss_small, 1e-6 * fabs(loss_small));
  CHECK(fabs(loss_w0 - loss_big) > 1e-6);
  nnrt_model_release(big);
  nnrt_model_release(avg);
  nnrt_model_release(avg3);
  nnrt_model_release(w0);
  nnrt_model_release(small);
}

/* nnrt_trainer_step splits its minibatch between the workers. */
static void check_step(void) {
  float x[16 * FEATURES];
  int32_t y[16];
  int64_t xs[4] = {16, 1, 6, 6}, ys[1] = {16};
  nnrt_array *xa = NULL, *ya = NULL;
  nnrt_model *m1 = NULL, *m2 = NULL;
  nnrt_trainer *t1 = NULL, *t2 = NULL;
  double l1 = 0, l2 = 0;
  int i, k;
  for (i = 0; i < 16 * FEATURES; ++i) x[i] = (float)((i * 37) % 17) / 17.0f;
  for (i = 0; i < 16; ++i) y[i] = i % CLASSES;
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 4, xs, x, sizeof x, &xa));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, ys, y, sizeof y, &ya));
  CHECK_OK(nnrt_model_create(ctx, convnet, &m1));
  CHECK_OK(nnrt_model_create(ctx, convnet, &m2));
  CHECK_OK(nnrt_trainer_create(m1, "{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01}}", &t1));
  CHECK_OK(nnrt_trainer_create(m2, "{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01}, \"workers\": 3}", &t2));
  for (k = 0; k < 5; ++k) {
    CHECK_OK(nnrt_trainer_step(t1, xa, ya, &l1));
    CHECK_OK(nnrt_trainer_step(t2, xa, ya, &l2));
    CHECK_NEAR(l2, l1, 1e-5 * fabs(l1));
  }
  CHECK(max_relative_difference(m1, m2) <= 1e-5);
  nnrt_trainer_release(t1);
  nnrt_trainer_release(t2);
  nnrt_model_release(m1);
  nnrt_model_release(m2);
  nnrt_array_release(xa);
  nnrt_array_release(ya);
}

/* Early stopping with 2 workers: patience stops training, the best model is saved once per
** improvement and the model ends on the best epoch. */
static void check_early_stopping(nnrt_dataset *data) {
  char dir[] = "/tmp/nnrt_dp_XXXXXX", path[64], opts[512], result[4096];
  nnrt_model *m = NULL, *best = NULL;
  nnrt_trainer *t = NULL;
  size_t len = 0;
  if (!mkdtemp(dir)) {
    CHECK(0);
    return;
  }
  snprintf(path, sizeof path, "%s/best.safetensors", dir);
  snprintf(opts, sizeof opts,
           "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0}, \"batch_size\": 8, \"workers\": 2,"
           " \"mode\": \"average\", \"averaging_frequency\": 2,"
           " \"early_stopping\": {\"metric\": \"loss\", \"patience\": 2, \"save_best\": \"%s\"}}",
           path);
  CHECK_OK(nnrt_model_create(ctx, convnet, &m));
  CHECK_OK(nnrt_trainer_create(m, opts, &t));
  /* A learning rate of 0: the loss never improves after epoch 0, so patience 2 stops after epoch 2. */
  CHECK_OK(nnrt_trainer_fit(t, data, data, 20));
  CHECK_OK(nnrt_trainer_result(t, result, sizeof result, &len));
  CHECK(strstr(result, "\"stop_reason\":\"patience\"") != NULL);
  CHECK(strstr(result, "\"epochs\":3") != NULL);
  CHECK(strstr(result, "\"best_epoch\":0") != NULL);
  CHECK(strstr(result, "\"workers\":2") != NULL);
  CHECK(strstr(result, "\"mode\":\"average\"") != NULL);
  CHECK_OK(nnrt_model_load(ctx, path, &best));
  if (best) CHECK(max_relative_difference(m, best) == 0);
  nnrt_model_release(best);
  nnrt_trainer_release(t);
  nnrt_model_release(m);
  unlink(path);
  rmdir(dir);
}

static void check_bad_options(void) {
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  CHECK_OK(nnrt_model_create(ctx, convnet, &m));
  CHECK_STATUS(nnrt_trainer_create(m, "{\"workers\": 0}", &t), NNRT_ERR_INVALID_ARGUMENT, "workers");
  {
    int32_t rank = -1, world = -1;
    CHECK_STATUS(nnrt_trainer_rank(NULL, &rank, &world), NNRT_ERR_INVALID_ARGUMENT, "trainer");
    CHECK(rank == -1 && world == -1);
  }
  CHECK_STATUS(nnrt_trainer_create(m, "{\"workers\": 65}", &t), NNRT_ERR_INVALID_ARGUMENT, "workers");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"workers\": 2.5}", &t), NNRT_ERR_INVALID_ARGUMENT, "workers");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"workers\": 2, \"mode\": \"allreduec\"}", &t), NNRT_ERR_INVALID_ARGUMENT,
               "expected \"allreduce\" or \"average\", got \"allreduec\"");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"mode\": \"average\", \"averaging_frequency\": 0}", &t),
               NNRT_ERR_INVALID_ARGUMENT, "averaging_frequency");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"report_score_after_averaging\": 1}", &t), NNRT_ERR_INVALID_ARGUMENT,
               "report_score_after_averaging");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"workers\": 2, \"mode\": \"average\", \"precision\": \"mixed_bf16\"}", &t),
               NNRT_ERR_UNSUPPORTED, "precision");
  CHECK(t == NULL);
  nnrt_model_release(m);
}

int main(int argc, char **argv) {
  nnrt_dataset *even, *uneven;
  CHECK_OK(nnrt_context_create(argc > 1 ? argv[1] : "{\"threads\": 2}", &ctx));
  if (!ctx) return c_test_finish("test_data_parallel");
  even = make_data(80);   /* 5 steps of 16 */
  uneven = make_data(76); /* the last step: 8 + 4 examples against one batch of 12 */
  check_allreduce(even, "{\"type\": \"sgd\", \"learning_rate\": 0.1}", "sgd");
  check_allreduce(even, "{\"type\": \"sgd\", \"learning_rate\": 0.1, \"momentum\": 0.9}", "momentum");
  check_allreduce(even, "{\"type\": \"adam\", \"learning_rate\": 0.01}", "adam");
  check_allreduce(uneven, "{\"type\": \"adam\", \"learning_rate\": 0.01}", "adam, short last step");
  check_training_moves(even);
  check_average(even);
  check_step();
  check_early_stopping(even);
  check_bad_options();
  nnrt_dataset_release(even);
  nnrt_dataset_release(uneven);
  nnrt_context_release(ctx);
  return c_test_finish("test_data_parallel");
}
