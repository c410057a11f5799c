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
constexpr double kSqrt2 = 1.41421356237309504880;

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

// sqrt(2 / pi) and the cubic coefficient of the tanh approximation of GELU.
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluTanhCubic = 0.044715;

// max(0, min(1, t)), NaN passing through.
template <class T>
NNRT_HD T unit_clip(T t) {
  return t < T(0) ? T(0) : (t > T(1) ? T(1) : t);
}

// log(1 + exp(x)) without overflow, and with full accuracy for very negative x.
template <class T>
NNRT_HD T softplus(T x) {
  return x > T(0) ? x + k_log1p(k_exp(-x)) : k_log1p(k_exp(x));
}

// The tanh GELU's inner value sqrt(2 / pi) (x + 0.044715 x^3).
template <class T>
NNRT_HD T gelu_tanh_inner(T x) {
  return T(kSqrt2OverPi) * (x + T(kGeluTanhCubic) * x * x * x);
}

// Whether a is an nnrt_unary_alg of this ABI (NONE, the "no activation" of attrs.fused, is not).
NNRT_HD constexpr bool is_unary_alg(int alg) { return alg >= NNRT_UNARY_IDENTITY && alg <= NNRT_UNARY_LAST; }

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
  else if constexpr (Alg == NNRT_UNARY_SWISH) return x * sigmoid(alpha * x);
  else if constexpr (Alg == NNRT_UNARY_HARD_SIGMOID) return unit_clip(alpha * x + beta);
  else if constexpr (Alg == NNRT_UNARY_HARD_SWISH) return x * unit_clip(alpha * x + beta);
  // 0.5 (1 + tanh(u)) is sigmoid(2u), without the cancellation of 1 + tanh(u) for negative u.
  else if constexpr (Alg == NNRT_UNARY_GELU_TANH) return x * sigmoid(T(2) * gelu_tanh_inner(x));
  else if constexpr (Alg == NNRT_UNARY_ERF) return k_erf(x);
  else if constexpr (Alg == NNRT_UNARY_SOFTPLUS) return softplus(x);
  else static_assert(Alg < 0, "not an nnrt_unary_alg");
}

// dx from dy and the forward input x. Where the function has a kink, the gradient is PyTorch's:
// RELU and LEAKY_RELU take the x <= 0 side at 0, ABS gives 0 at 0, CLIP passes the gradient on the
// closed interval [alpha, beta], HARD_SIGMOID passes it where alpha x + beta is strictly inside
// (0, 1) and HARD_SWISH takes the middle piece on [-beta / alpha, (1 - beta) / alpha] (PyTorch's
// hardsigmoid_backward and hardswish_backward).
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
  else if constexpr (Alg == NNRT_UNARY_SWISH) {
    T s = sigmoid(alpha * x);
    return dy * (s + alpha * x * s * (T(1) - s));
  } else if constexpr (Alg == NNRT_UNARY_HARD_SIGMOID) {
    T t = alpha * x + beta;
    return (t > T(0) && t < T(1)) ? alpha * dy : T(0);
  } else if constexpr (Alg == NNRT_UNARY_HARD_SWISH) {
    T t = alpha * x + beta;
    if (t < T(0)) return T(0);
    return t <= T(1) ? dy * (T(2) * alpha * x + beta) : dy;
  } else if constexpr (Alg == NNRT_UNARY_GELU_TANH) {
    T s = sigmoid(T(2) * gelu_tanh_inner(x));
    T dinner = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluTanhCubic) * x * x);
    return dy * (s + T(2) * x * s * (T(1) - s) * dinner);
  } else if constexpr (Alg == NNRT_UNARY_ERF) return dy * (T(2 * kInvSqrt2Pi * kSqrt2) * k_exp(-x * x));
  else if constexpr (Alg == NNRT_UNARY_SOFTPLUS) return dy * sigmoid(x);
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
    case NNRT_UNARY_SWISH: return unary_forward<NNRT_UNARY_SWISH>(x, alpha, beta);
    case NNRT_UNARY_HARD_SIGMOID: return unary_forward<NNRT_UNARY_HARD_SIGMOID>(x, alpha, beta);
    case NNRT_UNARY_HARD_SWISH: return unary_forward<NNRT_UNARY_HARD_SWISH>(x, alpha, beta);
    case NNRT_UNARY_GELU_TANH: return unary_forward<NNRT_UNARY_GELU_TANH>(x, alpha, beta);
    case NNRT_UNARY_ERF: return unary_forward<NNRT_UNARY_ERF>(x, alpha, beta);
    case NNRT_UNARY_SOFTPLUS: return unary_forward<NNRT_UNARY_SOFTPLUS>(x, alpha, beta);
    default: return x;  // NONE, IDENTITY
  }
}

