// The oneDNN backend's function table and entry point: the only place that speaks the plugin's C
// ABI. Every table function catches everything (no C++ exception may cross the boundary) and turns
// it into an nnrt_status plus a message through host->set_error().
#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>

#include "onednn_common.h"

using nnrt::onednn::Op;

// One device opened for one context. Besides the thread bound, it remembers supports() verdicts:
// the host may ask for the same descriptor often, and the answer costs a primitive-descriptor
// search.
struct nnrt_backend_instance {
  int threads = 1;
  int deterministic = 0;
  std::mutex verdicts_mutex;
  std::unordered_map<std::string, bool> verdicts;
};

struct nnrt_backend_op {
  int threads;  // the OpenMP threads the op was planned for and runs on
  std::unique_ptr<Op> op;
};

namespace nnrt::onednn {
namespace {

// ---- table functions -----------------------------------------------------------------------

// Every table function runs behind the plugin kit's barrier (see table()): code here throws, with
// plugin_kit::fail, Unsupported or oneDNN's dnnl::error, and Onednn::translate gives the status.
using plugin_kit::fail;

const char *isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
#if DNNL_VERSION_MAJOR < 3  // 3.x dropped the Xeon Phi ISAs
    case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
#endif
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "no SIMD";
  }
}

// ISA values are bit sets: a newer ISA holds every bit of the older ones it includes.
bool isa_includes(dnnl::cpu_isa isa, dnnl::cpu_isa what) {
  auto have = static_cast<unsigned>(isa), need = static_cast<unsigned>(what);
  return (have & need) == need;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t start = line.find_first_not_of(" \t", colon + 1);
        if (start != std::string::npos) return line.substr(start);
      }
    }
  }
  return "CPU";
}

int32_t probe(int32_t *device_count, char *reason, size_t reason_cap) {
  try {
    dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    if (!isa_includes(isa, dnnl::cpu_isa::sse41)) {
      if (reason && reason_cap > 0)
        std::snprintf(reason, reason_cap, "oneDNN needs SSE4.1, which this CPU does not have");
      if (device_count) *device_count = 0;
      return 0;
    }
    if (device_count) *device_count = 1;
    return 100;
  } catch (...) {
    if (reason && reason_cap > 0) std::snprintf(reason, reason_cap, "oneDNN failed to inspect the CPU");
    if (device_count) *device_count = 0;
    return 0;
  }
}

nnrt_status device_props(int32_t device, nnrt_device_props *props) {
  if (!props || device != 0)
    fail(NNRT_ERR_INVALID_ARGUMENT, "expected device 0 and a non-NULL props, got device ", device);
  dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  // Fill a full-size copy, then hand back as much as the host's struct holds.
  nnrt_device_props p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = props->struct_size < sizeof p ? props->struct_size : static_cast<uint32_t>(sizeof p);
  p.kind = NNRT_DEVICE_CPU;
  std::snprintf(p.name, sizeof p.name, "%s (%s)", cpu_model_name().c_str(), isa_name(isa));
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  p.memory_bytes = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  p.cores = static_cast<int32_t>(std::thread::hardware_concurrency());
  p.native_dtypes = 1u << NNRT_DTYPE_F32;
  if (isa_includes(isa, dnnl::cpu_isa::avx512_core_bf16)) p.native_dtypes |= 1u << NNRT_DTYPE_BF16;
  std::memcpy(props, &p, p.struct_size);
  return NNRT_OK;
}

nnrt_status open_instance(const nnrt_device_config *config, nnrt_backend_instance **out) {
  if (!config || !out || config->struct_size < sizeof(nnrt_device_config))
    fail(NNRT_ERR_INVALID_ARGUMENT, "expected a device config of at least ", sizeof(nnrt_device_config),
         " bytes and a non-NULL out");
  if (config->device != 0)
    fail(NNRT_ERR_NO_DEVICE, "the CPU backend has one device (0), asked for ", config->device);
  cpu_engine();  // fail here, not in the first op, if oneDNN cannot make an engine
  auto *inst = new nnrt_backend_instance;
  inst->threads = config->threads > 0 ? config->threads
                                      : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  inst->deterministic = config->deterministic;
  *out = inst;
  return NNRT_OK;
}

void close_instance(nnrt_backend_instance *instance) { delete instance; }

