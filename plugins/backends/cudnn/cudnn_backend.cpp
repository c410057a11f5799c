// The cuDNN/cuBLAS backend's function table and entry point: the only place that speaks the
// plugin's C ABI. Every table function catches everything (no C++ exception may cross the
// boundary) and turns it into an nnrt_status plus a message through host->set_error().
//
// Memory: the host caches device memory itself (one caching allocator per device, src/core's
// MemoryCache over mem_alloc/mem_free, with the context's "cache" limits), so mem_alloc is a plain
// cudaMalloc; every op's workspace comes from that cache. All work of a context runs on its one
// stream, so a block freed and handed out again is reused in stream order. Batches are copied on a
// second stream from page-locked memory (host_alloc); events order that stream with the context's
// (the host's side is src/backend/staged_upload.cpp).
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "cudnn_common.h"
#include "device_support.h"
#include "library_versions.h"
#include "nvml_monitor.h"
#include "ops.h"

namespace nnrt::cudnn {
namespace {

// Runs a table function's body behind the plugin kit's barrier: Failure (a plugin_kit::Error)
// keeps its status; the message says which function failed.
template <class F>
nnrt_status guarded(const char *what, F &&f) {
  return plugin_kit::guarded<Cudnn>(what, std::forward<F>(f));
}

// Makes `device` current on the calling thread for one table function, and gives the caller's
// thread its own current device back afterwards (CUDA's current device is per thread, and the
// program around nnrt may use CUDA itself).
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      cudaGetLastError();
      previous_ = -1;
    }
    if (previous_ != device) set_ = cudaSetDevice(device);
  }
  ~DeviceScope() {
    int now = -1;
    if (previous_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;
  // Throws when the device could not be made current (functions that return no status ignore it:
  // their call then fails, or does nothing, on its own).
  void check() const { check_cuda(set_, "cudaSetDevice"); }

 private:
  int previous_ = -1;
  cudaError_t set_ = cudaSuccess;
};

// Records, once, that a call on the instance saw its context lost.
void mark_lost(nnrt_backend_instance *inst, const std::string &why) {
  std::lock_guard<std::mutex> lock(inst->lost_mutex);
  if (inst->lost.load()) return;
  inst->lost_reason = why;
  inst->lost.store(true);
}

// Runs a table function's body on an instance: on its device (DeviceScope), failing at once when
// an earlier call saw the context lost, and marking the instance lost when this one does.
template <class F>
nnrt_status on_instance(nnrt_backend_instance *inst, const char *what, F &&f) {
  return guarded(what, [&] {
    if (inst->lost.load()) throw Failure(NNRT_ERR_BACKEND, inst->lost_reason, true);
    DeviceScope scope(inst->device);
    try {
      scope.check();
      return f();
    } catch (const Failure &e) {
      if (e.context_lost) mark_lost(inst, e.what());
      throw;
    }
  });
}

// ---- probe and properties ----------------------------------------------------------------------

// "" when CUDA device `device` can run this build's kernels; else why not, naming the device.
std::string device_problem(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return "device " + std::to_string(device) + ": CUDA did not give its compute capability";
  }
  std::string problem = compute_capability_problem(major, minor);
  return problem.empty() ? "" : "device " + std::to_string(device) + ": " + problem;
}

int32_t probe(int32_t *device_count, char *reason, size_t cap) {
  *device_count = 0;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    std::snprintf(reason, cap, "no CUDA device: cudaGetDeviceCount returned %d, %s", static_cast<int>(e),
                  cuda_error_text(e).c_str());
    return 0;
  }
  if (n <= 0) {
    std::snprintf(reason, cap, "no CUDA device: cudaGetDeviceCount found 0 devices");
    return 0;
  }
  // Usable when one GPU can run this build's kernels; open refuses the others, by number.
  std::string first_problem;
  bool usable = false;
  for (int d = 0; d < n && !usable; ++d) {
    std::string problem = device_problem(d);
    usable = problem.empty();
    if (d == 0) first_problem = problem;
  }
  if (!usable) {
    std::snprintf(reason, cap, "no usable CUDA device: %s%s", first_problem.c_str(),
                  n > 1 ? " (and no other device is usable either)" : "");
    return 0;
  }
  *device_count = n;
  return 100;
}

