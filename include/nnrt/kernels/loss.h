// Per-element terms of the elementwise losses (nnrt_loss_alg MSE, L1, BCE, BCE_WITH_LOGITS) and
// their derivatives with respect to pred. The op averages the terms over every element.
// Conventions are PyTorch's: BCE clamps each log at -100, and its gradient divides by
// max(p * (1 - p), 1e-12).
#pragma once

#include "nnrt/kernels/eltwise.h"
#include "nnrt/kernels/fmath.h"
#include "nnrt/kernels/kernel_common.h"

namespace nnrt::kernels {

template <class T>
NNRT_HD T mse_term(T p, T t) {
  T d = p - t;
  return d * d;
}
template <class T>
NNRT_HD T mse_grad(T p, T t) {
  return T(2) * (p - t);
}

template <class T>
NNRT_HD T l1_term(T p, T t) {
  return k_fabs(p - t);
}
template <class T>
NNRT_HD T l1_grad(T p, T t) {
  return k_sign(p - t);
}

template <class T>
NNRT_HD T bce_term(T p, T t) {
  T log_p = k_max(k_log(p), T(-100));
  T log_1mp = k_max(k_log1p(-p), T(-100));
  return -(t * log_p + (T(1) - t) * log_1mp);
}
template <class T>
NNRT_HD T bce_grad(T p, T t) {
  return (p - t) / k_max((T(1) - p) * p, T(1e-12));
}

// max(x, 0) - x * t + log(1 + exp(-|x|)): no overflow for large |x|.
template <class T>
NNRT_HD T bce_with_logits_term(T x, T t) {
  return k_max(x, T(0)) - x * t + k_log1p(k_exp(-k_fabs(x)));
}
template <class T>
NNRT_HD T bce_with_logits_grad(T x, T t) {
  return sigmoid(x) - t;
}

}  // namespace nnrt::kernels