// A full-size, zero-padded copy of the host's descriptor: a host of an older minor ABI may pass a
// shorter struct, and equal descriptors must give equal supports() keys.
nnrt_op_desc normalized(const nnrt_op_desc *desc) {
  nnrt_op_desc d;
  std::memset(&d, 0, sizeof d);
  size_t n = desc->struct_size < sizeof d ? desc->struct_size : sizeof d;
  std::memcpy(&d, desc, n);
  return d;
}

using Factory = std::unique_ptr<Op> (*)(const Build &);

Factory factory_for(int32_t kind) {
  switch (kind) {
    case NNRT_OP_COPY: return make_copy;
    case NNRT_OP_UNARY: return make_unary;
    case NNRT_OP_UNARY_BACKWARD: return make_unary_backward;
    case NNRT_OP_BINARY: return make_binary;
    case NNRT_OP_REDUCE: return make_reduce;
    case NNRT_OP_MATMUL: return make_matmul;
    case NNRT_OP_SOFTMAX: return make_softmax;
    case NNRT_OP_SOFTMAX_BACKWARD: return make_softmax_backward;
    case NNRT_OP_CONV2D: return make_conv;
    case NNRT_OP_CONV2D_BACKWARD_DATA: return make_conv_backward_data;
    case NNRT_OP_CONV2D_BACKWARD_WEIGHTS: return make_conv_backward_weights;
    case NNRT_OP_POOL2D: return make_pool;
    case NNRT_OP_POOL2D_BACKWARD: return make_pool_backward;
    case NNRT_OP_BATCHNORM: return make_batchnorm;
    case NNRT_OP_BATCHNORM_BACKWARD: return make_batchnorm_backward;
    case NNRT_OP_LAYERNORM: return make_layernorm;
    case NNRT_OP_LAYERNORM_BACKWARD: return make_layernorm_backward;
    case NNRT_OP_MATMUL_INT8: return make_matmul_int8;
    case NNRT_OP_CONV2D_INT8: return make_conv2d_int8;
    case NNRT_OP_QUANTIZE: return make_quantize;
    case NNRT_OP_ATTENTION: return make_attention;
    case NNRT_OP_ATTENTION_BACKWARD: return make_attention_backward;
    default: return nullptr;  // fill, random, losses, dropout, gather/scatter, optimizer, argreduce
  }
}


// The OpenMP threads an op runs on: the instance's bound, or 1 for small work, where waking a
// team of threads costs more than it saves (a few microseconds against an op of about as many).
// Work is counted in multiply-adds for matmul and convolutions, in elements otherwise.
int threads_for(const nnrt_op_desc &d, int instance_threads) {
  constexpr int64_t kSmallWork = 32 * 1024;
  int64_t work = 0;
  if (d.kind == NNRT_OP_MATMUL && d.n_inputs >= 2 && d.n_outputs >= 1 && d.inputs[0].ndim >= 2) {
    work = element_count(d.outputs[0]) * d.inputs[0].dims[d.inputs[0].ndim - 1];  // c elements * K
  } else if ((d.kind == NNRT_OP_CONV2D || d.kind == NNRT_OP_CONV2D_BACKWARD_DATA ||
              d.kind == NNRT_OP_CONV2D_BACKWARD_WEIGHTS) && d.n_inputs >= 2 && d.n_outputs >= 1) {
    // y elements * (C / groups) * KH * KW, with y and w wherever this pass has them
    const nnrt_tensor_desc &w = d.kind == NNRT_OP_CONV2D_BACKWARD_WEIGHTS ? d.outputs[0] : d.inputs[1];
    const nnrt_tensor_desc &y = d.kind == NNRT_OP_CONV2D ? d.outputs[0] : d.inputs[d.kind == NNRT_OP_CONV2D_BACKWARD_DATA ? 0 : 1];
    work = element_count(y) * (w.ndim == 4 ? w.dims[1] * w.dims[2] * w.dims[3] : 1);
  } else if ((d.kind == NNRT_OP_ATTENTION || d.kind == NNRT_OP_ATTENTION_BACKWARD) && d.n_inputs >= 3 &&
             d.inputs[0].ndim == 4 && d.inputs[1].ndim == 4 && d.inputs[2].ndim == 4) {
    // scores * (D + Dv): the two products of each score
    const nnrt_tensor_desc &q = d.inputs[0];
    const double w = double(q.dims[0]) * double(q.dims[1]) * double(q.dims[2]) * double(d.inputs[1].dims[2]) *
                     double(q.dims[3] + d.inputs[2].dims[3]);
    work = w < double(kSmallWork) ? static_cast<int64_t>(w) : kSmallWork;
  } else {
    for (int i = 0; i < d.n_inputs && i < NNRT_OP_MAX_INPUTS; ++i) work += element_count(d.inputs[i]);
    for (int i = 0; i < d.n_outputs && i < NNRT_OP_MAX_OUTPUTS; ++i) work += element_count(d.outputs[i]);
  }
  return work < kSmallWork ? 1 : instance_threads;
}

