// Max pooling of channels-last f32 tensors (NCHW dims, channels contiguous: the activations of
// prediction plans) whose 2x2 or 3x3 windows tile the input: kernel equal to stride, no padding.
// Computed exactly as nnrt defines max pooling, NaN and -inf included (see onednn_pool_channels_last.cpp).
#pragma once

#include <cstdint>

#include "nnrt/nnrt_backend.h"

namespace nnrt::onednn {

// Whether the channels-last kernel computes this pool: f32 max, a 2x2 or 3x3 kernel equal to the
// stride, no padding, channels contiguous in every tensor (strides[1] == 1; any other strides).
bool channels_last_max_pool_applies(const nnrt_op_attrs &a, const nnrt_tensor_desc &x, const nnrt_tensor_desc &y);

// y [N,C,OH,OW] from x [N,C,H,W]; output rows in parallel on the calling thread's OpenMP team.
void channels_last_max_pool_forward(int64_t kernel, const float *x, const nnrt_tensor_desc &xd, float *y,
                                    const nnrt_tensor_desc &yd);
// dx from dy and the forward input x: each window's gradient goes to its first maximum in
// row-major order (the first NaN if it holds one); positions no window covers get 0.
void channels_last_max_pool_backward(int64_t kernel, const float *dy, const nnrt_tensor_desc &dyd, const float *x,
                                     const nnrt_tensor_desc &xd, float *dx, const nnrt_tensor_desc &dxd);

}  // namespace nnrt::onednn
