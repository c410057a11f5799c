// Definitions shared by every header in include/nnrt/kernels.
//
// include/nnrt/kernels holds the element-level math that must give the same answer on every backend: f16 and
// bf16 conversion, the counter-based RNG, activation functions and optimizer rules. It is
// header-only, C++ with no library dependencies, and every function is NNRT_HD so that the CUDA
// backend compiles the very same code for the device while the CPU tests check it on the host.
// Backends may include these headers (they are not the core's headers: they know no nnrt object).
#pragma once

#include <stdint.h>

#if defined(__CUDACC__)
#define NNRT_HD __host__ __device__ __forceinline__
#else
#define NNRT_HD inline
#endif
