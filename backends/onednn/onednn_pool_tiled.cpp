// The tiled max pooling of onednn_pool_tiled.h. Each output row reads kernel_h input rows; the
// loops over output columns are the inner ones, with the window width a template parameter for
// the common 2 and 3 so that the compiler vectorizes them (strided loads and stores of a group).
#include "onednn_pool_tiled.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace nnrt::onednn {
namespace {

// m[j] = max over the window of output column j of input row `row`, folded into m.
template <int KW>
void fold_row_max(const float *row, int64_t ow, int64_t kw, float *m) {
  const int64_t w = KW > 0 ? KW : kw;
  for (int64_t j = 0; j < ow; ++j) {
    float v = m[j];
    for (int64_t b = 0; b < w; ++b) v = std::max(v, row[j * w + b]);
    m[j] = v;
  }
}

// For input row `row` (window row a, positions from base = a * kw): the running maximum m[j] of
// window j and idx[j], the position of its first maximum in row-major order (a strictly larger
// value replaces it, so the first of equal values stays).
template <int KW>
void argmax_row(const float *row, int64_t ow, int64_t kw, int32_t base, float *m, int32_t *idx) {
  const int64_t w = KW > 0 ? KW : kw;
  for (int64_t j = 0; j < ow; ++j) {
    for (int64_t b = 0; b < w; ++b) {
      const float v = row[j * w + b];
      const bool larger = v > m[j];
      m[j] = larger ? v : m[j];
      idx[j] = larger ? base + static_cast<int32_t>(b) : idx[j];
    }
  }
}

// The gradient row of window row a: g[j] at window j's first maximum, 0 elsewhere.
template <int KW>
void gradient_row(const int32_t *idx, const float *g, int64_t ow, int64_t kw, int32_t base, float *dx_row) {
  const int64_t w = KW > 0 ? KW : kw;
  for (int64_t j = 0; j < ow; ++j)
    for (int64_t b = 0; b < w; ++b) dx_row[j * w + b] = idx[j] == base + static_cast<int32_t>(b) ? g[j] : 0.f;
}

template <class Fn>
void for_each_plane(const nnrt_tensor_desc &d, Fn &&fn) {
  const int64_t planes = d.dims[0] * d.dims[1];
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < planes; ++p) fn(p / d.dims[1], p % d.dims[1]);
}

int64_t plane_offset(const nnrt_tensor_desc &d, int64_t n, int64_t c) { return n * d.strides[0] + c * d.strides[1]; }

template <int KW>
void forward(const TiledMaxPool &p, const float *x, const nnrt_tensor_desc &xd, float *y, const nnrt_tensor_desc &yd) {
  const int64_t oh = yd.dims[2], ow = yd.dims[3];
  for_each_plane(xd, [&](int64_t n, int64_t c) {
    const float *xp = x + plane_offset(xd, n, c);
    float *yp = y + plane_offset(yd, n, c);
    for (int64_t i = 0; i < oh; ++i) {
      float *m = yp + i * yd.strides[2];
      std::fill(m, m + ow, -std::numeric_limits<float>::infinity());
      for (int64_t a = 0; a < p.kernel_h; ++a) fold_row_max<KW>(xp + (i * p.kernel_h + a) * xd.strides[2], ow, p.kernel_w, m);
    }
  });
}

template <int KW>
void backward(const TiledMaxPool &p, const float *dy, const nnrt_tensor_desc &dyd, const float *x,
              const nnrt_tensor_desc &xd, float *dx, const nnrt_tensor_desc &dxd) {
  const int64_t oh = dyd.dims[2], ow = dyd.dims[3], h = xd.dims[2], w = xd.dims[3];
  const int64_t covered_w = ow * p.kernel_w;
  for_each_plane(xd, [&](int64_t n, int64_t c) {
    const float *xp = x + plane_offset(xd, n, c);
    const float *gp = dy + plane_offset(dyd, n, c);
    float *dxp = dx + plane_offset(dxd, n, c);
    std::vector<float> m(static_cast<size_t>(ow));
    std::vector<int32_t> idx(static_cast<size_t>(ow));
    for (int64_t i = 0; i < oh; ++i) {
      std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
      for (int64_t a = 0; a < p.kernel_h; ++a) {
        const int32_t base = static_cast<int32_t>(a * p.kernel_w);
        argmax_row<KW>(xp + (i * p.kernel_h + a) * xd.strides[2], ow, p.kernel_w, base, m.data(), idx.data());
      }
      for (int64_t a = 0; a < p.kernel_h; ++a) {
        float *dx_row = dxp + (i * p.kernel_h + a) * dxd.strides[2];
        gradient_row<KW>(idx.data(), gp + i * dyd.strides[2], ow, p.kernel_w, static_cast<int32_t>(a * p.kernel_w), dx_row);
        std::fill(dx_row + covered_w, dx_row + w, 0.f);  // columns past the last window
      }
    }
    for (int64_t r = oh * p.kernel_h; r < h; ++r) std::fill(dxp + r * dxd.strides[2], dxp + r * dxd.strides[2] + w, 0.f);
  });
}

}  // namespace

bool tiled_max_pool_applies(const nnrt_op_attrs &a, const nnrt_tensor_desc &x, const nnrt_tensor_desc &y) {
  if (a.alg != NNRT_POOL_MAX || x.dtype != NNRT_DTYPE_F32 || y.dtype != NNRT_DTYPE_F32) return false;
  if (x.ndim != 4 || y.ndim != 4 || x.strides[3] != 1 || y.strides[3] != 1) return false;
  for (int i = 0; i < 4; ++i)
    if (a.pad[i] != 0) return false;
  return a.kernel[0] == a.stride[0] && a.kernel[1] == a.stride[1] && y.dims[2] * a.kernel[0] <= x.dims[2] &&
         y.dims[3] * a.kernel[1] <= x.dims[3];
}

void tiled_max_pool_forward(const TiledMaxPool &p, const float *x, const nnrt_tensor_desc &xd, float *y,
                            const nnrt_tensor_desc &yd) {
  switch (p.kernel_w) {
    case 2: return forward<2>(p, x, xd, y, yd);
    case 3: return forward<3>(p, x, xd, y, yd);
    default: return forward<0>(p, x, xd, y, yd);
  }
}

void tiled_max_pool_backward(const TiledMaxPool &p, const float *dy, const nnrt_tensor_desc &dyd, const float *x,
                             const nnrt_tensor_desc &xd, float *dx, const nnrt_tensor_desc &dxd) {
  switch (p.kernel_w) {
    case 2: return backward<2>(p, dy, dyd, x, xd, dx, dxd);
    case 3: return backward<3>(p, dy, dyd, x, xd, dx, dxd);
    default: return backward<0>(p, dy, dyd, x, xd, dx, dxd);
  }
}

}  // namespace nnrt::onednn
