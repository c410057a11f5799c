// Conversions between dtypes that need more care than a C cast: f64 and i64 to f16/bf16 with a
// single correct rounding, and floats to integers with saturation.
//
// f64 -> f16 by way of an f32 rounded to nearest would round twice, and a value just above a tie
// can become an exact tie in f32 and then round the wrong way. Rounding to f32 with "round to odd"
// (truncate, then set the last bit if anything was dropped) keeps the information that the value
// was not a tie; since f32 carries at least two bits more than f16 and bf16 at every magnitude, the
// second rounding (to nearest even) is then the correct one.
#pragma once

#include <string.h>

#include "nnrt/kernels/half.h"
#include "nnrt/kernels/kernel_common.h"

namespace nnrt::kernels {

// d rounded to f32 with round-to-odd; NaN stays NaN, and overflow gives the largest finite f32
// (an odd significand), which any narrower type then rounds to infinity.
NNRT_HD float f64_to_f32_round_odd(double d) {
  float f = static_cast<float>(d);
  double back = static_cast<double>(f);
  if (back == d || d != d) return f;
  uint32_t bits = float_bits(f);
  bool rounded_away = (back < 0 ? -back : back) > (d < 0 ? -d : d);
  if (rounded_away) bits -= 1u;  // one unit toward zero: the truncated value (sign-magnitude)
  return bits_float(bits | 1u);
}

NNRT_HD uint16_t f64_to_f16(double d) { return f32_to_f16(f64_to_f32_round_odd(d)); }
NNRT_HD uint16_t f64_to_bf16(double d) { return f32_to_bf16(f64_to_f32_round_odd(d)); }

// i rounded to f64 with round-to-odd (exact when |i| <= 2^53), for the same reason: an i64 goes to
// f16/bf16 through this and then f64_to_f16/f64_to_bf16 (round-to-odd twice is still round-to-odd).
NNRT_HD double i64_to_f64_round_odd(int64_t i) {
  uint64_t m = i < 0 ? 0u - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
  if (m <= (1ull << 53)) return static_cast<double>(i);
  int bits = 0;
  for (uint64_t t = m; t != 0; t >>= 1) ++bits;
  int shift = bits - 53;
  uint64_t kept = m >> shift;
  if ((m & ((1ull << shift) - 1u)) != 0) kept |= 1u;
  double magnitude = static_cast<double>(kept) * static_cast<double>(1ull << shift);  // exact
  return i < 0 ? -magnitude : magnitude;
}

// Floats to integers: truncate toward zero, NaN gives 0, out-of-range values saturate.
NNRT_HD int64_t f64_to_i64_saturate(double d) {
  if (d != d) return 0;
  if (d >= 9223372036854775808.0) return INT64_MAX;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(d);
}
NNRT_HD int32_t f64_to_i32_saturate(double d) {
  if (d != d) return 0;
  if (d >= 2147483647.0) return INT32_MAX;
  if (d <= -2147483648.0) return INT32_MIN;
  return static_cast<int32_t>(d);
}
NNRT_HD uint8_t f64_to_u8_saturate(double d) {
  if (d != d) return 0;
  if (d >= 255.0) return 255;
  if (d <= 0.0) return 0;
  return static_cast<uint8_t>(d);
}
NNRT_HD int8_t f64_to_i8_saturate(double d) {
  if (d != d) return 0;
  if (d >= 127.0) return 127;
  if (d <= -128.0) return -128;
  return static_cast<int8_t>(d);
}

// Integers to narrower integers saturate too, as floats do (and as oneDNN's reorders do).
NNRT_HD int32_t i64_to_i32_saturate(int64_t i) {
  return i > INT32_MAX ? INT32_MAX : (i < INT32_MIN ? INT32_MIN : static_cast<int32_t>(i));
}
NNRT_HD uint8_t i64_to_u8_saturate(int64_t i) {
  return i > 255 ? 255 : (i < 0 ? 0 : static_cast<uint8_t>(i));
}
NNRT_HD int8_t i64_to_i8_saturate(int64_t i) {
  return i > 127 ? 127 : (i < -128 ? -128 : static_cast<int8_t>(i));
}

}  // namespace nnrt::kernels
