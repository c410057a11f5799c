// The batch normalization backward pass in double, for the inputs on which oneDNN's f32 kernel
// overflows. dx = gamma inv_std (dy - mean(dy) - xhat mean(dy xhat)) multiplies values of the
// order of x^2 on the way: with |x| above about 2e19 (x^2 past the largest float) oneDNN's f32
// arithmetic gives +-inf where the exact result (nnrt's reference, and PyTorch, which sums in
// double) can be finite. The op scans dx for NaN
// and infinities after oneDNN's run and, when it finds any, computes all three outputs again here,
// so that NaN and infinities in the inputs also come out as the reference's do.
#pragma once

#include "nnrt/nnrt_backend.h"

namespace nnrt::onednn {

// The outputs of NNRT_OP_BATCHNORM_BACKWARD (dx, dgamma, dbeta) from its inputs (x, dy, mean,
// var, gamma), in each tensor's own layout; x, dy and dx are F32 or BF16 [N, C, ...].
void exact_batchnorm_backward(const nnrt_op_desc &d, const nnrt_op_args &args);

}  // namespace nnrt::onednn