nnrt_status device_props(int32_t device, nnrt_device_props *props) {
  return guarded("device_props", [&] {
    int n = 0;
    NNRT_CUDA(cudaGetDeviceCount(&n));
    if (device < 0 || device >= n) {
      throw Failure(NNRT_ERR_NO_DEVICE, "device " + std::to_string(device) + " does not exist (" + std::to_string(n) +
                                            " CUDA device(s))");
    }
    cudaDeviceProp p;
    NNRT_CUDA(cudaGetDeviceProperties(&p, device));
    props->kind = NNRT_DEVICE_GPU;
    const size_t name_len = strnlen(p.name, sizeof p.name);
    const size_t kept = name_len < sizeof props->name ? name_len : sizeof props->name - 1;
    std::memcpy(props->name, p.name, kept);
    props->name[kept] = 0;
    props->memory_bytes = p.totalGlobalMem;
    props->compute_major = p.major;
    props->compute_minor = p.minor;
    props->cores = p.multiProcessorCount;
    uint32_t dtypes = (1u << NNRT_DTYPE_F32) | (1u << NNRT_DTYPE_F64) | (1u << NNRT_DTYPE_F16);
    if (p.major >= 8) dtypes |= 1u << NNRT_DTYPE_BF16;  // bf16 tensor cores from Ampere on
    props->native_dtypes = dtypes;
    return NNRT_OK;
  });
}

// ---- open and close ----------------------------------------------------------------------------

void destroy_instance(nnrt_backend_instance *inst) {
  if (inst->cudnn) cudnnDestroy(inst->cudnn);
  if (inst->cublaslt) cublasLtDestroy(inst->cublaslt);
  delete inst;
}

nnrt_status open_device(const nnrt_device_config *config, nnrt_backend_instance **out) {
  return guarded("open", [&] {
    *out = nullptr;
    int32_t count = 0;
    char reason[256] = "";
    if (probe(&count, reason, sizeof reason) <= 0) throw Failure(NNRT_ERR_NO_DEVICE, reason);
    if (config->device < 0 || config->device >= count)
      throw Failure(NNRT_ERR_NO_DEVICE, "device " + std::to_string(config->device) + " does not exist (" +
                                            std::to_string(count) + " CUDA device(s))");
    if (std::string problem = device_problem(config->device); !problem.empty()) throw Failure(NNRT_ERR_NO_DEVICE, problem);
    DeviceScope scope(config->device);
    scope.check();
    auto *inst = new nnrt_backend_instance;
    inst->device = config->device;
    inst->deterministic = config->deterministic != 0;
    try {
      NNRT_CUBLAS(cublasLtCreate(&inst->cublaslt));
      NNRT_CUDNN(cudnnCreate(&inst->cudnn));
    } catch (...) {
      destroy_instance(inst);
      throw;
    }
    char bus_id[32] = "";
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, inst->device) == cudaSuccess) inst->pci_bus_id = bus_id;
    cudaGetLastError();
    plugin_kit::log<Cudnn>(NNRT_LOG_INFO, "opened device " + std::to_string(inst->device) + "; " +
                                              nvml_status_line(inst->pci_bus_id, inst->device));
    *out = inst;
    return NNRT_OK;
  });
}

void close_device(nnrt_backend_instance *inst) {
  if (!inst) return;
  DeviceScope scope(inst->device);
  destroy_instance(inst);
}

// ---- memory and streams ------------------------------------------------------------------------

nnrt_status mem_alloc(nnrt_backend_instance *inst, size_t bytes, void **out) {
  return on_instance(inst, "mem_alloc", [&] {
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);  // cudaMalloc aligns to 256 bytes or more
    if (e != cudaSuccess) {
      if (cuda_error_loses_context(e)) check_cuda(e, "cudaMalloc");
      cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      throw Failure(e == cudaErrorMemoryAllocation ? NNRT_ERR_OUT_OF_MEMORY : NNRT_ERR_BACKEND,
                    "cudaMalloc of " + std::to_string(bytes) + " bytes failed: " + cuda_error_text(e) + " (" +
                        std::to_string(free_b) + " of " + std::to_string(total_b) + " bytes free on the device)");
    }
    *out = p;
    return NNRT_OK;
  });
}

void mem_free(nnrt_backend_instance *inst, void *ptr) {
  DeviceScope scope(inst->device);
  cudaFree(ptr);
}

nnrt_status host_alloc(nnrt_backend_instance *inst, size_t bytes, void **out) {
  return on_instance(inst, "host_alloc", [&] {
    NNRT_CUDA(cudaMallocHost(out, bytes ? bytes : 1));
    return NNRT_OK;
  });
}

void host_free(nnrt_backend_instance *inst, void *ptr) {
  DeviceScope scope(inst->device);
  cudaFreeHost(ptr);
}

