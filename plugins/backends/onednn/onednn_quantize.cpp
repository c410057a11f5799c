// NNRT_OP_QUANTIZE on the plugin's own loop: y = saturate(round_half_to_even(x / scale) +
// zero_point), NaN to the zero point, with the reference backend's rounding
// (nnrt/kernels/quantize.h), so the two agree bit for bit.
//
// Why not oneDNN: its reorder multiplies by a reciprocal rounded to f32, which differs from the
// contract's division at ties. Why not leave it to the reference backend, as before: an int8 model
// quantizes every layer's input, and the reference's strided loop does not vectorize (ResNet-18
// int8 at batch 1 on a Xeon with AMX: 37% of the prediction in that loop, oneDNN's int8
// convolutions a third). Here x and y share one dense layout (a plain or channels-last image, as
// ops::quantize makes y), so the loop runs over memory in order, vectorized (AVX-512, AVX2 and
// baseline clones), in float where that is exact (quantize_run), and split over the op's threads. Other layouts are refused (the reference
// backend runs them).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "onednn_common.h"
#include "nnrt/kernels/quantize.h"

namespace nnrt::onednn {
namespace {

// One chunk. The contract divides by the scale in double, and vectors of doubles are slow (with
// a division, quantizing was a fifth of an int8 ResNet-18's prediction), so the loop multiplies in
// float by the reciprocal rounded to float: over the range that is not saturated (|x / scale| <=
// 383) the product is within 384 * 2^-23 < 2^-14 of the exact quotient (three roundings of 2^-24),
// so it rounds to the same integer unless the quotient is that close to a tie (k + 1/2). A block
// where any value comes within 2^-12 of a tie (about one value in 2000 of random data) is computed
// again with the division (nnrt/kernels/quantize.h). Clamping before rounding keeps every step a
// vector operation, as there. A reciprocal that is not a normal float (scales beyond 1e-38..1e38)
// takes the division throughout.
constexpr int64_t kBlock = 64;

// The contract's formula, value by value.
template <class Q>
void quantize_exact(const float *x, Q *y, int64_t n, double scale, int32_t zero_point, int32_t lo, int32_t hi) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<Q>(kernels::quantize_value(x[i], scale, zero_point, lo, hi));
}

template <class Q>
__attribute__((target_clones("avx512f", "avx2", "default"))) void quantize_run(
    const float *__restrict x, Q *__restrict y, int64_t n, double scale, float inverse, int32_t zero_point,
    int32_t lo, int32_t hi) {
  constexpr float kRound = 12582912.0f, kNearTie = 0x1p-12f;  // 1.5 * 2^23 rounds |v| < 2^22
  const float low = static_cast<float>(lo - zero_point), high = static_cast<float>(hi - zero_point);
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = std::min(n, begin + kBlock);
    int near_tie = 0;
    for (int64_t i = begin; i < end; ++i) {
      float v = x[i] == x[i] ? x[i] * inverse : 0.0f;
      v = v < low ? low : v;
      v = v > high ? high : v;
      const float rounded = (v + kRound) - kRound, off = v - rounded;  // off in [-1/2, 1/2], exact
      near_tie |= 0.5f - (off < 0 ? -off : off) < kNearTie;
      y[i] = static_cast<Q>(static_cast<int32_t>(rounded) + zero_point);
    }
    if (near_tie) quantize_exact(x + begin, y + begin, end - begin, scale, zero_point, lo, hi);
  }
}

// Whether t covers its elements without gaps or repeats (some order of its dims is row-major).
bool dense(const nnrt_tensor_desc &t) {
  std::vector<int> order(static_cast<size_t>(t.ndim));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return t.strides[a] < t.strides[b]; });
  int64_t expected = 1;
  for (int d : order) {
    if (t.dims[d] == 1) continue;  // a dim of one is never stepped over
    if (t.strides[d] != expected) return false;
    expected *= t.dims[d];
  }
  return true;
}

class QuantizeOp : public Op {
 public:
  QuantizeOp(const nnrt_op_desc &d, int threads)
      : n_(element_count(d.inputs[0])), scale_(d.attrs.scale), inverse_(static_cast<float>(1.0 / d.attrs.scale)),
        zero_point_(d.attrs.zero_point),
        u8_(d.outputs[0].dtype == NNRT_DTYPE_U8), threads_(threads) {}

  void run(const Run &r) const override {
    const float *x = static_cast<const float *>(r.args().inputs[0]);
    void *y = r.args().outputs[0];
    // Chunks of whole cache lines of y, at least 16 KB of x each.
    constexpr int64_t kChunk = 4096;
    const int64_t chunks = (n_ + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t begin = c * kChunk, count = std::min(kChunk, n_ - begin);
      if (u8_)
        run_chunk(x + begin, static_cast<uint8_t *>(y) + begin, count, 0, 255);
      else
        run_chunk(x + begin, static_cast<int8_t *>(y) + begin, count, -128, 127);
    }
  }

 private:
  template <class Q>
  void run_chunk(const float *x, Q *y, int64_t n, int32_t lo, int32_t hi) const {
    if (std::isnormal(inverse_))
      quantize_run(x, y, n, scale_, inverse_, zero_point_, lo, hi);
    else
      quantize_exact(x, y, n, scale_, zero_point_, lo, hi);
  }

  int64_t n_;
  double scale_;
  float inverse_;
  int32_t zero_point_;
  bool u8_;
  int threads_;
};

}  // namespace

std::unique_ptr<Op> make_quantize(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 1, 1, 1, 1);
  const nnrt_tensor_desc &x = d.inputs[0], &y = d.outputs[0];
  if (x.dtype != NNRT_DTYPE_F32) refuse("quantize: x must be f32");
  if (y.dtype != NNRT_DTYPE_U8 && y.dtype != NNRT_DTYPE_I8) refuse("quantize: y must be u8 or i8");
  const int32_t lo = y.dtype == NNRT_DTYPE_U8 ? 0 : -128, hi = y.dtype == NNRT_DTYPE_U8 ? 255 : 127;
  if (!(d.attrs.scale > 0) || d.attrs.zero_point < lo || d.attrs.zero_point > hi)
    refuse("quantize: the scale must be positive and the zero point within y's range");
  if (x.ndim != y.ndim) refuse("quantize: x and y must have the same dims");
  for (int i = 0; i < x.ndim; ++i) {
    if (x.dims[i] != y.dims[i]) refuse("quantize: x and y must have the same dims");
    if (x.dims[i] != 1 && x.strides[i] != y.strides[i]) refuse("quantize: x and y in different layouts");
  }
  if (!dense(x)) refuse("quantize: x and y must be dense (a permutation of row-major)");
  if (b.plan_only) return nullptr;
  return std::make_unique<QuantizeOp>(d, std::max(1, omp_get_max_threads()));
}

}  // namespace nnrt::onednn
