/* Mixed precision's dynamic loss scaling: a step whose scaled gradients overflow f16 is skipped and
** the scale halves; the skipped step must not count as an optimizer step (Adam's and AdaMax's `t`,
** as PyTorch's GradScaler skips optimizer.step()). So a run with one forced overflow equals, bit for
** bit, the run that never saw that batch and started at the halved scale.
** argv[1], optional: the context options (e.g. {"backend": "reference"}). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test.h"

#define FEATURES 4
#define CLASSES 10
#define BATCH 8
#define STEPS 4

static nnrt_context *ctx;

static const char *mlp =
    "{\"input\": [4], \"seed\": 11, \"layers\": [{\"type\": \"dense\", \"units\": 16, \"activation\": \"tanh\"},"
    " {\"type\": \"output\", \"units\": 10, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";
static const char *param_names[] = {"layer0.weight", "layer0.bias", "layer1.weight", "layer1.bias"};

static nnrt_array *features(int n, unsigned seed) {
  float x[BATCH * FEATURES];
  int64_t shape[2];
  nnrt_array *a = NULL;
  int i;
  shape[0] = n;
  shape[1] = FEATURES;
  for (i = 0; i < n * FEATURES; ++i) {
    seed = seed * 1103515245u + 12345u;
    x[i] = 0.05f * ((float)((seed >> 16) & 0x7fff) / 32768.0f - 0.5f);
  }
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape, x, sizeof(float) * (size_t)(n * FEATURES), &a));
  return a;
}

static nnrt_array *labels(int n, int first) {
  int32_t y[BATCH];
  int64_t shape[1];
  nnrt_array *a = NULL;
  int i;
  shape[0] = n;
  for (i = 0; i < n; ++i) y[i] = (first + 3 * i) % CLASSES;
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, shape, y, sizeof(int32_t) * (size_t)n, &a));
  return a;
}

static void result_of(nnrt_trainer *t, char *buf, size_t cap) {
  size_t len = 0;
  CHECK_OK(nnrt_trainer_result(t, buf, cap, &len));
  CHECK(len < cap);
}

/* Trains STEPS batches of BATCH examples; with `overflow`, first one batch of a single example whose
** scaled loss gradient, about 0.9 x 2^17, is past f16's 65504. Returns the trained model. */
static nnrt_model *train(const char *optimizer, int overflow) {
  char options[512], result[4096];
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  double loss = 0;
  int i;
  snprintf(options, sizeof options,
           "{\"optimizer\": %s, \"precision\": \"mixed_f16\", \"loss_scale\": %d, \"seed\": 3}", optimizer,
           overflow ? 131072 : 65536);
  CHECK_OK(nnrt_model_create(ctx, mlp, &m));
  CHECK_OK(nnrt_trainer_create(m, options, &t));
  if (overflow) {
    nnrt_array *x = features(1, 99), *y = labels(1, 5);
    CHECK_OK(nnrt_trainer_step(t, x, y, &loss));
    result_of(t, result, sizeof result);
    if (!strstr(result, "\"skipped_steps\":1") || !strstr(result, "\"loss_scale\":65536")) {
      fprintf(stderr, "%s: the forced overflow did not happen: %s\n", optimizer, result);
      CHECK(0);
    }
    nnrt_array_release(x);
    nnrt_array_release(y);
  }
  for (i = 0; i < STEPS; ++i) {
    nnrt_array *x = features(BATCH, 1000u + (unsigned)i), *y = labels(BATCH, i);
    CHECK_OK(nnrt_trainer_step(t, x, y, &loss));
    nnrt_array_release(x);
    nnrt_array_release(y);
  }
  result_of(t, result, sizeof result);
  if (!strstr(result, overflow ? "\"skipped_steps\":1" : "\"skipped_steps\":0")) {
    fprintf(stderr, "%s: unexpected skipped steps after training: %s\n", optimizer, result);
    CHECK(0);
  }
  nnrt_trainer_release(t);
  return m;
}

/* Copies a parameter to the host; the caller frees. */
static float *param(nnrt_model *m, const char *name, size_t *count) {
  nnrt_array *a = NULL;
  size_t nbytes = 0;
  float *data;
  CHECK_OK(nnrt_model_get_param(m, name, &a));
  CHECK_OK(nnrt_array_nbytes(a, &nbytes));
  data = (float *)malloc(nbytes);
  CHECK_OK(nnrt_array_to_host(a, data, nbytes));
  nnrt_array_release(a);
  *count = nbytes / sizeof(float);
  return data;
}

static void test_skipped_step_is_not_an_optimizer_step(const char *optimizer) {
  nnrt_model *with_overflow = train(optimizer, 1), *without = train(optimizer, 0), *untrained = NULL;
  size_t k;
  CHECK_OK(nnrt_model_create(ctx, mlp, &untrained));
  for (k = 0; k < sizeof param_names / sizeof param_names[0]; ++k) {
    size_t n = 0, n2 = 0, n0 = 0, i, differ = 0, moved = 0;
    float *a = param(with_overflow, param_names[k], &n), *b = param(without, param_names[k], &n2);
    float *start = param(untrained, param_names[k], &n0);
    CHECK(n == n2 && n == n0);
    for (i = 0; i < n && i < n2 && i < n0; ++i) {
      if (a[i] != b[i]) ++differ;
      if (b[i] != start[i]) ++moved;
    }
    if (differ) fprintf(stderr, "%s: %s: %zu of %zu values differ\n", optimizer, param_names[k], differ, n);
    CHECK(differ == 0);
    CHECK(moved > 0); /* the comparison means something only if training changed the weights */
    free(a);
    free(b);
    free(start);
  }
  nnrt_model_release(with_overflow);
  nnrt_model_release(without);
  nnrt_model_release(untrained);
}

int main(int argc, char **argv) {
  char options[256];
  snprintf(options, sizeof options, "%s", argc > 1 ? argv[1] : "{\"deterministic\": true}");
  CHECK_OK(nnrt_context_create(options, &ctx));
  if (!ctx) return c_test_finish("test_mixed_precision");
  test_skipped_step_is_not_an_optimizer_step("{\"type\": \"adam\", \"learning_rate\": 0.01}");
  test_skipped_step_is_not_an_optimizer_step("{\"type\": \"adamw\", \"learning_rate\": 0.01}");
  test_skipped_step_is_not_an_optimizer_step("{\"type\": \"adamax\", \"learning_rate\": 0.01}");
  test_skipped_step_is_not_an_optimizer_step("{\"type\": \"sgd\", \"learning_rate\": 0.1, \"momentum\": 0.9}");
  test_skipped_step_is_not_an_optimizer_step("{\"type\": \"rmsprop\", \"learning_rate\": 0.01}");
  nnrt_context_release(ctx);
  return c_test_finish("test_mixed_precision");
}
