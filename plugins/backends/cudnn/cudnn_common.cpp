#include "cudnn_common.h"

#include "device_support.h"

namespace nnrt::cudnn {

std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

void check_cuda(cudaError_t e, const char *call) {
  if (e == cudaSuccess) return;
  if (cuda_error_loses_context(e)) {
    throw Failure(NNRT_ERR_BACKEND,
                  "the GPU's CUDA context is lost: " + cuda_error_text(e) + ", seen by " + call +
                      ", which only surfaced it: an earlier kernel or copy on this device faulted. Every later call "
                      "on this device fails the same way; the process must be restarted to use it again",
                  true);
  }
  cudaGetLastError();  // clear a launch error that does not lose the context, so the next call reports its own
  throw Failure(e == cudaErrorMemoryAllocation ? NNRT_ERR_OUT_OF_MEMORY : NNRT_ERR_BACKEND,
                std::string(call) + ": " + cuda_error_text(e));
}

void check_cublas(cublasStatus_t s, const char *call) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw Failure(s == CUBLAS_STATUS_ALLOC_FAILED ? NNRT_ERR_OUT_OF_MEMORY
                : s == CUBLAS_STATUS_NOT_SUPPORTED ? NNRT_ERR_UNSUPPORTED
                                                  : NNRT_ERR_BACKEND,
                std::string(call) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

void check_cudnn(cudnnStatus_t s, const char *call) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  // cuDNN 9 groups its statuses by thousands: 3xxx "not supported" (shape, layout, data type...).
  const bool oom = s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
                   s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
  throw Failure(oom ? NNRT_ERR_OUT_OF_MEMORY : (s / 1000 == 3 ? NNRT_ERR_UNSUPPORTED : NNRT_ERR_BACKEND),
                std::string(call) + ": " + cudnnGetErrorString(s));
}

}  // namespace nnrt::cudnn
