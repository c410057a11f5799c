#include "reference_backend.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <new>
#include <string>
#include <thread>

#include "errors.h"
#include "op_kernel.h"
#include "validate.h"
#include "nnrt/kernels/op_manifest.h"

namespace nnrt::reference {
namespace {

// The reference backend as the plugin kit sees it (nnrt/plugin_kit.hpp). No size limits: it indexes
// in 64 bits throughout, and it is where ops too large for another backend run.
struct Reference {
  static constexpr const char *name = "reference backend";
  using Host = nnrt_host_api;
  static constexpr int64_t max_dim = 0;
  static constexpr int64_t max_elements = 0;
};

struct Instance {
  Exec exec;
};

struct Op {
  nnrt_op_desc desc;  // a copy: the descriptor is not kept by reference
  KernelPtr kernel;
};

using Factory = KernelPtr (*)(const OpSetup &);

Factory factory_for(int32_t kind) {
  switch (kind) {
    case NNRT_OP_COPY: return create_copy;
    case NNRT_OP_FILL: return create_fill;
    case NNRT_OP_RANDOM: return create_random;
    case NNRT_OP_UNARY: return create_unary;
    case NNRT_OP_UNARY_BACKWARD: return create_unary_backward;
    case NNRT_OP_BINARY: return create_binary;
    case NNRT_OP_REDUCE: return create_reduce;
    case NNRT_OP_ARGREDUCE: return create_argreduce;
    case NNRT_OP_MATMUL: return create_matmul;
    case NNRT_OP_SOFTMAX: return create_softmax;
    case NNRT_OP_SOFTMAX_BACKWARD: return create_softmax_backward;
    case NNRT_OP_CONV2D: return create_conv2d;
    case NNRT_OP_CONV2D_BACKWARD_DATA: return create_conv2d_backward_data;
    case NNRT_OP_CONV2D_BACKWARD_WEIGHTS: return create_conv2d_backward_weights;
    case NNRT_OP_POOL2D: return create_pool2d;
    case NNRT_OP_POOL2D_BACKWARD: return create_pool2d_backward;
    case NNRT_OP_BATCHNORM: return create_batchnorm;
    case NNRT_OP_BATCHNORM_BACKWARD: return create_batchnorm_backward;
    case NNRT_OP_LOSS: return create_loss;
    case NNRT_OP_LOSS_BACKWARD: return create_loss_backward;
    case NNRT_OP_DROPOUT: return create_dropout;
    case NNRT_OP_DROPOUT_BACKWARD: return create_dropout_backward;
    case NNRT_OP_GATHER: return create_gather;
    case NNRT_OP_SCATTER_ADD: return create_scatter_add;
    case NNRT_OP_OPTIMIZER_UPDATE: return create_optimizer_update;
    case NNRT_OP_LAYERNORM: return create_layernorm;
    case NNRT_OP_LAYERNORM_BACKWARD: return create_layernorm_backward;
    case NNRT_OP_QUANTIZE: return create_quantize;
    case NNRT_OP_MATMUL_INT8: return create_matmul_int8;
    case NNRT_OP_CONV2D_INT8: return create_conv2d_int8;
    case NNRT_OP_ATTENTION: return create_attention;
    case NNRT_OP_ATTENTION_BACKWARD: return create_attention_backward;
    default: return nullptr;
  }
}

// Validates the descriptor and builds its kernel; throws OpError.
KernelPtr build_kernel(const Instance &instance, const nnrt_op_desc &desc) {
  if (desc.struct_size < sizeof(nnrt_op_desc))
    fail(NNRT_ERR_INVALID_ARGUMENT, "descriptor struct_size is %u; expected at least %zu",
         desc.struct_size, sizeof(nnrt_op_desc));
  validate_tensors(desc);
  Factory factory = factory_for(desc.kind);
  if (!factory) fail(NNRT_ERR_UNSUPPORTED, "op kind %d is unknown", desc.kind);
  const kernels::OpKindInfo &info = kernels::op_kind_info(desc.kind);
  expect_counts(desc, info.inputs_min, info.inputs_max, info.input_names, info.outputs_min, info.outputs_max,
                info.output_names);
  return factory(OpSetup{desc, instance.exec});
}

// ---- The table functions ----------------------------------------------------------------------

int32_t probe(int32_t *device_count, char *reason, size_t reason_cap) {
  (void)reason;
  (void)reason_cap;
  if (device_count) *device_count = 1;
  return 1;
}

void cpu_model_name(char *out, size_t cap) {
  snprintf(out, cap, "CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char *colon = strchr(line, ':');
    if (!colon) break;
    const char *start = colon + 1;
    while (*start == ' ' || *start == '\t') ++start;
    size_t len = strcspn(start, "\n");
    snprintf(out, cap, "%.*s", static_cast<int>(len), start);
    break;
  }
  fclose(f);
}

nnrt_status device_props(int32_t device, nnrt_device_props *props) {
  if (!props || props->struct_size < offsetof(nnrt_device_props, name))
    fail(NNRT_ERR_INVALID_ARGUMENT, "device_props needs a props struct with struct_size set");
  if (device != 0) fail(NNRT_ERR_NO_DEVICE, "device %d does not exist; it has device 0 only", device);
  if (NNRT_HAS_MEMBER(props, nnrt_device_props, kind)) props->kind = NNRT_DEVICE_CPU;
  if (NNRT_HAS_MEMBER(props, nnrt_device_props, name)) cpu_model_name(props->name, sizeof props->name);
  if (NNRT_HAS_MEMBER(props, nnrt_device_props, memory_bytes)) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    props->memory_bytes = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  }
  if (NNRT_HAS_MEMBER(props, nnrt_device_props, compute_major)) props->compute_major = 0;
  if (NNRT_HAS_MEMBER(props, nnrt_device_props, compute_minor)) props->compute_minor = 0;
  if (NNRT_HAS_MEMBER(props, nnrt_device_props, cores))
    props->cores = static_cast<int32_t>(std::thread::hardware_concurrency());
  if (NNRT_HAS_MEMBER(props, nnrt_device_props, native_dtypes))  // f16/bf16 are computed in f32
    props->native_dtypes = (1u << NNRT_DTYPE_F32) | (1u << NNRT_DTYPE_F64) | (1u << NNRT_DTYPE_I32) |
                           (1u << NNRT_DTYPE_I64) | (1u << NNRT_DTYPE_U8) | (1u << NNRT_DTYPE_BOOL);
  return NNRT_OK;
}

nnrt_status open_device(const nnrt_device_config *config, nnrt_backend_instance **out) {
  if (!config || !out || config->struct_size < offsetof(nnrt_device_config, pool) + sizeof(config->pool))
    fail(NNRT_ERR_INVALID_ARGUMENT, "open needs a config (with struct_size set) and an out pointer");
  const nnrt_host_api *host = plugin_kit::host<Reference>();
  if (!host) return NNRT_ERR_INVALID_ARGUMENT;  // backend_entry was never called: nobody to tell
  if (config->device != 0)
    fail(NNRT_ERR_NO_DEVICE, "device %d does not exist; it has device 0 only", config->device);
  Instance *instance = new Instance;
  instance->exec.host = host;
  instance->exec.pool = config->pool;
  int threads = config->pool ? host->pool_threads(config->pool) : 1;
  instance->exec.threads = threads < 1 ? 1 : threads;
  *out = reinterpret_cast<nnrt_backend_instance *>(instance);
  return NNRT_OK;
}

void close_device(nnrt_backend_instance *instance) { delete reinterpret_cast<Instance *>(instance); }

int32_t supports(nnrt_backend_instance *instance, const nnrt_op_desc *desc) {
  try {
    build_kernel(*reinterpret_cast<Instance *>(instance), *desc);
    return 1;
  } catch (const OpError &) {
    return 0;
  }
}

nnrt_status op_create(nnrt_backend_instance *instance, const nnrt_op_desc *desc, nnrt_backend_op **out,
                      size_t *workspace_bytes) {
  return plugin_kit::guarded<Reference>(op_kind_name(desc->kind), [&] {
    if (desc->struct_size < sizeof(nnrt_op_desc))  // checked before the copy reads that many bytes
      fail(NNRT_ERR_INVALID_ARGUMENT, "descriptor struct_size is %u; expected at least %zu", desc->struct_size,
           sizeof(nnrt_op_desc));
    auto op = std::make_unique<Op>();
    memcpy(&op->desc, desc, sizeof(nnrt_op_desc));
    op->desc.struct_size = sizeof(nnrt_op_desc);
    op->kernel = build_kernel(*reinterpret_cast<Instance *>(instance), op->desc);
    *workspace_bytes = op->kernel->workspace_bytes();
    *out = reinterpret_cast<nnrt_backend_op *>(op.release());
    return NNRT_OK;
  });
}

// Checks the run arguments against the descriptor; throws OpError.
void check_args(const Op &op, const nnrt_op_args &args) {
  const nnrt_op_desc &d = op.desc;
  if (args.struct_size < sizeof(nnrt_op_args))
    fail(NNRT_ERR_INVALID_ARGUMENT, "args struct_size is %u; expected at least %zu", args.struct_size,
         sizeof(nnrt_op_args));
  if (args.n_inputs != d.n_inputs || args.n_outputs != d.n_outputs)
    fail(NNRT_ERR_INVALID_ARGUMENT, "args have %d inputs and %d outputs; the op was created with %d and %d",
         args.n_inputs, args.n_outputs, d.n_inputs, d.n_outputs);
  if ((d.n_inputs > 0 && !args.inputs) || (d.n_outputs > 0 && !args.outputs))
    fail(NNRT_ERR_INVALID_ARGUMENT, "args.inputs or args.outputs is NULL");
  for (int i = 0; i < d.n_inputs; ++i)
    if (!args.inputs[i] && element_count(d.inputs[i]) > 0)
      fail(NNRT_ERR_INVALID_ARGUMENT, "input %d is NULL but has %lld elements", i,
           static_cast<long long>(element_count(d.inputs[i])));
  for (int i = 0; i < d.n_outputs; ++i)
    if (!args.outputs[i] && element_count(d.outputs[i]) > 0)
      fail(NNRT_ERR_INVALID_ARGUMENT, "output %d is NULL but has %lld elements", i,
           static_cast<long long>(element_count(d.outputs[i])));
  size_t need = op.kernel->workspace_bytes();
  if (need > 0 && (!args.workspace || args.workspace_bytes < need))
    fail(NNRT_ERR_INVALID_ARGUMENT, "the workspace is %zu bytes at %p; op_create asked for %zu",
         args.workspace_bytes, args.workspace, need);
}

nnrt_status op_run(nnrt_backend_op *handle, const nnrt_op_args *args) {
  if (!handle || !args) fail(NNRT_ERR_INVALID_ARGUMENT, "op_run needs an op and args");
  const Op &op = *reinterpret_cast<const Op *>(handle);
  return plugin_kit::guarded<Reference>(op_kind_name(op.desc.kind), [&] {
    check_args(op, *args);
    op.kernel->run(*args);
    return NNRT_OK;
  });
}

void op_destroy(nnrt_backend_op *op) { delete reinterpret_cast<Op *>(op); }

using plugin_kit::barrier;

const nnrt_backend_v1 *table() {
  static const nnrt_backend_v1 t = [] {
    nnrt_backend_v1 b = plugin_kit::backend_table<Reference>();
    b.name = "reference";
    b.version = "nnrt reference 0.1";
    b.kind = NNRT_DEVICE_CPU;
    // Host memory: the memory and stream functions stay NULL, as all work completes inside op_run.
    // No events (no second stream to order), no device_status (nothing to add to the progress on
    // a CPU), no parallel_run (the reference backend is the host pool's user, not a pool).
    b.flags = NNRT_BACKEND_HOST_MEMORY;
    b.probe = probe;
    b.device_props = barrier<Reference, device_props>;
    b.open = barrier<Reference, open_device>;
    b.close = close_device;
    b.supports = plugin_kit::supports<Reference, supports>;
    b.op_create = plugin_kit::op_create<Reference, op_create>;
    b.op_run = barrier<Reference, op_run>;
    b.op_destroy = op_destroy;
    return b;
  }();
  return &t;
}

}  // namespace

const nnrt_backend_v1 *backend_entry(uint32_t host_abi, const nnrt_host_api *host) {
  if (!plugin_kit::accept_host<Reference>(host_abi, host, {NNRT_HOST_FUNCTION(nnrt_host_api, parallel_for),
                                                          NNRT_HOST_FUNCTION(nnrt_host_api, pool_threads)}))
    return nullptr;
  return table();
}

}  // namespace nnrt::reference
