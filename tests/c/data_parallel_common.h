/* What the data-parallel tests share (test_data_parallel.c, tests/distributed/test_distributed.c): a
** small convolutional network, a deterministic dataset, one-epoch training and a comparison of
** parameters, on the context `ctx` the including program creates. */
#ifndef NNRT_DATA_PARALLEL_COMMON_H
#define NNRT_DATA_PARALLEL_COMMON_H

#include <stdlib.h>

#include "c_test.h"

static nnrt_context *ctx;

#define FEATURES 36 /* one 6x6 image */
#define CLASSES 3

/* A small convolutional network: every kind of parameter gradient the LeNet example has. */
static const char *convnet =
    "{\"input\": [1, 6, 6], \"seed\": 11, \"layers\": ["
    " {\"type\": \"conv2d\", \"name\": \"conv\", \"filters\": 4, \"kernel\": [3, 3], \"activation\": \"relu\"},"
    " {\"type\": \"maxpool2d\", \"kernel\": [2, 2]},"
    " {\"type\": \"dense\", \"name\": \"hidden\", \"units\": 8, \"activation\": \"tanh\"},"
    " {\"type\": \"output\", \"name\": \"out\", \"units\": 3, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";
static const char *param_names[] = {"conv.weight", "conv.bias", "hidden.weight", "hidden.bias", "out.weight",
                                    "out.bias"};
#define PARAMS (sizeof param_names / sizeof param_names[0])

/* n examples of a 6x6 image whose class is the brightest third of the image (deterministic). */
static nnrt_dataset *make_data(int n) {
  float *x = malloc(sizeof(float) * (size_t)n * FEATURES);
  int32_t *y = malloc(sizeof(int32_t) * (size_t)n);
  int64_t xs[4] = {n, 1, 6, 6}, ys[1] = {n};
  nnrt_array *xa = NULL, *ya = NULL;
  nnrt_dataset *out = NULL;
  unsigned s = 2024;
  int i, j;
  for (i = 0; i < n; ++i) {
    y[i] = i % CLASSES;
    for (j = 0; j < FEATURES; ++j) {
      s = s * 1103515245u + 12345u;
      x[i * FEATURES + j] = (float)((s >> 16) & 0x7fff) / 32768.0f + (j / 12 == y[i] ? 1.0f : 0.0f);
    }
  }
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 4, xs, x, sizeof(float) * (size_t)n * FEATURES, &xa));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, ys, y, sizeof(int32_t) * (size_t)n, &ya));
  CHECK_OK(nnrt_dataset_from_arrays(ctx, xa, ya, &out));
  nnrt_array_release(xa);
  nnrt_array_release(ya);
  free(x);
  free(y);
  return out;
}

/* The first minibatch loss that fit reported. */
static int first_loss(const nnrt_progress *p, void *user) {
  double *loss = user;
  if (!p->epoch_end && p->iteration == 1) *loss = p->loss;
  return 0;
}

/* Trains a fresh model for one epoch with the given options and returns it (the caller releases). */
static nnrt_model *train(nnrt_dataset *data, const char *options, double *loss0) {
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  CHECK_OK(nnrt_model_create(ctx, convnet, &m));
  CHECK_OK(nnrt_trainer_create(m, options, &t));
  if (!t) return m;
  if (loss0) CHECK_OK(nnrt_trainer_set_progress(t, first_loss, loss0));
  CHECK_OK(nnrt_trainer_fit(t, data, NULL, 1));
  nnrt_trainer_release(t);
  return m;
}

/* The largest difference between the two models' parameters, relative to the parameter's size. */
static double max_relative_difference(const nnrt_model *a, const nnrt_model *b) {
  double worst = 0;
  size_t p;
  for (p = 0; p < PARAMS; ++p) {
    nnrt_array *pa = NULL, *pb = NULL;
    size_t bytes = 0, i, n;
    float *va, *vb;
    double scale = 0, diff = 0;
    CHECK_OK(nnrt_model_get_param(a, param_names[p], &pa));
    CHECK_OK(nnrt_model_get_param(b, param_names[p], &pb));
    if (!pa || !pb) return 1e9;
    CHECK_OK(nnrt_array_nbytes(pa, &bytes));
    n = bytes / sizeof(float);
    va = malloc(bytes);
    vb = malloc(bytes);
    CHECK_OK(nnrt_array_to_host(pa, va, bytes));
    CHECK_OK(nnrt_array_to_host(pb, vb, bytes));
    for (i = 0; i < n; ++i) {
      if (fabs(va[i]) > scale) scale = fabs(va[i]);
      if (fabs(va[i] - vb[i]) > diff) diff = fabs(va[i] - vb[i]);
    }
    if (scale > 0 && diff / scale > worst) worst = diff / scale;
    free(va);
    free(vb);
    nnrt_array_release(pa);
    nnrt_array_release(pb);
  }
  return worst;
}

#endif
