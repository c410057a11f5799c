// What the cuDNN backend's files share: the opened device (instance), the op interface, and the
// conversion of CUDA, cuBLAS and cuDNN failures into an nnrt_status plus a message.
//
// Only this backend's host files include it; kernels.cu sees kernels.h alone, so that nvcc compiles
// as little as possible.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "cudnn_plugin.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::cudnn {

// A failure inside the backend, carried to the plugin kit's barrier around every table function,
// which turns it into its status and a message.
struct Failure : plugin_kit::Error {
  Failure(nnrt_status s, const std::string &what, bool lost = false)
      : plugin_kit::Error(s, what), status(s), context_lost(lost) {}
  nnrt_status status;
  bool context_lost;  // a CUDA error that leaves the process's context unusable (device_support.h)
};

// Throw a Failure naming the call that failed and the library's own text for the error. A CUDA
// error that loses the context says so, and that the call only surfaced it.
void check_cuda(cudaError_t e, const char *call);
void check_cublas(cublasStatus_t s, const char *call);
void check_cudnn(cudnnStatus_t s, const char *call);
#define NNRT_CUDA(call) ::nnrt::cudnn::check_cuda((call), #call)
#define NNRT_CUBLAS(call) ::nnrt::cudnn::check_cublas((call), #call)
#define NNRT_CUDNN(call) ::nnrt::cudnn::check_cudnn((call), #call)

// "cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime version)"
std::string cuda_error_text(cudaError_t e);

// An op the backend created: a cuBLASLt plan, a cuDNN execution plan, or a kernel launch recipe.
class Op {
 public:
  virtual ~Op() = default;
  virtual size_t workspace_bytes() const { return 0; }
  virtual void run(const nnrt_op_args &args, cudaStream_t stream) const = 0;
};

}  // namespace nnrt::cudnn

// One device opened for one context: the device index and the library handles, all bound to it.
struct nnrt_backend_instance {
  int device = 0;
  std::string pci_bus_id;  // "0000:3B:00.0", for NVML; "" when CUDA did not say
  bool deterministic = false;
  std::atomic<bool> lost{false};  // a call saw the context lost: every later call fails at once
  std::string lost_reason;         // written once, before lost is set
  std::mutex lost_mutex;
  cublasLtHandle_t cublaslt = nullptr;
  cudnnHandle_t cudnn = nullptr;
  std::mutex cudnn_mutex;  // a cuDNN handle has one stream at a time: runs that use it take turns
};

struct nnrt_backend_op {
  nnrt_backend_instance *inst = nullptr;
  std::unique_ptr<nnrt::cudnn::Op> op;
};

// A stream is a cudaStream_t; the host sees an opaque pointer.
inline cudaStream_t to_cuda(nnrt_stream *s) { return reinterpret_cast<cudaStream_t>(s); }
