/* Writes what tests/io/safetensors_interop.py checks nnrt's files against: the LeNet of examples/lenet.json after
** two training steps on random data, saved as a checkpoint; a fixed input batch; and nnrt's
** prediction for it (raw little-endian float32 files).
**
** Usage: write_lenet_checkpoint <checkpoint> <input.f32> <output.f32> */
#include <stdio.h>
#include <stdlib.h>

#include "lenet_example.h"
#include "nnrt/nnrt.h"

static const char *lenet = NNRT_LENET_CONFIG;

#define N 4
#define PIXELS (28 * 28)

static unsigned state = 7;
static float next_uniform(void) {
  state = state * 1664525u + 1013904223u;
  return (float)(state >> 8) / 16777216.0f;
}

static void check(nnrt_status s, const char *what) {
  if (s != NNRT_OK) {
    fprintf(stderr, "write_lenet_checkpoint: %s: %s\n", what, nnrt_last_error());
    exit(1);
  }
}

static void write_floats(const char *path, const float *v, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(v, sizeof *v, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "write_lenet_checkpoint: cannot write %s\n", path);
    exit(1);
  }
}

int main(int argc, char **argv) {
  static float x[N * PIXELS], probs[N * 10];
  int32_t y[N];
  int64_t xs[4] = {N, 1, 28, 28}, ys[1] = {N};
  nnrt_context *ctx = NULL;
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_array *xa = NULL, *ya = NULL, *out = NULL;
  int i, step;

  if (argc != 4) {
    fprintf(stderr, "usage: %s <checkpoint> <input.f32> <output.f32>\n", argv[0]);
    return 2;
  }
  check(nnrt_context_create(NULL, &ctx), "context");
  check(nnrt_model_create(ctx, lenet, &m), "model");
  check(nnrt_trainer_create(m, "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.1, \"momentum\": 0.9}}", &t),
        "trainer");
  for (step = 0; step < 2; ++step) {
    for (i = 0; i < N * PIXELS; ++i) x[i] = next_uniform();
    for (i = 0; i < N; ++i) y[i] = (int32_t)(next_uniform() * 10) % 10;
    check(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 4, xs, x, sizeof x, &xa), "x");
    check(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, ys, y, sizeof y, &ya), "y");
    check(nnrt_trainer_step(t, xa, ya, NULL), "step");
    nnrt_array_release(xa);
    nnrt_array_release(ya);
  }
  check(nnrt_trainer_save(t, argv[1]), "save");

  for (i = 0; i < N * PIXELS; ++i) x[i] = next_uniform();
  check(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 4, xs, x, sizeof x, &xa), "input");
  check(nnrt_model_predict(m, xa, &out), "predict");
  check(nnrt_array_to_host(out, probs, sizeof probs), "output");
  write_floats(argv[2], x, N * PIXELS);
  write_floats(argv[3], probs, N * 10);

  nnrt_array_release(xa);
  nnrt_array_release(out);
  nnrt_trainer_release(t);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
  return 0;
}