nnrt_status memcpy_async(nnrt_backend_instance *inst, void *dst, const void *src, size_t bytes, int32_t kind,
                         nnrt_stream *stream) {
  return on_instance(inst, "memcpy_async", [&] {
    cudaMemcpyKind k;
    switch (kind) {
      case NNRT_COPY_HOST_TO_DEVICE: k = cudaMemcpyHostToDevice; break;
      case NNRT_COPY_DEVICE_TO_HOST: k = cudaMemcpyDeviceToHost; break;
      case NNRT_COPY_DEVICE_TO_DEVICE: k = cudaMemcpyDeviceToDevice; break;
      default: throw Failure(NNRT_ERR_INVALID_ARGUMENT, "unknown copy kind " + std::to_string(kind));
    }
    NNRT_CUDA(cudaMemcpyAsync(dst, src, bytes, k, to_cuda(stream)));
    return NNRT_OK;
  });
}

nnrt_status memset_async(nnrt_backend_instance *inst, void *dst, int value, size_t bytes, nnrt_stream *stream) {
  return on_instance(inst, "memset_async", [&] {
    NNRT_CUDA(cudaMemsetAsync(dst, value, bytes, to_cuda(stream)));
    return NNRT_OK;
  });
}

nnrt_status stream_create(nnrt_backend_instance *inst, nnrt_stream **out) {
  return on_instance(inst, "stream_create", [&] {
    cudaStream_t s = nullptr;
    NNRT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *out = reinterpret_cast<nnrt_stream *>(s);
    return NNRT_OK;
  });
}

void stream_destroy(nnrt_backend_instance *inst, nnrt_stream *stream) {
  DeviceScope scope(inst->device);
  cudaStreamDestroy(to_cuda(stream));
}

nnrt_status stream_synchronize(nnrt_backend_instance *inst, nnrt_stream *stream) {
  return on_instance(inst, "stream_synchronize", [&] {
    NNRT_CUDA(cudaStreamSynchronize(to_cuda(stream)));
    return NNRT_OK;
  });
}

// ---- events: the copy stream and the context's stream ordered without blocking the host --------

inline cudaEvent_t to_cuda(nnrt_event *e) { return reinterpret_cast<cudaEvent_t>(e); }

nnrt_status event_create(nnrt_backend_instance *inst, nnrt_event **out) {
  return on_instance(inst, "event_create", [&] {
    cudaEvent_t e = nullptr;
    NNRT_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));  // an ordering point, not a clock
    *out = reinterpret_cast<nnrt_event *>(e);
    return NNRT_OK;
  });
}

void event_destroy(nnrt_backend_instance *inst, nnrt_event *event) {
  DeviceScope scope(inst->device);
  cudaEventDestroy(to_cuda(event));
}

nnrt_status event_record(nnrt_backend_instance *inst, nnrt_event *event, nnrt_stream *stream) {
  return on_instance(inst, "event_record", [&] {
    NNRT_CUDA(cudaEventRecord(to_cuda(event), to_cuda(stream)));
    return NNRT_OK;
  });
}

nnrt_status stream_wait_event(nnrt_backend_instance *inst, nnrt_stream *stream, nnrt_event *event) {
  return on_instance(inst, "stream_wait_event", [&] {
    NNRT_CUDA(cudaStreamWaitEvent(to_cuda(stream), to_cuda(event), 0));
    return NNRT_OK;
  });
}

nnrt_status event_synchronize(nnrt_backend_instance *inst, nnrt_event *event) {
  return on_instance(inst, "event_synchronize", [&] {
    NNRT_CUDA(cudaEventSynchronize(to_cuda(event)));
    return NNRT_OK;
  });
}

// ---- the device's load, for the training progress -----------------------------------------------

nnrt_status device_status(nnrt_backend_instance *inst, nnrt_device_status *status) {
  return guarded("device_status", [&] {
    NvmlReading r = nvml_read(inst->pci_bus_id, inst->device);
    status->utilization_percent = r.utilization_percent;
    status->temperature_celsius = r.temperature_celsius;
    if (NNRT_HAS_MEMBER(status, nnrt_device_status, memory_total_bytes)) {
      status->memory_used_bytes = r.memory_used_bytes;
      status->memory_total_bytes = r.memory_total_bytes;
    }
    return NNRT_OK;
  });
}

// ---- ops ---------------------------------------------------------------------------------------

// supports and op_create run behind plugin_kit::supports and op_create: no NULL arguments, the op
// within Cudnn::max_dim, exceptions caught.
int32_t supports(nnrt_backend_instance *, const nnrt_op_desc *desc) { return op_refusal(*desc).empty() ? 1 : 0; }

