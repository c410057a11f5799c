// Exact max pooling for inputs with NaN or -inf (see onednn_pool_exact.cpp), and what the plugin's
// other max pooling kernels share with it.
#pragma once

#include <cstdint>

#include "nnrt/nnrt_backend.h"

namespace nnrt::onednn {

// Whether v replaces the running maximum m of a window read in row-major order: a larger value, or
// the first NaN. With this one test every max pooling here is nnrt's: a window's maximum starts
// from its first element, so a window of -inf gives -inf, the first NaN wins (and takes the
// gradient), and of tied maxima the first keeps the gradient. Written with || and &&, GCC 12
// turns it into compares and a blend inside the vectorized loops (with & and | it vectorizes none
// of them).
inline bool replaces_max(float v, float m) { return v > m || (v != v && m == m); }

// Calls fn(j) for j in [0, n) so that every call lands in a loop GCC 12 vectorizes, when fn is
// branch-free. It vectorizes a plain loop for AVX2 as 8 a step and a 4-wide epilogue, then a scalar
// loop for the last 1-3, and sends loops of fewer than 8 to the scalar loop alone; compiled with
// branches, that loop mispredicts on the random order of maxima (LeNet's 8x8 -> 4x4 max pooling
// backward, 4 windows a row, took 82 ns a row, 5x what it takes here). So a multiple of 4 goes
// through the plain loop, and the rest as one more step of 4 overlapping the one before (calls made
// twice, which must give the same result).
template <class Fn>
inline __attribute__((always_inline)) void for_each_vectorized(int64_t n, Fn &&fn) {
  if (n < 4) {
    for (int64_t j = 0; j < n; ++j) fn(j);
    return;
  }
  if (n < 8) {
    for (int64_t j = 0; j < 4; ++j) fn(j);
  } else {
    for (int64_t j = 0; j < (n & ~int64_t{3}); ++j) fn(j);
  }
  if (n % 4 != 0)
    for (int64_t j = n - 4; j < n; ++j) fn(j);
}

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
