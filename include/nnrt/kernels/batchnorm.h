// The per-element batch-normalization formulas, shared by the CPU and GPU backends (the per-channel
// sums that feed them are each backend's own). With xhat = (x - mean) / sqrt(var + eps) and M the
// elements per channel:
//   y  = gamma * xhat + beta
//   dx = gamma / sqrt(var + eps) * (dy - sum(dy)/M - xhat * sum(dy * xhat)/M)
#pragma once

#include "nnrt/kernels/fmath.h"

namespace nnrt::kernels {

// 1 / sqrt(var + eps): what xhat multiplies (x - mean) by.
template <class A>
NNRT_HD A bn_inv_std(A var, A eps) {
  return A(1) / k_sqrt(var + eps);
}

// gamma / sqrt(var + eps): what the forward pass multiplies (x - mean) by.
template <class A>
NNRT_HD A bn_scale(A gamma, A var, A eps) {
  return gamma / k_sqrt(var + eps);
}

// y from x with scale = bn_scale(gamma, var, eps) and shift = beta.
template <class A>
NNRT_HD A bn_forward(A x, A mean, A scale, A shift) {
  return (x - mean) * scale + shift;
}

// dx with scale = gamma * inv_std, mean_dy = sum(dy)/M and mean_dy_xhat = sum(dy * xhat)/M.
template <class A>
NNRT_HD A bn_backward(A dy, A xhat, A scale, A mean_dy, A mean_dy_xhat) {
  return scale * (dy - mean_dy - xhat * mean_dy_xhat);
}

}  // namespace nnrt::kernels
