/* A fake GPU backend for tests, written in C against nnrt_backend.h alone.
**
** Its "device memory" is host memory handed out at a large fixed distance from the real address, so
** the pointers the host sees are not dereferenceable: if the host ever touched device memory
** directly instead of going through memcpy_async, the test would crash. It runs only f32 binary
** add and mul and same-dtype copies itself, on contiguous tensors; everything else must reach the
** reference backend through the host's staging copies.
**
** NNRT_FAKEGPU_DEVICES sets its device count (default 0: it then reports "no device", like a GPU
** backend on a machine without a GPU).
**
** Fault injection (tests/faults): a test finds nnrt_fakegpu_fail in the loaded plugin (dlopen with
** RTLD_NOLOAD, dlsym) and makes the k-th op run, allocation or copy from then on fail with
** NNRT_ERR_BACKEND and a message that says so, as a real device failing at run time would. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnrt/nnrt_backend.h>

#define DEVICE_OFFSET ((uintptr_t)1 << 46) /* far outside any mapping on x86-64 Linux */

static const nnrt_host_api *host;

struct nnrt_backend_instance {
  int32_t device;
  long live_allocations;
};
struct nnrt_stream {
  int unused;
};
struct nnrt_backend_op {
  nnrt_op_desc desc;
};

/* Fault injection: which operation fails (FAULT_*), after how many more calls, and whether it did. */
enum { FAULT_OP_RUN = 0, FAULT_ALLOC = 1, FAULT_COPY = 2 };
static const char *const fault_names[] = {"op run", "allocation", "copy"};
static int fault_what = -1;
static long fault_countdown = 0;
static int fault_fired = 0;

__attribute__((visibility("default"))) void nnrt_fakegpu_fail(int what, long k) {
  fault_what = k > 0 ? what : -1;
  fault_countdown = k;
  fault_fired = 0;
}

__attribute__((visibility("default"))) int nnrt_fakegpu_fault_fired(void) { return fault_fired; }

/* Nonzero (after setting the host's error) when this call of `what` is the one to fail. */
static int injected_failure(int what) {
  char m[96];
  if (what != fault_what || fault_countdown <= 0 || --fault_countdown > 0) return 0;
  fault_fired = 1;
  snprintf(m, sizeof m, "fakegpu: injected failure of a device %s", fault_names[what]);
  host->set_error(m);
  return 1;
}

static void *real(const void *device_ptr) { return (void *)((uintptr_t)device_ptr - DEVICE_OFFSET); }

static int32_t device_count(void) {
  const char *v = getenv("NNRT_FAKEGPU_DEVICES");
  return v ? atoi(v) : 0;
}

static int32_t probe(int32_t *count, char *reason, size_t cap) {
  *count = device_count();
  if (*count <= 0) {
    *count = 0;
    snprintf(reason, cap, "no fake GPU: NNRT_FAKEGPU_DEVICES is not set");
    return 0;
  }
  return 100;
}

static nnrt_status device_props(int32_t device, nnrt_device_props *p) {
  if (device < 0 || device >= device_count()) {
    host->set_error("no such fake GPU");
    return NNRT_ERR_NO_DEVICE;
  }
  p->kind = NNRT_DEVICE_GPU;
  snprintf(p->name, sizeof p->name, "Fake GPU %d", (int)device);
  p->memory_bytes = (uint64_t)1 << 30;
  p->compute_major = 9;
  p->compute_minor = 0;
  p->cores = 4;
  p->native_dtypes = (1u << NNRT_DTYPE_F32) | (1u << NNRT_DTYPE_F16) | (1u << NNRT_DTYPE_BF16);
  return NNRT_OK;
}

static nnrt_status open_device(const nnrt_device_config *config, nnrt_backend_instance **out) {
  nnrt_backend_instance *inst;
  if (config->device < 0 || config->device >= device_count()) {
    host->set_error("no such fake GPU");
    return NNRT_ERR_NO_DEVICE;
  }
  inst = (nnrt_backend_instance *)calloc(1, sizeof *inst);
  if (!inst) return NNRT_ERR_OUT_OF_MEMORY;
  inst->device = config->device;
  *out = inst;
  return NNRT_OK;
}

static void close_device(nnrt_backend_instance *inst) {
  if (inst->live_allocations != 0) {
    char m[96];
    snprintf(m, sizeof m, "fake GPU closed with %ld allocations still live", inst->live_allocations);
    host->log(NNRT_LOG_ERROR, m);
  }
  free(inst);
}

static nnrt_status mem_alloc(nnrt_backend_instance *inst, size_t bytes, void **out) {
  void *p = NULL;
  if (injected_failure(FAULT_ALLOC)) return NNRT_ERR_BACKEND;
  if (posix_memalign(&p, 256, bytes ? bytes : 1) != 0) return NNRT_ERR_OUT_OF_MEMORY;
  ++inst->live_allocations;
  *out = (void *)((uintptr_t)p + DEVICE_OFFSET);
  return NNRT_OK;
}

static void mem_free(nnrt_backend_instance *inst, void *ptr) {
  --inst->live_allocations;
  free(real(ptr));
}