// Runtime dispatch of unary_backward (the CUDA kernels', one alg per launch).
template <class T>
NNRT_HD T unary_backward(int alg, T dy, T x, T alpha, T beta) {
  switch (alg) {
    case NNRT_UNARY_NEG: return unary_backward<NNRT_UNARY_NEG>(dy, x, alpha, beta);
    case NNRT_UNARY_ABS: return unary_backward<NNRT_UNARY_ABS>(dy, x, alpha, beta);
    case NNRT_UNARY_EXP: return unary_backward<NNRT_UNARY_EXP>(dy, x, alpha, beta);
    case NNRT_UNARY_LOG: return unary_backward<NNRT_UNARY_LOG>(dy, x, alpha, beta);
    case NNRT_UNARY_SQRT: return unary_backward<NNRT_UNARY_SQRT>(dy, x, alpha, beta);
    case NNRT_UNARY_SQUARE: return unary_backward<NNRT_UNARY_SQUARE>(dy, x, alpha, beta);
    case NNRT_UNARY_RELU: return unary_backward<NNRT_UNARY_RELU>(dy, x, alpha, beta);
    case NNRT_UNARY_LEAKY_RELU: return unary_backward<NNRT_UNARY_LEAKY_RELU>(dy, x, alpha, beta);
    case NNRT_UNARY_ELU: return unary_backward<NNRT_UNARY_ELU>(dy, x, alpha, beta);
    case NNRT_UNARY_GELU: return unary_backward<NNRT_UNARY_GELU>(dy, x, alpha, beta);
    case NNRT_UNARY_SIGMOID: return unary_backward<NNRT_UNARY_SIGMOID>(dy, x, alpha, beta);
    case NNRT_UNARY_TANH: return unary_backward<NNRT_UNARY_TANH>(dy, x, alpha, beta);
    case NNRT_UNARY_LINEAR: return unary_backward<NNRT_UNARY_LINEAR>(dy, x, alpha, beta);
    case NNRT_UNARY_CLIP: return unary_backward<NNRT_UNARY_CLIP>(dy, x, alpha, beta);
    case NNRT_UNARY_SIGN: return unary_backward<NNRT_UNARY_SIGN>(dy, x, alpha, beta);
    case NNRT_UNARY_SWISH: return unary_backward<NNRT_UNARY_SWISH>(dy, x, alpha, beta);
    case NNRT_UNARY_HARD_SIGMOID: return unary_backward<NNRT_UNARY_HARD_SIGMOID>(dy, x, alpha, beta);
    case NNRT_UNARY_HARD_SWISH: return unary_backward<NNRT_UNARY_HARD_SWISH>(dy, x, alpha, beta);
    case NNRT_UNARY_GELU_TANH: return unary_backward<NNRT_UNARY_GELU_TANH>(dy, x, alpha, beta);
    case NNRT_UNARY_ERF: return unary_backward<NNRT_UNARY_ERF>(dy, x, alpha, beta);
    case NNRT_UNARY_SOFTPLUS: return unary_backward<NNRT_UNARY_SOFTPLUS>(dy, x, alpha, beta);
    default: return dy;  // IDENTITY
  }
}

}  // namespace nnrt::kernels
