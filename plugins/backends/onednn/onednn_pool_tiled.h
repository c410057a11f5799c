// Max pooling of plain NCHW f32 tensors whose windows tile the input: kernel equal to stride, no
// padding (the 2x2, stride 2 pools of LeNet-like networks). Below AVX-512 oneDNN 2.6 has only its
// scalar simple_nchw kernel for these (see onednn_pool.cpp); this one is written so that the
// compiler vectorizes across output columns. It computes nnrt's max exactly, NaN and -inf included.
#pragma once

#include <cstdint>

#include "nnrt/nnrt_backend.h"

namespace nnrt::onednn {

struct TiledMaxPool {
  int64_t kernel_h, kernel_w;
};

// Whether this is an f32 max pool whose windows tile x (kernel == stride, no padding) and whose
// tensors have stride 1 in dimension unit_dim.
bool f32_max_pool_windows_tile(const nnrt_op_attrs &a, const nnrt_tensor_desc &x, const nnrt_tensor_desc &y,
                                int unit_dim);

// Whether the tiled kernel computes this pool: f32, kernel == stride, no padding, rows of every
// tensor contiguous (any plane and batch strides).
bool tiled_max_pool_applies(const nnrt_op_attrs &a, const nnrt_tensor_desc &x, const nnrt_tensor_desc &y);

// y [N,C,OH,OW] from x [N,C,H,W]; planes in parallel on the calling thread's OpenMP team.
void tiled_max_pool_forward(const TiledMaxPool &p, const float *x, const nnrt_tensor_desc &xd, float *y,
                            const nnrt_tensor_desc &yd);
// dx from dy and the forward input x: each window's gradient goes to its first maximum in row-major
// order, as nnrt defines max pooling; positions no window covers get 0.
void tiled_max_pool_backward(const TiledMaxPool &p, const float *dy, const nnrt_tensor_desc &dyd, const float *x,
                             const nnrt_tensor_desc &xd, float *dx, const nnrt_tensor_desc &dxd);

}  // namespace nnrt::onednn