static nnrt_status memcpy_async(nnrt_backend_instance *inst, void *dst, const void *src, size_t bytes, int32_t kind,
                                nnrt_stream *stream) {
  (void)inst;
  (void)stream;
  if (injected_failure(FAULT_COPY)) return NNRT_ERR_BACKEND;
  if (kind == NNRT_COPY_HOST_TO_DEVICE) memcpy(real(dst), src, bytes);
  else if (kind == NNRT_COPY_DEVICE_TO_HOST) memcpy(dst, real(src), bytes);
  else memmove(real(dst), real(src), bytes);
  return NNRT_OK;
}

static nnrt_status memset_async(nnrt_backend_instance *inst, void *dst, int value, size_t bytes, nnrt_stream *s) {
  (void)inst;
  (void)s;
  memset(real(dst), value, bytes);
  return NNRT_OK;
}

static nnrt_status stream_create(nnrt_backend_instance *inst, nnrt_stream **out) {
  (void)inst;
  *out = (nnrt_stream *)calloc(1, sizeof **out);
  return *out ? NNRT_OK : NNRT_ERR_OUT_OF_MEMORY;
}

static void stream_destroy(nnrt_backend_instance *inst, nnrt_stream *s) {
  (void)inst;
  free(s);
}

static nnrt_status stream_synchronize(nnrt_backend_instance *inst, nnrt_stream *s) {
  (void)inst;
  (void)s;
  return NNRT_OK;
}

static int contiguous(const nnrt_tensor_desc *t) {
  int64_t expected = 1;
  int i;
  for (i = t->ndim - 1; i >= 0; --i) {
    if (t->dims[i] != 1 && t->strides[i] != expected) return 0;
    expected *= t->dims[i];
  }
  return 1;
}

static int64_t numel(const nnrt_tensor_desc *t) {
  int64_t n = 1;
  int i;
  for (i = 0; i < t->ndim; ++i) n *= t->dims[i];
  return n;
}

static int32_t supports(nnrt_backend_instance *inst, const nnrt_op_desc *d) {
  (void)inst;
  if (d->kind == NNRT_OP_BINARY && (d->attrs.alg == NNRT_BINARY_ADD || d->attrs.alg == NNRT_BINARY_MUL)) {
    return d->inputs[0].dtype == NNRT_DTYPE_F32 && contiguous(&d->inputs[0]) && contiguous(&d->inputs[1]) &&
           contiguous(&d->outputs[0]) && numel(&d->inputs[0]) == numel(&d->outputs[0]) &&
           numel(&d->inputs[1]) == numel(&d->outputs[0]);
  }
  if (d->kind == NNRT_OP_COPY) {
    return d->inputs[0].dtype == d->outputs[0].dtype && contiguous(&d->inputs[0]) && contiguous(&d->outputs[0]);
  }
  return 0;
}

static nnrt_status op_create(nnrt_backend_instance *inst, const nnrt_op_desc *desc, nnrt_backend_op **out,
                             size_t *workspace) {
  nnrt_backend_op *op;
  if (!supports(inst, desc)) {
    host->set_error("the fake GPU runs only contiguous f32 add/mul and same-dtype copies");
    return NNRT_ERR_UNSUPPORTED;
  }
  op = (nnrt_backend_op *)malloc(sizeof *op);
  if (!op) return NNRT_ERR_OUT_OF_MEMORY;
  op->desc = *desc;
  *out = op;
  *workspace = 0;
  return NNRT_OK;
}

static nnrt_status op_run(nnrt_backend_op *op, const nnrt_op_args *args) {
  const nnrt_op_desc *d = &op->desc;
  int64_t n = numel(&d->outputs[0]), i;
  if (injected_failure(FAULT_OP_RUN)) return NNRT_ERR_BACKEND;
  if (d->kind == NNRT_OP_COPY) {
    static const size_t sizes[] = {0, 4, 8, 2, 2, 4, 8, 1, 1};
    memmove(real(args->outputs[0]), real(args->inputs[0]), (size_t)n * sizes[d->outputs[0].dtype]);
    return NNRT_OK;
  }
  {
    const float *a = (const float *)real(args->inputs[0]), *b = (const float *)real(args->inputs[1]);
    float *c = (float *)real(args->outputs[0]);
    for (i = 0; i < n; ++i) c[i] = d->attrs.alg == NNRT_BINARY_ADD ? a[i] + b[i] : a[i] * b[i];
  }
  return NNRT_OK;
}

static void op_destroy(nnrt_backend_op *op) { free(op); }

static nnrt_backend_v1 table;

__attribute__((visibility("default"))) const nnrt_backend_v1 *nnrt_backend_entry(uint32_t host_abi,
                                                                                 const nnrt_host_api *h) {
  if (host_abi != NNRT_BACKEND_ABI_MAJOR) {
    h->set_error("fakegpu: built for another backend ABI");
    return NULL;
  }
  host = h;
  table.struct_size = sizeof table;
  table.abi_major = NNRT_BACKEND_ABI_MAJOR;
  table.name = "fakegpu";
  table.version = "fakegpu test backend 1";
  table.kind = NNRT_DEVICE_GPU;
  table.flags = 0;
  table.probe = probe;
  table.device_props = device_props;
  table.open = open_device;
  table.close = close_device;
  table.mem_alloc = mem_alloc;
  table.mem_free = mem_free;
  table.memcpy_async = memcpy_async;
  table.memset_async = memset_async;
  table.stream_create = stream_create;
  table.stream_destroy = stream_destroy;
  table.stream_synchronize = stream_synchronize;
  table.supports = supports;
  table.op_create = op_create;
  table.op_run = op_run;
  table.op_destroy = op_destroy;
  return &table;
}
