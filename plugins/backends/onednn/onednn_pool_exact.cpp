// Max pooling, forward and backward, computed exactly as nnrt defines it, for inputs holding NaN
// or -inf (see onednn_pool.cpp): oneDNN's max skips NaN and starts from -FLT_MAX, nnrt's max
// propagates NaN (the first NaN of a window wins, and takes the gradient) and gives -inf for a
// window of -inf. Plain loops: this path only runs for the inputs of a diverging network.
#include <algorithm>
#include <vector>

#include "onednn_pool_exact.h"
#include "onednn_special_values.h"

namespace nnrt::onednn {
namespace {

struct Window {
  int64_t r0, r1, c0, c1;  // rows and columns of the input inside the window
};

Window window(const MaxPoolShape &s, int64_t i, int64_t j) {
  Window w;
  w.r0 = i * s.stride_h - s.pad_top;
  w.c0 = j * s.stride_w - s.pad_left;
  w.r1 = std::min(w.r0 + s.kernel_h, s.h);
  w.c1 = std::min(w.c0 + s.kernel_w, s.w);
  w.r0 = std::max<int64_t>(w.r0, 0);
  w.c0 = std::max<int64_t>(w.c0, 0);
  return w;
}

// Row and column of the window's maximum, by nnrt's rule (windows are never empty: the op
// refuses windows that lie wholly in padding).
void argmax(const void *x, const nnrt_tensor_desc &xd, int64_t plane, const Window &w, int64_t *row, int64_t *col,
            float *value) {
  bool first = true;
  for (int64_t r = w.r0; r < w.r1; ++r)
    for (int64_t c = w.c0; c < w.c1; ++c) {
      const float v = load_float(x, xd.dtype, plane + r * xd.strides[2] + c * xd.strides[3]);
      if (first || replaces_max(v, *value)) {
        *value = v;
        *row = r;
        *col = c;
        first = false;
      }
    }
}

}  // namespace

void exact_max_pool_forward(const MaxPoolShape &s, const void *x, const nnrt_tensor_desc &xd, void *y,
                            const nnrt_tensor_desc &yd) {
  for (int64_t n = 0; n < xd.dims[0]; ++n)
    for (int64_t c = 0; c < xd.dims[1]; ++c) {
      const int64_t plane = n * xd.strides[0] + c * xd.strides[1];
      for (int64_t i = 0; i < yd.dims[2]; ++i)
        for (int64_t j = 0; j < yd.dims[3]; ++j) {
          int64_t r = 0, q = 0;
          float m = 0;
          argmax(x, xd, plane, window(s, i, j), &r, &q, &m);
          store_float(y, yd.dtype, n * yd.strides[0] + c * yd.strides[1] + i * yd.strides[2] + j * yd.strides[3], m);
        }
    }
}

void exact_max_pool_backward(const MaxPoolShape &s, const void *dy, const nnrt_tensor_desc &dyd, const void *x,
                             const nnrt_tensor_desc &xd, void *dx, const nnrt_tensor_desc &dxd) {
  std::vector<float> acc(static_cast<size_t>(s.h * s.w));
  for (int64_t n = 0; n < xd.dims[0]; ++n)
    for (int64_t c = 0; c < xd.dims[1]; ++c) {
      std::fill(acc.begin(), acc.end(), 0.f);
      const int64_t plane = n * xd.strides[0] + c * xd.strides[1];
      for (int64_t i = 0; i < dyd.dims[2]; ++i)
        for (int64_t j = 0; j < dyd.dims[3]; ++j) {
          int64_t r = 0, q = 0;
          float m = 0;
          argmax(x, xd, plane, window(s, i, j), &r, &q, &m);
          acc[static_cast<size_t>(r * s.w + q)] +=
              load_float(dy, dyd.dtype, n * dyd.strides[0] + c * dyd.strides[1] + i * dyd.strides[2] + j * dyd.strides[3]);
        }
      for (int64_t r = 0; r < s.h; ++r)
        for (int64_t q = 0; q < s.w; ++q)
          store_float(dx, dxd.dtype, n * dxd.strides[0] + c * dxd.strides[1] + r * dxd.strides[2] + q * dxd.strides[3],
                      acc[static_cast<size_t>(r * s.w + q)]);
    }
}

}  // namespace nnrt::onednn
