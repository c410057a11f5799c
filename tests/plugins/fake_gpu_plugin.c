/* A fake GPU backend for tests, written in C against nnrt_backend.h alone.
**
** Its "device memory" is host memory handed out at a large fixed distance from the real address, so
** the pointers the host sees are not dereferenceable: if the host ever touched device memory
** directly instead of going through memcpy_async, the test would crash. It runs only f32 binary
** add and mul and same-dtype copies itself, on contiguous tensors; everything else must reach the
** reference backend through the host's staging copies.
**
** Staged uploads: page-locked memory (host_alloc) and events. A host-to-device copy from page-locked
** memory is deferred: it runs only when something waits for it (an event recorded after it is
** waited for or synchronized, or its stream is synchronized), as a copy on a second stream of a real
** GPU may run any time until then. So a host that read the destination without waiting would read
** stale data, and the plugin counts it as a violation: reading or writing device memory that a
** copy on another stream has yet to write. A host that rewrote the page-locked source before the
** copy completed would copy the wrong data: the plugin checksums the source when the copy is queued
** and counts a violation when it differs at run time. nnrt_fakegpu_staging_report gives the counts
** and a trace of the calls. NNRT_FAKEGPU_ABI=1.0 makes the table end before the event functions, as
** a plugin built before they were added (the host must then neither read nor use them, nor
** device_status after them). device_status reports a fixed load (37% busy, 41 C, 256 MiB of 1 GiB).
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

#include <stddef.h>

#include <pthread.h>

#include <nnrt/nnrt_backend.h>

/* A real driver is thread-safe, and nnrt calls it from several threads at once (a batch iterator's
** producer copies on its own stream while the consumer runs ops and waits for events), so every
** function that touches the simulated device's state holds this lock for its whole call. */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static void release_state_lock(int *unused) {
  (void)unused;
  pthread_mutex_unlock(&state_lock);
}
#define HOLD_STATE_LOCK \
  int state_lock_held __attribute__((cleanup(release_state_lock), unused)) = pthread_mutex_lock(&state_lock)

#define DEVICE_OFFSET ((uintptr_t)1 << 46) /* far outside any mapping on x86-64 Linux */

static const nnrt_host_api *host;

struct nnrt_backend_instance {
  int32_t device;
  long live_allocations;
  long live_pinned;
};
/* The device memory the fake GPU reports and hands out at most. */
#define FAKE_DEVICE_MEMORY ((uint64_t)1 << 30)

/* A host-to-device copy from page-locked memory, queued and not yet run. */
typedef struct pending_copy {
  unsigned char *dst; /* real address */
  const unsigned char *src;
  size_t bytes;
  uint64_t checksum; /* of src when queued */
  long seq;
} pending_copy;

#define MAX_PENDING 64
struct nnrt_stream {
  pending_copy pending[MAX_PENDING];
  int n_pending;
  long queued; /* work items queued so far; an event marks a count */
};
struct nnrt_event {
  nnrt_stream *stream; /* NULL until recorded */
  long seq;
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
  HOLD_STATE_LOCK;
  fault_what = k > 0 ? what : -1;
  fault_countdown = k;
  fault_fired = 0;
}

__attribute__((visibility("default"))) int nnrt_fakegpu_fault_fired(void) {
  HOLD_STATE_LOCK;
  return fault_fired;
}

/* Nonzero (after setting the host's error) when this call of `what` is the one to fail. */
static int injected_failure(int what) {
  char m[96];
  if (what != fault_what || fault_countdown <= 0 || --fault_countdown > 0) return 0;
  fault_fired = 1;
  snprintf(m, sizeof m, "fakegpu: injected failure of a device %s", fault_names[what]);
  host->set_error(m);
  return 1;
}

/* ---- staged uploads: page-locked memory, deferred copies, the checks ---- */

#define MAX_PINNED 64
static struct {
  void *ptr;
  size_t bytes;
} pinned[MAX_PINNED];
static long deferred_copies = 0, stream_waits = 0, violations = 0;
static char trace[4096];
static size_t trace_len = 0;

static void note(char c) {
  if (trace_len + 1 < sizeof trace) trace[trace_len++] = c;
  trace[trace_len] = 0;
}

