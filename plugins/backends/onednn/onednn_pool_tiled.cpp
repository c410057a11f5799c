// The tiled max pooling of onednn_pool_tiled.h. Each output row reads kernel_h input rows; the
// loop over output columns is the inner one, the window unrolled inside it for the common 2x2 and
// 3x3 (the window sizes are template parameters), so that the compiler vectorizes across output
// columns (strided loads and stores of a group). GCC 12 vectorizes the 2x2 forward and backward and
// the 3x3 forward; the 3x3 backward (9 stores a window) it leaves scalar, as it does other sizes.
// The row functions are built for AVX-512, AVX2 and the x86-64 baseline (the plugin is compiled for
// the baseline); the loader picks one.
//
// The max is nnrt's exactly (replaces_max, onednn_pool_exact.h: NaN and -inf included), so no scan
// of x is needed before it (see onednn_pool.cpp). The backward pass finds each window's position
// and writes the whole window at once (windows do not overlap), so it needs no buffer.
//
// Microseconds per call of LeNet's 2x2/2 pools, plain NCHW, 1 thread, 2-core AMD EPYC (AVX2, no
// AVX-512), load 2.4-3.6, `build/bench/ops PLUGIN 1 pool`, median of 3 alternating runs; before:
// the scan and this kernel's NaN-blind form, which kept maxima and positions in buffers:
//   64 x 20 x 24 x 24   forward  196 -> 161   backward 2720 -> 307
//   64 x 50 x 8 x 8     forward  161 ->  61   backward 1010 -> 151
#include "onednn_pool_tiled.h"

#include <algorithm>

#include "onednn_pool_exact.h"

namespace nnrt::onednn {
namespace {

// The maximum of a window whose first element is w (rs: the row stride), and its position in the
// window, row-major; a float, as the values (as int32_t, GCC 12 vectorizes none of the loops).
template <int KH, int KW>
inline __attribute__((always_inline)) float window_max(const float *w, int64_t rs, int64_t kh_, int64_t kw_,
                                                       float *at) {
  const int64_t kh = KH > 0 ? KH : kh_, kw = KW > 0 ? KW : kw_;
  float m = w[0];
  *at = 0;
  for (int64_t t = 1; t < kh * kw; ++t) {  // the rest of the window, row-major
    const float v = w[t / kw * rs + t % kw];
    const bool r = replaces_max(v, m);
    m = r ? v : m;
    *at = r ? static_cast<float>(t) : *at;
  }
  return m;
}

// y[j] = the maximum of window j, whose first element is x[j * kw]; rs is x's row stride.
template <int KH, int KW>
__attribute__((target_clones("avx512f", "avx2", "default"))) void forward_row(const float *__restrict x, int64_t rs,
                                                                              int64_t kh, int64_t kw, int64_t ow,
                                                                              float *__restrict y) {
  const int64_t step = KW > 0 ? KW : kw;
  for_each_vectorized(ow, [&](int64_t j) {
    float at;
    y[j] = window_max<KH, KW>(x + j * step, rs, kh, kw, &at);
  });
}

// The windows of one output row, backward: window j's gradient g[j] goes to its maximum, 0 to the
// rest of the window. xs and ds are the row strides of x and dx.
template <int KH, int KW>
__attribute__((target_clones("avx512f", "avx2", "default"))) void backward_row(
    const float *__restrict x, int64_t xs, const float *__restrict g, int64_t kh_, int64_t kw_, int64_t ow,
    float *__restrict dx, int64_t ds) {
  const int64_t kh = KH > 0 ? KH : kh_, kw = KW > 0 ? KW : kw_;
  for_each_vectorized(ow, [&](int64_t j) {
    float at;
    window_max<KH, KW>(x + j * kw, xs, kh, kw, &at);
    const float gj = g[j];
    float *d = dx + j * kw;
    for (int64_t a = 0; a < kh; ++a)
      for (int64_t b = 0; b < kw; ++b) d[a * ds + b] = at == static_cast<float>(a * kw + b) ? gj : 0.f;
  });
}

template <class Fn>
void for_each_plane(const nnrt_tensor_desc &d, Fn &&fn) {
  const int64_t planes = d.dims[0] * d.dims[1];
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < planes; ++p) fn(p / d.dims[1], p % d.dims[1]);
}

int64_t plane_offset(const nnrt_tensor_desc &d, int64_t n, int64_t c) { return n * d.strides[0] + c * d.strides[1]; }

template <int KH, int KW>
void forward(const TiledMaxPool &p, const float *x, const nnrt_tensor_desc &xd, float *y, const nnrt_tensor_desc &yd) {
  const int64_t oh = yd.dims[2], ow = yd.dims[3];
  for_each_plane(xd, [&](int64_t n, int64_t c) {
    const float *xp = x + plane_offset(xd, n, c);
    float *yp = y + plane_offset(yd, n, c);
    for (int64_t i = 0; i < oh; ++i)
      forward_row<KH, KW>(xp + i * p.kernel_h * xd.strides[2], xd.strides[2], p.kernel_h, p.kernel_w, ow,
                          yp + i * yd.strides[2]);
  });
}

template <int KH, int KW>
void backward(const TiledMaxPool &p, const float *dy, const nnrt_tensor_desc &dyd, const float *x,
              const nnrt_tensor_desc &xd, float *dx, const nnrt_tensor_desc &dxd) {
  const int64_t oh = dyd.dims[2], ow = dyd.dims[3], h = xd.dims[2], w = xd.dims[3];
  const int64_t covered_w = ow * p.kernel_w;
  for_each_plane(xd, [&](int64_t n, int64_t c) {
    const float *xp = x + plane_offset(xd, n, c);
    const float *gp = dy + plane_offset(dyd, n, c);
    float *dxp = dx + plane_offset(dxd, n, c);
    for (int64_t i = 0; i < oh; ++i) {
      float *d = dxp + i * p.kernel_h * dxd.strides[2];
      backward_row<KH, KW>(xp + i * p.kernel_h * xd.strides[2], xd.strides[2], gp + i * dyd.strides[2], p.kernel_h,
                           p.kernel_w, ow, d, dxd.strides[2]);
      if (covered_w < w)  // columns past the last window
        for (int64_t a = 0; a < p.kernel_h; ++a)
          std::fill(d + a * dxd.strides[2] + covered_w, d + a * dxd.strides[2] + w, 0.f);
    }
    for (int64_t r = oh * p.kernel_h; r < h; ++r) std::fill(dxp + r * dxd.strides[2], dxp + r * dxd.strides[2] + w, 0.f);
  });
}

}  // namespace

