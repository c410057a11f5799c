// Exact max pooling for inputs with NaN or -inf (see onednn_pool_exact.cpp).
#pragma once

#include <cstdint>

#include "nnrt/nnrt_backend.h"

namespace nnrt::onednn {

struct MaxPoolShape {
  int64_t h, w;  // input plane
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_top, pad_left;
};

// y [N,C,OH,OW] from x [N,C,H,W], F32 or BF16, any strides.
void exact_max_pool_forward(const MaxPoolShape &s, const void *x, const nnrt_tensor_desc &xd, void *y,
                            const nnrt_tensor_desc &yd);
// dx [N,C,H,W] from dy [N,C,OH,OW] and the forward input x.
void exact_max_pool_backward(const MaxPoolShape &s, const void *dy, const nnrt_tensor_desc &dyd, const void *x,
                             const nnrt_tensor_desc &xd, void *dx, const nnrt_tensor_desc &dxd);

}  // namespace nnrt::onednn