static void violation(const char *what) {
  char m[160];
  ++violations;
  snprintf(m, sizeof m, "fakegpu: staging violation: %s", what);
  host->log(NNRT_LOG_ERROR, m);
}

/* The counts since the plugin was loaded (or last reset) and the trace of staging calls: C a copy
** deferred, R an event recorded, W a stream made to wait for an event, S the host waiting for an
** event, D a device-to-device copy. */
__attribute__((visibility("default"))) void nnrt_fakegpu_staging_report(long *copies, long *waits, long *bad,
                                                                       const char **calls) {
  HOLD_STATE_LOCK;
  *copies = deferred_copies;
  *waits = stream_waits;
  *bad = violations;
  *calls = trace;
}

__attribute__((visibility("default"))) void nnrt_fakegpu_staging_reset(void) {
  HOLD_STATE_LOCK;
  deferred_copies = stream_waits = violations = 0;
  trace_len = 0;
  trace[0] = 0;
}

/* Page-locked buffers allocated and not yet freed, over every instance. */
static long pinned_in_use = 0;
__attribute__((visibility("default"))) long nnrt_fakegpu_pinned_in_use(void) {
  HOLD_STATE_LOCK;
  return pinned_in_use;
}

static int is_pinned(const void *p, size_t bytes) {
  int i;
  for (i = 0; i < MAX_PINNED; ++i) {
    const unsigned char *b = (const unsigned char *)pinned[i].ptr;
    if (b && (const unsigned char *)p >= b && (const unsigned char *)p + bytes <= b + pinned[i].bytes) return 1;
  }
  return 0;
}

