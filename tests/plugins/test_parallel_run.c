/* nnrt_backend_v1::parallel_run: a CPU backend that offers it gets the context's parallel work.
** A registered CPU backend refuses every op, so that each runs on the reference backend, and
** counts the calls of its parallel_run, which runs the chunks in reverse order on the calling
** thread. An elementwise op over many elements must then go through parallel_run with the
** context's thread count as the chunk count, and give the same result as the reference backend's
** own context; with one thread, or on a context of another backend, parallel_run is not called. */
#include <stdio.h>

#include <nnrt/nnrt_backend.h>

#include "../c/c_test.h"

static int runs = 0;
static int64_t most_chunks = 0;

static void reverse_run(int64_t chunks, void (*chunk)(int64_t, void *), void *user) {
  int64_t i;
  runs++;
  if (chunks > most_chunks) most_chunks = chunks;
  for (i = chunks - 1; i >= 0; --i) chunk(i, user);
}

static int32_t probe(int32_t *device_count, char *reason, size_t cap) {
  (void)reason;
  (void)cap;
  *device_count = 1;
  return 5;
}

static nnrt_status device_props(int32_t device, nnrt_device_props *props) {
  (void)device;
  props->kind = NNRT_DEVICE_CPU;
  snprintf(props->name, sizeof props->name, "counting CPU");
  return NNRT_OK;
}

static int instance_token;

static nnrt_status open_instance(const nnrt_device_config *config, nnrt_backend_instance **out) {
  (void)config;
  *out = (nnrt_backend_instance *)&instance_token;
  return NNRT_OK;
}

static void close_instance(nnrt_backend_instance *instance) { (void)instance; }

static int32_t supports(nnrt_backend_instance *instance, const nnrt_op_desc *desc) {
  (void)instance;
  (void)desc;
  return 0;
}

static nnrt_status op_create(nnrt_backend_instance *instance, const nnrt_op_desc *desc, nnrt_backend_op **out,
                             size_t *workspace_bytes) {
  (void)instance;
  (void)desc;
  (void)out;
  (void)workspace_bytes;
  return NNRT_ERR_UNSUPPORTED;
}

static nnrt_status op_run(nnrt_backend_op *op, const nnrt_op_args *args) {
  (void)op;
  (void)args;
  return NNRT_ERR_UNSUPPORTED;
}

static void op_destroy(nnrt_backend_op *op) { (void)op; }

static nnrt_backend_v1 table;

static const nnrt_backend_v1 *counting_entry(uint32_t host_abi, const nnrt_host_api *host) {
  (void)host_abi;
  (void)host;
  table.struct_size = sizeof table;
  table.abi_major = NNRT_BACKEND_ABI_MAJOR;
  table.name = "countingcpu";
  table.version = "1";
  table.kind = NNRT_DEVICE_CPU;
  table.flags = NNRT_BACKEND_HOST_MEMORY;
  table.probe = probe;
  table.device_props = device_props;
  table.open = open_instance;
  table.close = close_instance;
  table.supports = supports;
  table.op_create = op_create;
  table.op_run = op_run;
  table.op_destroy = op_destroy;
  table.parallel_run = reverse_run;
  return &table;
}

#define N (1 << 20)

/* 2 x * x of a ramp x, as "add" (x + x) then "mul" (x * 2x), read back into out. */
static void compute(const char *options, float *out) {
  static float ramp[N];
  int64_t shape[1] = {N};
  nnrt_context *ctx = NULL;
  nnrt_array *a = NULL, *s = NULL, *p = NULL;
  const nnrt_array *in[2];
  int i;
  for (i = 0; i < N; ++i) ramp[i] = (float)(i % 1000) * 0.25f - 3.0f;
  CHECK_OK(nnrt_context_create(options, &ctx));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, shape, ramp, sizeof ramp, &a));
  in[0] = a;
  in[1] = a;
  CHECK_OK(nnrt_op(ctx, "add", in, 2, NULL, &s, 1));
  in[1] = s;
  CHECK_OK(nnrt_op(ctx, "mul", in, 2, NULL, &p, 1));
  CHECK_OK(nnrt_array_to_host(p, out, (size_t)N * sizeof(float)));
  nnrt_array_release(a);
  nnrt_array_release(s);
  nnrt_array_release(p);
  nnrt_context_release(ctx);
}

int main(void) {
  static float expected[N], got[N];
  int i, same = 1;
  CHECK_OK(nnrt_register_backend(counting_entry));

  compute("{\"backend\": \"reference\", \"threads\": 3}", expected);
  CHECK(runs == 0);

  compute("{\"backend\": \"countingcpu\", \"threads\": 3}", got);
  CHECK(runs >= 2); /* add and mul */
  CHECK(most_chunks == 3);
  for (i = 0; i < N; ++i) same &= got[i] == expected[i];
  CHECK(same);

  runs = 0;
  compute("{\"backend\": \"countingcpu\", \"threads\": 1}", got);
  CHECK(runs == 0);
  return c_test_finish("test_parallel_run");
}
