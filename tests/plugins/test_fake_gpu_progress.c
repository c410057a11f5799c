/* The device's load in the training progress: the fake GPU reports a fixed one (37% busy, 41 C,
** 256 MiB of 1 GiB), which every progress report of a fit on it carries; on the reference backend,
** and on a fake GPU whose table ends before device_status (NNRT_FAKEGPU_ABI=1.0, set by meson for
** the second run), every member is -1. */
#include <stdlib.h>
#include <string.h>

#include "../c/c_test.h"

typedef struct seen {
  int reports, with_load, without_load, other;
} seen;

static int on_progress(const nnrt_progress *p, void *user) {
  seen *s = (seen *)user;
  ++s->reports;
  if (p->struct_size < sizeof *p) {
    ++s->other;
  } else if (p->device_utilization_percent == 37 && p->device_temperature_celsius == 41 &&
             p->device_memory_used_bytes == (int64_t)256 << 20 && p->device_memory_total_bytes == (int64_t)1 << 30) {
    ++s->with_load;
  } else if (p->device_utilization_percent == -1 && p->device_temperature_celsius == -1 &&
             p->device_memory_used_bytes == -1 && p->device_memory_total_bytes == -1) {
    ++s->without_load;
  } else {
    ++s->other;
  }
  return 0;
}

static seen fit_on(const char *context_json) {
  seen s = {0, 0, 0, 0};
  nnrt_context *ctx = NULL;
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_array *x = NULL, *y = NULL;
  nnrt_dataset *d = NULL;
  float xs[20 * 2];
  int64_t ys[20], xshape[2] = {20, 2}, yshape[1] = {20};
  int i;
  for (i = 0; i < 20; ++i) {
    xs[2 * i] = (float)i / 20;
    xs[2 * i + 1] = (float)(i % 3);
    ys[i] = i % 2;
  }
  CHECK_OK(nnrt_context_create(context_json, &ctx));
  CHECK_OK(nnrt_model_create(ctx,
                             "{\"input\": [2], \"seed\": 1, \"layers\": [{\"type\": \"output\", \"units\": 2,"
                             " \"activation\": \"softmax\", \"loss\": \"cross_entropy\"}]}",
                             &m));
  CHECK_OK(nnrt_trainer_create(m, "{\"batch_size\": 5}", &t));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xshape, xs, sizeof xs, &x));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I64, 1, yshape, ys, sizeof ys, &y));
  CHECK_OK(nnrt_dataset_from_arrays(ctx, x, y, &d));
  CHECK_OK(nnrt_trainer_set_progress(t, on_progress, &s));
  CHECK_OK(nnrt_trainer_fit(t, d, NULL, 2));
  nnrt_dataset_release(d);
  nnrt_array_release(x);
  nnrt_array_release(y);
  nnrt_trainer_release(t);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
  return s;
}

int main(void) {
  const char *abi = getenv("NNRT_FAKEGPU_ABI");
  int reports_load = !(abi && strcmp(abi, "1.0") == 0);
  seen gpu = fit_on("{\"backend\": \"fakegpu\"}"), cpu = fit_on("{\"backend\": \"reference\"}");
  CHECK(gpu.reports == 10); /* 2 epochs of 4 batches, and 2 epoch ends */
  CHECK(gpu.with_load == (reports_load ? 10 : 0));
  CHECK(gpu.without_load == (reports_load ? 0 : 10));
  CHECK(gpu.other == 0);
  CHECK(cpu.reports == 10);
  CHECK(cpu.without_load == 10);
  return c_test_finish(reports_load ? "test_fake_gpu_progress" : "test_fake_gpu_progress (table of ABI 1.0)");
}
