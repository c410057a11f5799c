// NNRT_OP_QUANTIZE's rounding, shared by the backends that run it: y = saturate(round_half_to_even(
// x / scale) + zero_point), NaN to the zero point, computed in double as nnrt_backend.h says.
#pragma once

#include <cstdint>

namespace nnrt::kernels {

// x / scale rounded half to even, then shifted and saturated into [lo, hi] (lo <= zero_point <= hi).
// The quotient is clamped to [lo - zero_point, hi - zero_point] before it is rounded, which gives
// the same result (the bounds are integers, and rounding keeps order) and keeps every step a plain
// vector operation: a NaN becomes 0 by a select, and the rounding adds and subtracts 1.5 * 2^52,
// which rounds in the FPU's default mode (to nearest, ties to even) for |v| < 2^51, where baseline
// x86-64's std::nearbyint is a libm call that costs more than the rest of the loop.
inline int32_t quantize_value(float x, double scale, int32_t zero_point, int32_t lo, int32_t hi) {
  constexpr double kRound = 6755399441055744.0;
  double v = x == x ? static_cast<double>(x) / scale : 0.0;
  const double low = lo - zero_point, high = hi - zero_point;
  v = v < low ? low : v;
  v = v > high ? high : v;
  return static_cast<int32_t>((v + kRound) - kRound) + zero_point;
}

}  // namespace nnrt::kernels
