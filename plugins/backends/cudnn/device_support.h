// Which GPUs this build's device code runs on, and which CUDA errors end a process's use of a GPU.
// Pure functions, so that both rules are unit-tested without a GPU.
#pragma once

#include <driver_types.h>

#include <string>

namespace nnrt::cudnn {

// "" when a GPU of compute capability major.minor can run this build's kernels; else why not.
// Machine code built for sm_XY runs on X.Z for Z >= Y; the PTX of the newest architecture is
// compiled by the driver for any GPU at least that new. The architectures are meson's list
// (NNRT_CUDA_SM, NNRT_CUDA_PTX), so that the rule follows the build.
std::string compute_capability_problem(int major, int minor);

// True for the CUDA errors that leave the process's context on that device unusable: a kernel
// that faulted (illegal or misaligned address, illegal instruction, trap, assert, timeout) or an
// uncorrectable memory error. Every later call in the process returns the same error, whichever
// call it is, so the call that reports it is where it surfaced, not what caused it.
bool cuda_error_loses_context(cudaError_t error);

}  // namespace nnrt::cudnn
