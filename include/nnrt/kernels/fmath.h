// Scalar math overloaded for float and double, usable on the host and on a CUDA device.
//
// The elementwise kernels are templates over the compute type (float for f32, f16 and bf16; double
// for f64). These overloads pick the libm function of the right precision (::expf or ::exp), and
// avoid std:: functions that a device compiler may not provide.
#pragma once

#include <math.h>

#include "nnrt/kernels/kernel_common.h"

namespace nnrt::kernels {

NNRT_HD float k_exp(float x) { return ::expf(x); }
NNRT_HD double k_exp(double x) { return ::exp(x); }
NNRT_HD float k_expm1(float x) { return ::expm1f(x); }
NNRT_HD double k_expm1(double x) { return ::expm1(x); }
NNRT_HD float k_log(float x) { return ::logf(x); }
NNRT_HD double k_log(double x) { return ::log(x); }
NNRT_HD float k_log1p(float x) { return ::log1pf(x); }
NNRT_HD double k_log1p(double x) { return ::log1p(x); }
NNRT_HD float k_sqrt(float x) { return ::sqrtf(x); }
NNRT_HD double k_sqrt(double x) { return ::sqrt(x); }
NNRT_HD float k_tanh(float x) { return ::tanhf(x); }
NNRT_HD double k_tanh(double x) { return ::tanh(x); }
NNRT_HD float k_erfc(float x) { return ::erfcf(x); }
NNRT_HD double k_erfc(double x) { return ::erfc(x); }
NNRT_HD float k_erf(float x) { return ::erff(x); }
NNRT_HD double k_erf(double x) { return ::erf(x); }
NNRT_HD float k_fabs(float x) { return ::fabsf(x); }
NNRT_HD double k_fabs(double x) { return ::fabs(x); }
NNRT_HD float k_pow(float x, float y) { return ::powf(x, y); }
NNRT_HD double k_pow(double x, double y) { return ::pow(x, y); }

// a * b + c with both roundings, never one fused multiply-add: nvcc contracts a * b + c into an FMA
// by default and the host compiler (without FMA instructions) does not, and the values of a random
// stream must agree bit for bit between the CPU and GPU backends.
NNRT_HD float k_mul_add_unfused(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(a, b), c);
#else
  return a * b + c;
#endif
}
NNRT_HD double k_mul_add_unfused(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(__dmul_rn(a, b), c);
#else
  return a * b + c;
#endif
}

template <class T>
NNRT_HD bool k_isnan(T x) {
  return x != x;
}

// max and min that propagate NaN from either side (numpy's maximum/minimum, PyTorch's max/min).
template <class T>
NNRT_HD T k_max_nan(T a, T b) {
  return (a > b || a != a) ? a : b;
}
template <class T>
NNRT_HD T k_min_nan(T a, T b) {
  return (a < b || a != a) ? a : b;
}

// Plain max and min (for integers, or when NaN cannot occur).
template <class T>
NNRT_HD T k_max(T a, T b) {
  return a > b ? a : b;
}
template <class T>
NNRT_HD T k_min(T a, T b) {
  return a < b ? a : b;
}

// -1, 0 or 1; NaN stays NaN and zeros keep their sign (numpy's sign).
template <class T>
NNRT_HD T k_sign(T x) {
  return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);
}

}  // namespace nnrt::kernels