// Builds (or, plan_only, checks) an op. oneDNN plans a primitive's work split and scratchpad for
// the thread count it sees when the primitive is made, and some kernels run that many threads
// whatever the count at execution, so the op's thread count applies here too.
std::unique_ptr<Op> build(const nnrt_op_desc &d, int threads, bool plan_only, bool deterministic) {
  OmpThreadLimit limit(threads);
  Factory f = factory_for(d.kind);
  if (!f) refuse("this op kind is left to the reference backend [kind " + std::to_string(d.kind) + "]");
  return f(Build{d, plan_only, deterministic});
}

// Behind plugin_kit::supports: instance and desc are not NULL, the op is within the limits, and an
// exception answers 0.
int32_t supports(nnrt_backend_instance *instance, const nnrt_op_desc *desc) {
  nnrt_op_desc d = normalized(desc);
  std::string key(reinterpret_cast<const char *>(&d), sizeof d);
  {
    std::lock_guard<std::mutex> lock(instance->verdicts_mutex);
    auto it = instance->verdicts.find(key);
    if (it != instance->verdicts.end()) return it->second ? 1 : 0;
  }
  bool ok = true;
  try {
    build(d, threads_for(d, instance->threads), true, instance->deterministic != 0);
  } catch (const Unsupported &u) {
    log_debug("refused op kind " + std::to_string(d.kind) + ": " + u.reason);
    ok = false;
  } catch (const dnnl::error &e) {
    log_debug("refused op kind " + std::to_string(d.kind) + ": oneDNN: " + e.what());
    ok = false;
  }
  std::lock_guard<std::mutex> lock(instance->verdicts_mutex);
  if (instance->verdicts.size() >= 4096) instance->verdicts.clear();  // a bound, not a policy
  instance->verdicts.emplace(std::move(key), ok);
  return ok ? 1 : 0;
}

// Behind plugin_kit::op_create: no NULL arguments, the op within the limits, exceptions caught.
nnrt_status op_create(nnrt_backend_instance *instance, const nnrt_op_desc *desc, nnrt_backend_op **out,
                      size_t *workspace_bytes) {
  nnrt_op_desc d = normalized(desc);
  const int threads = threads_for(d, instance->threads);
  std::unique_ptr<Op> op;
  try {
    op = build(d, threads, false, instance->deterministic != 0);
  } catch (const dnnl::error &e) {
    if (e.status == dnnl_out_of_memory) throw;
    // No implementation for this descriptor (or dims oneDNN finds inconsistent): not ours.
    refuse(std::string("oneDNN: ") + e.what());
  }
  op->n_inputs = d.n_inputs;
  op->n_outputs = d.n_outputs;
  *workspace_bytes = op->workspace_bytes();
  *out = new nnrt_backend_op{threads, std::move(op)};
  return NNRT_OK;
}