bool f32_max_pool_windows_tile(const nnrt_op_attrs &a, const nnrt_tensor_desc &x, const nnrt_tensor_desc &y,
                                int unit_dim) {
  if (a.alg != NNRT_POOL_MAX || x.dtype != NNRT_DTYPE_F32 || y.dtype != NNRT_DTYPE_F32) return false;
  if (x.ndim != 4 || y.ndim != 4 || x.strides[unit_dim] != 1 || y.strides[unit_dim] != 1) return false;
  for (int i = 0; i < 4; ++i)
    if (a.pad[i] != 0) return false;
  return a.kernel[0] == a.stride[0] && a.kernel[1] == a.stride[1] && y.dims[2] * a.kernel[0] <= x.dims[2] &&
         y.dims[3] * a.kernel[1] <= x.dims[3];
}

bool tiled_max_pool_applies(const nnrt_op_attrs &a, const nnrt_tensor_desc &x, const nnrt_tensor_desc &y) {
  return f32_max_pool_windows_tile(a, x, y, 3);
}

void tiled_max_pool_forward(const TiledMaxPool &p, const float *x, const nnrt_tensor_desc &xd, float *y,
                            const nnrt_tensor_desc &yd) {
  if (p.kernel_h == 2 && p.kernel_w == 2) return forward<2, 2>(p, x, xd, y, yd);
  if (p.kernel_h == 3 && p.kernel_w == 3) return forward<3, 3>(p, x, xd, y, yd);
  forward<0, 0>(p, x, xd, y, yd);
}

void tiled_max_pool_backward(const TiledMaxPool &p, const float *dy, const nnrt_tensor_desc &dyd, const float *x,
                             const nnrt_tensor_desc &xd, float *dx, const nnrt_tensor_desc &dxd) {
  if (p.kernel_h == 2 && p.kernel_w == 2) return backward<2, 2>(p, dy, dyd, x, xd, dx, dxd);
  if (p.kernel_h == 3 && p.kernel_w == 3) return backward<3, 3>(p, dy, dyd, x, xd, dx, dxd);
  backward<0, 0>(p, dy, dyd, x, xd, dx, dxd);
}

}  // namespace nnrt::onednn
