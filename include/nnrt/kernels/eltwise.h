// Elementwise activations (nnrt_unary_alg): forward, and backward from the forward input x or,
// for the algs that allow NNRT_FLAG_USE_DST, from the forward output y.
//
// Templates over the alg so that a CPU loop dispatches once and then vectorizes what can be
// vectorized, and over the compute type T (float, or double for f64). alpha and beta are the
// attributes as the alg uses them (see nnrt_backend.h).
#pragma once

#include "nnrt/kernels/fmath.h"
#include "nnrt/kernels/kernel_common.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::kernels {

// 1/sqrt(2) and 1/sqrt(2*pi), for the exact (erf-based) GELU.
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

// Phi(x), the standard normal CDF. erfc keeps the relative accuracy for very negative x, where
// 1 + erf(x / sqrt 2) would cancel.
template <class T>
NNRT_HD T normal_cdf(T x) {
  return T(0.5) * k_erfc(-x * T(kInvSqrt2));
}

// 1 / (1 + exp(-x)) without overflow and with full relative accuracy on both sides.
template <class T>
NNRT_HD T sigmoid(T x) {
  if (x >= T(0)) return T(1) / (T(1) + k_exp(-x));
  T e = k_exp(x);
  return e / (T(1) + e);
}

template <int Alg, class T>
NNRT_HD T unary_forward(T x, T alpha, T beta) {
  if constexpr (Alg == NNRT_UNARY_NONE || Alg == NNRT_UNARY_IDENTITY) return x;
  else if constexpr (Alg == NNRT_UNARY_NEG) return -x;
  else if constexpr (Alg == NNRT_UNARY_ABS) return k_fabs(x);
  else if constexpr (Alg == NNRT_UNARY_EXP) return k_exp(x);
  else if constexpr (Alg == NNRT_UNARY_LOG) return k_log(x);
  else if constexpr (Alg == NNRT_UNARY_SQRT) return k_sqrt(x);
  else if constexpr (Alg == NNRT_UNARY_SQUARE) return x * x;
  else if constexpr (Alg == NNRT_UNARY_RELU) return x < T(0) ? T(0) : x;  // NaN passes through
  else if constexpr (Alg == NNRT_UNARY_LEAKY_RELU) return x > T(0) ? x : alpha * x;
  else if constexpr (Alg == NNRT_UNARY_ELU) return x > T(0) ? x : alpha * k_expm1(x);
  else if constexpr (Alg == NNRT_UNARY_GELU) return x * normal_cdf(x);
  else if constexpr (Alg == NNRT_UNARY_SIGMOID) return sigmoid(x);
  else if constexpr (Alg == NNRT_UNARY_TANH) return k_tanh(x);
  else if constexpr (Alg == NNRT_UNARY_LINEAR) return alpha * x + beta;
  else if constexpr (Alg == NNRT_UNARY_CLIP) return x < alpha ? alpha : (x > beta ? beta : x);
  else if constexpr (Alg == NNRT_UNARY_SIGN) return k_sign(x);
  else static_assert(Alg < 0, "not an nnrt_unary_alg");
}

// dx from dy and the forward input x. Where the function has a kink, the gradient is PyTorch's:
// RELU and LEAKY_RELU take the x <= 0 side at 0, ABS gives 0 at 0, CLIP passes the gradient on the
// closed interval [alpha, beta].
template <int Alg, class T>
NNRT_HD T unary_backward(T dy, T x, T alpha, T beta) {
  (void)beta;
  if constexpr (Alg == NNRT_UNARY_IDENTITY) return dy;
  else if constexpr (Alg == NNRT_UNARY_NEG) return -dy;
  else if constexpr (Alg == NNRT_UNARY_ABS) return dy * k_sign(x);
  else if constexpr (Alg == NNRT_UNARY_EXP) return dy * k_exp(x);
  else if constexpr (Alg == NNRT_UNARY_LOG) return dy / x;
  else if constexpr (Alg == NNRT_UNARY_SQRT) return dy / (T(2) * k_sqrt(x));
  else if constexpr (Alg == NNRT_UNARY_SQUARE) return dy * (T(2) * x);
  else if constexpr (Alg == NNRT_UNARY_RELU) return x > T(0) ? dy : T(0);
  else if constexpr (Alg == NNRT_UNARY_LEAKY_RELU) return x > T(0) ? dy : alpha * dy;
  else if constexpr (Alg == NNRT_UNARY_ELU) return x > T(0) ? dy : dy * (alpha * k_exp(x));
  else if constexpr (Alg == NNRT_UNARY_GELU)
    return dy * (normal_cdf(x) + x * (T(kInvSqrt2Pi) * k_exp(T(-0.5) * x * x)));
  else if constexpr (Alg == NNRT_UNARY_SIGMOID) {
    T s = sigmoid(x);
    return dy * (s * (T(1) - s));
  } else if constexpr (Alg == NNRT_UNARY_TANH) {
    T t = k_tanh(x);
    return dy * (T(1) - t * t);
  } else if constexpr (Alg == NNRT_UNARY_LINEAR) return alpha * dy;
  else if constexpr (Alg == NNRT_UNARY_CLIP) return (x >= alpha && x <= beta) ? dy : T(0);
  else if constexpr (Alg == NNRT_UNARY_SIGN) return T(0);
  else static_assert(Alg < 0, "not an nnrt_unary_alg");
}