static uint64_t checksum(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  size_t i;
  for (i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Runs the deferred copies of `s` queued at or before `seq`, in order. */
static void complete(nnrt_stream *s, long seq) {
  int i, kept = 0;
  for (i = 0; i < s->n_pending; ++i) {
    pending_copy *c = &s->pending[i];
    if (c->seq > seq) {
      s->pending[kept++] = *c;
      continue;
    }
    if (checksum(c->src, c->bytes) != c->checksum) {
      violation("page-locked memory was rewritten before its copy to the device completed");
    }
    memcpy(c->dst, c->src, c->bytes);
  }
  s->n_pending = kept;
}

/* The streams that have deferred copies (at most a few: the tests make one or two per context). */
#define MAX_STREAMS 16
static nnrt_stream *streams[MAX_STREAMS];

/* Nonzero when [p, p + bytes) overlaps a deferred copy's destination on a stream other than s. */
static int pending_elsewhere(const nnrt_stream *s, const void *p, size_t bytes) {
  const unsigned char *a = (const unsigned char *)p;
  int i, k;
  for (i = 0; i < MAX_STREAMS; ++i) {
    if (!streams[i] || streams[i] == s) continue;
    for (k = 0; k < streams[i]->n_pending; ++k) {
      const pending_copy *c = &streams[i]->pending[k];
      if (a < c->dst + c->bytes && c->dst < a + (bytes ? bytes : 1)) return 1;
    }
  }
  return 0;
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
  p->memory_bytes = FAKE_DEVICE_MEMORY;
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
  if (inst->live_pinned != 0) {
    char m[96];
    snprintf(m, sizeof m, "fake GPU closed with %ld page-locked buffers still live", inst->live_pinned);
    host->log(NNRT_LOG_ERROR, m);
  }
  if (inst->live_allocations != 0) {
    char m[96];
    snprintf(m, sizeof m, "fake GPU closed with %ld allocations still live", inst->live_allocations);
    host->log(NNRT_LOG_ERROR, m);
  }
  free(inst);
}

static nnrt_status mem_alloc(nnrt_backend_instance *inst, size_t bytes, void **out) {
  HOLD_STATE_LOCK;
  void *p = NULL;
  if (injected_failure(FAULT_ALLOC)) return NNRT_ERR_BACKEND;
  /* More than the device has fails as a real device's allocator does, before the host's allocator
  ** is asked (under AddressSanitizer an impossible size would abort instead of failing). */
  if (bytes > FAKE_DEVICE_MEMORY) return NNRT_ERR_OUT_OF_MEMORY;
  if (posix_memalign(&p, 256, bytes ? bytes : 1) != 0) return NNRT_ERR_OUT_OF_MEMORY;
  ++inst->live_allocations;
  *out = (void *)((uintptr_t)p + DEVICE_OFFSET);
  return NNRT_OK;
}

static void mem_free(nnrt_backend_instance *inst, void *ptr) {
  HOLD_STATE_LOCK;
  --inst->live_allocations;
  free(real(ptr));
}

static nnrt_status memcpy_async(nnrt_backend_instance *inst, void *dst, const void *src, size_t bytes, int32_t kind,
                                nnrt_stream *stream) {
  HOLD_STATE_LOCK;
  (void)inst;
  if (injected_failure(FAULT_COPY)) return NNRT_ERR_BACKEND;
  if (stream) {
    ++stream->queued;
    if (kind == NNRT_COPY_HOST_TO_DEVICE && is_pinned(src, bytes)) {
      pending_copy *c;
      if (pending_elsewhere(stream, real(dst), bytes)) violation("a copy writes device memory another copy writes");
      if (stream->n_pending == MAX_PENDING) complete(stream, stream->pending[0].seq);
      c = &stream->pending[stream->n_pending++];
      c->dst = (unsigned char *)real(dst);
      c->src = (const unsigned char *)src;
      c->bytes = bytes;
      c->checksum = checksum(c->src, bytes);
      c->seq = stream->queued;
      ++deferred_copies;
      note('C');
      return NNRT_OK;
    }
    complete(stream, stream->queued); /* in order behind this stream's own copies */
    if (kind != NNRT_COPY_HOST_TO_DEVICE && pending_elsewhere(stream, real(src), bytes)) {
      violation("device memory read before the copy writing it on another stream was waited for");
    }
    if (kind != NNRT_COPY_DEVICE_TO_HOST && pending_elsewhere(stream, real(dst), bytes)) {
      violation("device memory written while a copy on another stream writes it");
    }
    if (kind == NNRT_COPY_DEVICE_TO_DEVICE) note('D');
  }
  if (kind == NNRT_COPY_HOST_TO_DEVICE) memcpy(real(dst), src, bytes);
  else if (kind == NNRT_COPY_DEVICE_TO_HOST) memcpy(dst, real(src), bytes);
  else memmove(real(dst), real(src), bytes);
  return NNRT_OK;
}

static nnrt_status memset_async(nnrt_backend_instance *inst, void *dst, int value, size_t bytes, nnrt_stream *s) {
  HOLD_STATE_LOCK;
  (void)inst;
  if (s) {
    complete(s, s->queued);
    ++s->queued;
    if (pending_elsewhere(s, real(dst), bytes)) violation("device memory set while a copy on another stream writes it");
  }
  memset(real(dst), value, bytes);
  return NNRT_OK;
}

static nnrt_status stream_create(nnrt_backend_instance *inst, nnrt_stream **out) {
  HOLD_STATE_LOCK;
  int i;
  (void)inst;
  *out = (nnrt_stream *)calloc(1, sizeof **out);
  if (!*out) return NNRT_ERR_OUT_OF_MEMORY;
  for (i = 0; i < MAX_STREAMS; ++i) {
    if (!streams[i]) {
      streams[i] = *out;
      return NNRT_OK;
    }
  }
  free(*out);
  host->set_error("fakegpu: too many streams");
  return NNRT_ERR_BACKEND;
}

static void stream_destroy(nnrt_backend_instance *inst, nnrt_stream *s) {
  HOLD_STATE_LOCK;
  int i;
  (void)inst;
  complete(s, s->queued);
  for (i = 0; i < MAX_STREAMS; ++i) {
    if (streams[i] == s) streams[i] = NULL;
  }
  free(s);
}

static nnrt_status stream_synchronize(nnrt_backend_instance *inst, nnrt_stream *s) {
  HOLD_STATE_LOCK;
  (void)inst;
  complete(s, s->queued);
  return NNRT_OK;
}

static nnrt_status host_alloc(nnrt_backend_instance *inst, size_t bytes, void **out) {
  HOLD_STATE_LOCK;
  int i;
  if (injected_failure(FAULT_ALLOC)) return NNRT_ERR_BACKEND;
  for (i = 0; i < MAX_PINNED; ++i) {
    if (pinned[i].ptr) continue;
    if (posix_memalign(out, 256, bytes ? bytes : 1) != 0) return NNRT_ERR_OUT_OF_MEMORY;
    pinned[i].ptr = *out;
    pinned[i].bytes = bytes;
    ++inst->live_pinned;
    ++pinned_in_use;
    return NNRT_OK;
  }
  host->set_error("fakegpu: too many page-locked buffers");
  return NNRT_ERR_OUT_OF_MEMORY;
}

static void host_free(nnrt_backend_instance *inst, void *ptr) {
  HOLD_STATE_LOCK;
  int i;
  for (i = 0; i < MAX_PINNED; ++i) {
    if (pinned[i].ptr == ptr) {
      pinned[i].ptr = NULL;
      --inst->live_pinned;
      --pinned_in_use;
    }
  }
  free(ptr);
}

static nnrt_status event_create(nnrt_backend_instance *inst, nnrt_event **out) {
  (void)inst;
  *out = (nnrt_event *)calloc(1, sizeof **out);
  return *out ? NNRT_OK : NNRT_ERR_OUT_OF_MEMORY;
}

static void event_destroy(nnrt_backend_instance *inst, nnrt_event *e) {
  (void)inst;
  free(e);
}

static nnrt_status event_record(nnrt_backend_instance *inst, nnrt_event *e, nnrt_stream *s) {
  HOLD_STATE_LOCK;
  (void)inst;
  e->stream = s;
  e->seq = s->queued;
  note('R');
  return NNRT_OK;
}

/* The simulated device finishes the event's work now: later work on `s` then finds it done. */
static nnrt_status stream_wait_event(nnrt_backend_instance *inst, nnrt_stream *s, nnrt_event *e) {
  HOLD_STATE_LOCK;
  (void)inst;
  (void)s;
  ++stream_waits;
  note('W');
  if (e->stream) complete(e->stream, e->seq);
  return NNRT_OK;
}

static nnrt_status event_synchronize(nnrt_backend_instance *inst, nnrt_event *e) {
  HOLD_STATE_LOCK;
  (void)inst;
  note('S');
  if (e->stream) complete(e->stream, e->seq);
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
  HOLD_STATE_LOCK;
  const nnrt_op_desc *d = &op->desc;
  int64_t n = numel(&d->outputs[0]), i;
  if (injected_failure(FAULT_OP_RUN)) return NNRT_ERR_BACKEND;
  if (args->stream) {
    complete(args->stream, args->stream->queued);
    ++args->stream->queued;
    for (i = 0; i < d->n_inputs; ++i) {
      if (pending_elsewhere(args->stream, real(args->inputs[i]), 1)) {
        violation("an op read device memory before the copy writing it on another stream was waited for");
      }
    }
  }
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

/* A fixed load, as NVML would report it: 37% busy, 41 C, 256 MiB of the 1 GiB in use. */
static nnrt_status device_status(nnrt_backend_instance *inst, nnrt_device_status *s) {
  (void)inst;
  s->utilization_percent = 37;
  s->temperature_celsius = 41;
  s->memory_used_bytes = (int64_t)256 << 20;
  s->memory_total_bytes = (int64_t)FAKE_DEVICE_MEMORY;
  return NNRT_OK;
}

static nnrt_backend_v1 table;

__attribute__((visibility("default"))) const nnrt_backend_v1 *nnrt_backend_entry(uint32_t host_abi,
                                                                                 const nnrt_host_api *h) {
  const char *abi;
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
  table.host_alloc = host_alloc;
  table.host_free = host_free;
  table.event_create = event_create;
  table.event_destroy = event_destroy;
  table.event_record = event_record;
  table.stream_wait_event = stream_wait_event;
  table.event_synchronize = event_synchronize;
  table.device_status = device_status;
  abi = getenv("NNRT_FAKEGPU_ABI");
  if (abi && strcmp(abi, "1.0") == 0) table.struct_size = (uint32_t)offsetof(nnrt_backend_v1, event_create);
  return &table;
}
