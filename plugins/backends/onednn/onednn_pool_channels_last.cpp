// The channels-last max pooling of onednn_pool_channels_last.h. For each output pixel the loop over
// channels is the inner one, reading the window's pixels as contiguous channel vectors, with the
// window unrolled (its size a template parameter), so that the compiler vectorizes it whatever C
// is (GCC 12 does for 2x2 forward and backward and 3x3 forward; the 3x3 backward stays scalar). The max is nnrt's (replaces_max, onednn_pool_exact.h), so unlike oneDNN's kernel it needs no
// scan of x for NaN and -inf first. Built for AVX-512, AVX2 and the x86-64 baseline, as
// onednn_special_values.cpp is; the loader picks one.
//
// Why not oneDNN's: on LeNet's pools in prediction plans (channels-last, C = 20 and 50, not
// multiples of 8) oneDNN 2.6's jit:avx2 kernel is slow, its backward slower still, and it needs the
// scan. Microseconds per call, 1 thread, 2-core AMD EPYC (AVX2, no AVX-512), load 2.4-3.6,
// `build/bench/ops PLUGIN 1 pool`, median of 3 alternating runs of each plugin (each the fastest
// batch of its run); oneDNN with the scan before, this kernel after:
//   2x2/2, channels-last       forward before -> after    backward before -> after
//   1 x 20 x 24 x 24               18.3 ->    1.7             184 ->    3.6
//   64 x 20 x 24 x 24              1205 ->     90           13282 ->    209
//   256 x 20 x 24 x 24             6127 ->   1002           54006 ->   2765
//   64 x 50 x 8 x 8                 367 ->     48            2320 ->     69
#include "onednn_pool_channels_last.h"

#include <algorithm>

#include "onednn_pool_exact.h"
#include "onednn_pool_tiled.h"

namespace nnrt::onednn {
namespace {

// Strides, in elements, of one tensor: batch, row, pixel (its channels are contiguous).
struct Strides {
  int64_t n, row, pixel;
};
Strides strides_of(const nnrt_tensor_desc &d) { return {d.strides[0], d.strides[2], d.strides[3]}; }

// The ow windows of one output row: y's pixel j = the channel-wise maximum of window j, whose
// first pixel is x + j * K * xs.pixel.
template <int K>
__attribute__((target_clones("avx512f", "avx2", "default"))) void forward_row(const float *__restrict x, Strides xs,
                                                                              int64_t c, int64_t ow,
                                                                              float *__restrict y, int64_t y_pixel) {
  for (int64_t j = 0; j < ow; ++j) {
    const float *w = x + j * K * xs.pixel;
    float *o = y + j * y_pixel;
    for_each_vectorized(c, [&](int64_t k) {
      float m = w[k];
      for (int t = 1; t < K * K; ++t) {  // the rest of the window, row-major
        const float v = w[t / K * xs.row + t % K * xs.pixel + k];
        m = replaces_max(v, m) ? v : m;
      }
      o[k] = m;
    });
  }
}

// Backward, one output row: window j's gradient g[j] goes, channel by channel, to its maximum and
// 0 to the rest of the window.
template <int K>
__attribute__((target_clones("avx512f", "avx2", "default"))) void backward_row(
    const float *__restrict x, Strides xs, const float *__restrict g, int64_t g_pixel, int64_t c, int64_t ow,
    float *__restrict dx, Strides ds) {
  for (int64_t j = 0; j < ow; ++j) {
    const float *w = x + j * K * xs.pixel;
    const float *gj = g + j * g_pixel;
    float *d = dx + j * K * ds.pixel;
    for_each_vectorized(c, [&](int64_t k) {
      float m = w[k];
      float at = 0;  // position in the window; a float, as the values (as int32_t GCC 12 does not vectorize)
      for (int t = 1; t < K * K; ++t) {
        const float v = w[t / K * xs.row + t % K * xs.pixel + k];
        const bool r = replaces_max(v, m);
        m = r ? v : m;
        at = r ? static_cast<float>(t) : at;
      }
      const float gk = gj[k];
      for (int t = 0; t < K * K; ++t) d[t / K * ds.row + t % K * ds.pixel + k] = at == static_cast<float>(t) ? gk : 0.f;
    });
  }
}

// Zeroes pixels [from, to) of a row of dx.
void zero_pixels(float *row, int64_t pixel, int64_t c, int64_t from, int64_t to) {
  for (int64_t q = from; q < to; ++q) std::fill(row + q * pixel, row + q * pixel + c, 0.f);
}

template <int K>
void forward(const float *x, const nnrt_tensor_desc &xd, float *y, const nnrt_tensor_desc &yd) {
  const Strides xs = strides_of(xd), ys = strides_of(yd);
  const int64_t oh = yd.dims[2], rows = yd.dims[0] * oh;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / oh, i = r % oh;
    forward_row<K>(x + n * xs.n + i * K * xs.row, xs, xd.dims[1], yd.dims[3], y + n * ys.n + i * ys.row, ys.pixel);
  }
}

template <int K>
void backward(const float *dy, const nnrt_tensor_desc &dyd, const float *x, const nnrt_tensor_desc &xd, float *dx,
              const nnrt_tensor_desc &dxd) {
  const Strides xs = strides_of(xd), gs = strides_of(dyd), ds = strides_of(dxd);
  const int64_t c = xd.dims[1], h = xd.dims[2], w = xd.dims[3], oh = dyd.dims[2], ow = dyd.dims[3];
  const int64_t rows = xd.dims[0] * oh;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / oh, i = r % oh;
    float *d = dx + n * ds.n + i * K * ds.row;
    backward_row<K>(x + n * xs.n + i * K * xs.row, xs, dy + n * gs.n + i * gs.row, gs.pixel, c, ow, d, ds);
    for (int a = 0; a < K; ++a) zero_pixels(d + a * ds.row, ds.pixel, c, ow * K, w);  // past the last window
  }
  for (int64_t n = 0; n < xd.dims[0]; ++n)  // rows past the last window
    for (int64_t q = oh * K; q < h; ++q) zero_pixels(dx + n * ds.n + q * ds.row, ds.pixel, c, 0, w);
}

}  // namespace

bool channels_last_max_pool_applies(const nnrt_op_attrs &a, const nnrt_tensor_desc &x, const nnrt_tensor_desc &y) {
  const int32_t k = a.kernel[0];
  return f32_max_pool_windows_tile(a, x, y, 1) && (k == 2 || k == 3) && a.kernel[1] == k;
}

void channels_last_max_pool_forward(int64_t kernel, const float *x, const nnrt_tensor_desc &xd, float *y,
                                    const nnrt_tensor_desc &yd) {
  if (kernel == 2)
    forward<2>(x, xd, y, yd);
  else
    forward<3>(x, xd, y, yd);
}

void channels_last_max_pool_backward(int64_t kernel, const float *dy, const nnrt_tensor_desc &dyd, const float *x,
                                     const nnrt_tensor_desc &xd, float *dx, const nnrt_tensor_desc &dxd) {
  if (kernel == 2)
    backward<2>(dy, dyd, x, xd, dx, dxd);
  else
    backward<3>(dy, dyd, x, xd, dx, dxd);
}

}  // namespace nnrt::onednn
