// NNRT_OP_QUANTIZE's rounding, shared by the backends that run it: y = saturate(round_half_to_even(
// x / scale) + zero_point), NaN to the zero point, computed in double as nnrt_backend.h says.
#pragma once

#include <cstdint>

namespace nnrt::kernels {

// x / scale rounded half to even, then shifted and saturated into [lo, hi]. The rounding adds and
// subtracts 1.5 * 2^52, which rounds in the FPU's default mode (to nearest, ties to even) for
// |v| < 2^51: on baseline x86-64 std::nearbyint is a libm call that costs more than the rest of the
// loop, and this vectorizes. |v| is first bounded by 2^30, far beyond any 8-bit range.
inline int32_t quantize_value(float x, double scale, int32_t zero_point, int32_t lo, int32_t hi) {
  double v = static_cast<double>(x) / scale;
  if (!(v == v)) return zero_point;
  constexpr double kBound = 1073741824.0, kRound = 6755399441055744.0;
  v = v < -kBound ? -kBound : (v > kBound ? kBound : v);
  const double q = (v + kRound) - kRound + zero_point;
  return q < lo ? lo : (q > hi ? hi : static_cast<int32_t>(q));
}

}  // namespace nnrt::kernels
