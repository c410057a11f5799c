// 2-d pooling windows (NCHW), shared by the CPU and GPU backends: which input positions a window
// covers, which value wins a max, and what an average divides by.
//
// Padded positions never win a max; a window wholly in the padding gives -inf (max) or 0 (avg).
// MAX propagates NaN, and its gradient goes to the first position holding the maximum (row-major
// in the window), the first NaN when there is one.
#pragma once

#include "nnrt/kernels/kernel_common.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::kernels {

struct PoolGeometry {
  int64_t n, c, h, w, oh, ow, kh, kw, stride_h, stride_w, pad_top, pad_left;
  int alg;
};

// The window of output (i, j) clipped to the input: rows [r0, r1) and columns [c0, c1).
struct PoolWindow {
  int64_t r0, r1, c0, c1;
  NNRT_HD PoolWindow(const PoolGeometry &g, int64_t i, int64_t j) {
    const int64_t top = i * g.stride_h - g.pad_top, left = j * g.stride_w - g.pad_left;
    r0 = top < 0 ? 0 : top;
    r1 = top + g.kh < g.h ? top + g.kh : g.h;
    c0 = left < 0 ? 0 : left;
    c1 = left + g.kw < g.w ? left + g.kw : g.w;
  }
  NNRT_HD int64_t count() const { return (r1 > r0 && c1 > c0) ? (r1 - r0) * (c1 - c0) : 0; }
};

// True when v should replace the running maximum m (scanning in order: NaN wins once, first).
template <class C>
NNRT_HD bool pool_replaces_max(C v, C m) {
  return v > m || (v != v && m == m);
}

// The divisor of an average window.
template <class C>
NNRT_HD C pool_average_divisor(const PoolGeometry &g, const PoolWindow &win) {
  return g.alg == NNRT_POOL_AVG_INCLUDE_PAD ? static_cast<C>(g.kh * g.kw) : static_cast<C>(win.count());
}

}  // namespace nnrt::kernels
