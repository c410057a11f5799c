#include "device_support.h"

#include <cstdlib>
#include <vector>

namespace nnrt::cudnn {

namespace {

#ifndef NNRT_CUDA_SM
#error "meson passes NNRT_CUDA_SM, the architectures kernels.cu is built for, e.g. \"75,80,86,89,90\""
#endif
#ifndef NNRT_CUDA_PTX
#error "meson passes NNRT_CUDA_PTX, the architecture whose PTX kernels.cu carries, e.g. 90"
#endif

std::vector<int> machine_code_architectures() {
  std::vector<int> out;
  const char *p = NNRT_CUDA_SM;
  while (*p) {
    char *end = nullptr;
    out.push_back(static_cast<int>(std::strtol(p, &end, 10)));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

std::string capability_text(int sm) { return std::to_string(sm / 10) + "." + std::to_string(sm % 10); }

}  // namespace

std::string compute_capability_problem(int major, int minor) {
  const int sm = major * 10 + minor;
  const std::vector<int> built = machine_code_architectures();
  for (int b : built)
    if (b / 10 == major && b % 10 <= minor) return "";
  if (sm >= NNRT_CUDA_PTX) return "";
  std::string list;
  for (int b : built) list += (list.empty() ? "" : ", ") + capability_text(b);
  return "compute capability " + capability_text(sm) + " is not one this build has device code for (machine code for " +
         list + ", and PTX that newer GPUs from " + capability_text(NNRT_CUDA_PTX) + " on compile)";
}

bool cuda_error_loses_context(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
      return true;
    default: return false;
  }
}

}  // namespace nnrt::cudnn