// True for the algs whose gradient can be computed from the forward output (NNRT_FLAG_USE_DST).
NNRT_HD bool unary_backward_allows_dst(int alg) {
  return alg == NNRT_UNARY_RELU || alg == NNRT_UNARY_LEAKY_RELU || alg == NNRT_UNARY_ELU ||
         alg == NNRT_UNARY_SIGMOID || alg == NNRT_UNARY_TANH || alg == NNRT_UNARY_LINEAR;
}

// dx from dy and the forward output y. For LEAKY_RELU and ELU this needs alpha >= 0, so that the
// sign of y tells the side of the kink (the caller checks).
template <int Alg, class T>
NNRT_HD T unary_backward_from_dst(T dy, T y, T alpha, T beta) {
  (void)beta;
  if constexpr (Alg == NNRT_UNARY_RELU) return y > T(0) ? dy : T(0);
  else if constexpr (Alg == NNRT_UNARY_LEAKY_RELU) return y > T(0) ? dy : alpha * dy;
  else if constexpr (Alg == NNRT_UNARY_ELU) return y > T(0) ? dy : dy * (y + alpha);
  else if constexpr (Alg == NNRT_UNARY_SIGMOID) return dy * (y * (T(1) - y));
  else if constexpr (Alg == NNRT_UNARY_TANH) return dy * (T(1) - y * y);
  else if constexpr (Alg == NNRT_UNARY_LINEAR) return alpha * dy;
  else static_assert(Alg < 0, "this alg has no gradient from the forward output");
}

// Runtime dispatch for callers that apply one activation per element (fused epilogues).
template <class T>
NNRT_HD T unary_forward(int alg, T x, T alpha, T beta) {
  switch (alg) {
    case NNRT_UNARY_NEG: return unary_forward<NNRT_UNARY_NEG>(x, alpha, beta);
    case NNRT_UNARY_ABS: return unary_forward<NNRT_UNARY_ABS>(x, alpha, beta);
    case NNRT_UNARY_EXP: return unary_forward<NNRT_UNARY_EXP>(x, alpha, beta);
    case NNRT_UNARY_LOG: return unary_forward<NNRT_UNARY_LOG>(x, alpha, beta);
    case NNRT_UNARY_SQRT: return unary_forward<NNRT_UNARY_SQRT>(x, alpha, beta);
    case NNRT_UNARY_SQUARE: return unary_forward<NNRT_UNARY_SQUARE>(x, alpha, beta);
    case NNRT_UNARY_RELU: return unary_forward<NNRT_UNARY_RELU>(x, alpha, beta);
    case NNRT_UNARY_LEAKY_RELU: return unary_forward<NNRT_UNARY_LEAKY_RELU>(x, alpha, beta);
    case NNRT_UNARY_ELU: return unary_forward<NNRT_UNARY_ELU>(x, alpha, beta);
    case NNRT_UNARY_GELU: return unary_forward<NNRT_UNARY_GELU>(x, alpha, beta);
    case NNRT_UNARY_SIGMOID: return unary_forward<NNRT_UNARY_SIGMOID>(x, alpha, beta);
    case NNRT_UNARY_TANH: return unary_forward<NNRT_UNARY_TANH>(x, alpha, beta);
    case NNRT_UNARY_LINEAR: return unary_forward<NNRT_UNARY_LINEAR>(x, alpha, beta);
    case NNRT_UNARY_CLIP: return unary_forward<NNRT_UNARY_CLIP>(x, alpha, beta);
    case NNRT_UNARY_SIGN: return unary_forward<NNRT_UNARY_SIGN>(x, alpha, beta);
    default: return x;  // NONE, IDENTITY
  }
}

}  // namespace nnrt::kernels