nnrt_status op_run(nnrt_backend_op *op, const nnrt_op_args *args) {
  if (!op || !args || args->struct_size < offsetof(nnrt_op_args, stream))
    fail(NNRT_ERR_INVALID_ARGUMENT, "expected an op and nnrt_op_args of at least ", offsetof(nnrt_op_args, stream),
         " bytes");
  const Op &o = *op->op;
  if (args->n_inputs != o.n_inputs || args->n_outputs != o.n_outputs)
    fail(NNRT_ERR_INVALID_ARGUMENT, "the op was created with ", o.n_inputs, " inputs and ", o.n_outputs,
         " outputs, got ", args->n_inputs, " and ", args->n_outputs);
  for (int i = 0; i < o.n_inputs; ++i)
    if (!args->inputs || !args->inputs[i]) fail(NNRT_ERR_INVALID_ARGUMENT, "input ", i, " is NULL");
  for (int i = 0; i < o.n_outputs; ++i)
    if (!args->outputs || !args->outputs[i]) fail(NNRT_ERR_INVALID_ARGUMENT, "output ", i, " is NULL");
  size_t need = o.workspace_bytes();
  if (need > 0 && (!args->workspace || args->workspace_bytes < need))
    fail(NNRT_ERR_INVALID_ARGUMENT, "the op needs a workspace of ", need, " bytes, got ",
         args->workspace ? args->workspace_bytes : 0);
  OmpThreadLimit limit(op->threads);
  o.execute(*args);
  thread_stream().wait();
  return NNRT_OK;
}

void op_destroy(nnrt_backend_op *op) { delete op; }

// The host's parallel work on oneDNN's OpenMP team (see nnrt_backend_v1::parallel_run). Right after
// a primitive its threads are still spinning (GOMP_SPINCOUNT), so a reference op between two
// primitives starts at once, where the host's own pool would first wake its sleeping workers. Inside
// a parallel region (a trainer's workers run as chunks) the chunks run on the calling thread, as
// OpenMP would run a nested region with nesting off.
void parallel_run(int64_t chunks, void (*chunk)(int64_t, void *), void *user) {
  if (chunks <= 1 || omp_in_parallel()) {
    for (int64_t i = 0; i < chunks; ++i) chunk(i, user);
    return;
  }
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static, 1)
  for (int64_t i = 0; i < chunks; ++i) chunk(i, user);
}

std::string version_string() {
  const dnnl_version_t *v = dnnl_version();
  char buf[96];
  std::snprintf(buf, sizeof buf, "oneDNN %d.%d.%d", v->major, v->minor, v->patch);
  return buf;
}

const nnrt_backend_v1 *table() {
  static const std::string version = version_string();
  static const nnrt_backend_v1 t = [] {
    nnrt_backend_v1 b = plugin_kit::backend_table<Onednn>();
    b.name = "onednn";
    b.version = version.c_str();
    b.kind = NNRT_DEVICE_CPU;
    b.flags = NNRT_BACKEND_HOST_MEMORY;  // memory and stream functions stay NULL
    b.probe = probe;
    b.device_props = plugin_kit::barrier<Onednn, device_props>;
    b.open = plugin_kit::barrier<Onednn, open_instance>;
    b.close = close_instance;
    b.supports = plugin_kit::supports<Onednn, supports>;
    b.op_create = plugin_kit::op_create<Onednn, op_create>;
    b.op_run = plugin_kit::barrier<Onednn, op_run>;
    b.op_destroy = op_destroy;
    b.parallel_run = parallel_run;
    return b;
  }();
  return &t;
}

const nnrt_backend_v1 *entry(uint32_t host_abi, const nnrt_host_api *host) {
  if (!plugin_kit::accept_host<Onednn>(host_abi, host, {NNRT_HOST_FUNCTION(nnrt_host_api, log)})) return nullptr;
  try {
    const nnrt_backend_v1 *t = table();
    log_debug(std::string("loaded, ") + t->version);
    return t;
  } catch (...) {
    plugin_kit::report<Onednn>(nullptr, "failed to initialize");
    return nullptr;
  }
}

}  // namespace
}  // namespace nnrt::onednn

#define NNRT_ONEDNN_EXPORT extern "C" __attribute__((visibility("default")))

// The name every plugin exports. A static build that links several backends defines
// NNRT_BACKEND_STATIC and registers the uniquely named entry below instead.
#ifndef NNRT_BACKEND_STATIC
NNRT_ONEDNN_EXPORT const nnrt_backend_v1 *nnrt_backend_entry(uint32_t host_abi, const nnrt_host_api *host) {
  return nnrt::onednn::entry(host_abi, host);
}
#endif

NNRT_ONEDNN_EXPORT const nnrt_backend_v1 *nnrt_backend_onednn_entry(uint32_t host_abi, const nnrt_host_api *host) {
  return nnrt::onednn::entry(host_abi, host);
}