nnrt_status op_create(nnrt_backend_instance *inst, const nnrt_op_desc *desc, nnrt_backend_op **out,
                      size_t *workspace_bytes) {
  *out = nullptr;
  if (inst->lost.load()) throw Failure(NNRT_ERR_BACKEND, inst->lost_reason, true);
  DeviceScope scope(inst->device);
  auto op = std::make_unique<nnrt_backend_op>();
  op->inst = inst;
  try {
    scope.check();
    op->op = create_op(*inst, *desc);
  } catch (const Failure &e) {
    if (e.context_lost) mark_lost(inst, e.what());
    throw;
  }
  *workspace_bytes = op->op->workspace_bytes();
  *out = op.release();
  return NNRT_OK;
}

nnrt_status op_run(nnrt_backend_op *op, const nnrt_op_args *args) {
  return on_instance(op->inst, "op_run", [&] {
    op->op->run(*args, to_cuda(args->stream));
    return NNRT_OK;
  });
}

void op_destroy(nnrt_backend_op *op) { delete op; }

// ---- version check and the table ---------------------------------------------------------------

// "" when the cuDNN and cuBLAS found at run time can serve this build; else why not.
std::string library_problem() {
  std::string p = version_problem("cuDNN", cudnn_version_from_int(CUDNN_VERSION),
                                  cudnn_version_from_int(static_cast<long>(cudnnGetVersion())));
  if (!p.empty()) return p;
  return version_problem("cuBLASLt", cublas_version_from_int(CUBLAS_VERSION),
                         cublas_version_from_int(static_cast<long>(cublasLtGetVersion())));
}

std::string version_string() {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  int driver = 0;
  cudaDriverGetVersion(&driver);
  std::string s = "cuDNN " + version_text(cudnn_version_from_int(static_cast<long>(cudnnGetVersion()))) +
                  ", cuBLASLt " + version_text(cublas_version_from_int(static_cast<long>(cublasLtGetVersion()))) +
                  ", CUDA runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) +
                  ", driver " + (driver ? std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10)
                                        : std::string("none"));
  std::string nvml = nvml_unavailable_reason();
  s += nvml.empty() ? ", NVML loaded" : "; " + nvml;
  return s;
}

}  // namespace
}  // namespace nnrt::cudnn

extern "C" __attribute__((visibility("default"))) const nnrt_backend_v1 *nnrt_backend_entry(uint32_t host_abi,
                                                                                          const nnrt_host_api *host) {
  using namespace nnrt::cudnn;
  using nnrt::plugin_kit::barrier;
  if (!nnrt::plugin_kit::accept_host<Cudnn>(host_abi, host, NNRT_CUDNN_HOST_CALLS)) return nullptr;
  static std::once_flag once;
  static std::string problem, version;
  static nnrt_backend_v1 table;
  try {
    std::call_once(once, [] {
      problem = library_problem();
      if (!problem.empty()) return;
      version = version_string();
      table = nnrt::plugin_kit::backend_table<Cudnn>();
      table.name = "cudnn";
      table.version = version.c_str();
      table.kind = NNRT_DEVICE_GPU;
      table.flags = 0;
      table.probe = barrier<Cudnn, probe>;
      table.device_props = barrier<Cudnn, device_props>;
      table.open = barrier<Cudnn, open_device>;
      table.close = barrier<Cudnn, close_device>;
      table.mem_alloc = barrier<Cudnn, mem_alloc>;
      table.mem_free = barrier<Cudnn, mem_free>;
      table.host_alloc = barrier<Cudnn, host_alloc>;
      table.host_free = barrier<Cudnn, host_free>;
      table.memcpy_async = barrier<Cudnn, memcpy_async>;
      table.memset_async = barrier<Cudnn, memset_async>;
      table.stream_create = barrier<Cudnn, stream_create>;
      table.stream_destroy = barrier<Cudnn, stream_destroy>;
      table.stream_synchronize = barrier<Cudnn, stream_synchronize>;
      table.supports = nnrt::plugin_kit::supports<Cudnn, supports>;
      table.op_create = nnrt::plugin_kit::op_create<Cudnn, op_create>;
      table.op_run = barrier<Cudnn, op_run>;
      table.op_destroy = barrier<Cudnn, op_destroy>;
      table.event_create = barrier<Cudnn, event_create>;
      table.event_destroy = barrier<Cudnn, event_destroy>;
      table.event_record = barrier<Cudnn, event_record>;
      table.stream_wait_event = barrier<Cudnn, stream_wait_event>;
      table.event_synchronize = barrier<Cudnn, event_synchronize>;
      table.device_status = barrier<Cudnn, device_status>;
    });
  } catch (...) {
    nnrt::plugin_kit::report<Cudnn>(nullptr, "could not initialise");
    return nullptr;
  }
  if (!problem.empty()) {
    nnrt::plugin_kit::report<Cudnn>(nullptr, "refuses to load: " + problem);
    return nullptr;
  }
  return &table;
}
