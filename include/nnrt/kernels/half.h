// Exact f16 (IEEE binary16) and bf16 conversions, round to nearest even, shared by every backend.
//
// Widening (f16/bf16 -> f32) is exact. Narrowing rounds to nearest, ties to even; overflow gives
// infinity; NaN stays NaN (quiet, sign kept). f16 subnormals are produced and read exactly.
#pragma once

#include <string.h>

#include "nnrt/kernels/kernel_common.h"

namespace nnrt::kernels {

NNRT_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

NNRT_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

NNRT_HD float bf16_to_f32(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

NNRT_HD uint16_t f32_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN
  // Add 0x7fff plus the lowest kept bit: ties go to the even result. Overflow carries into the
  // exponent and gives infinity, as it should.
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

NNRT_HD float f16_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0x1fu) {
    u = sign | 0x7f800000u | (mant << 13);  // inf or NaN
  } else if (exp != 0) {
    u = sign | ((exp + 112u) << 23) | (mant << 13);  // normal: rebias 15 -> 127
  } else if (mant == 0) {
    u = sign;  // signed zero
  } else {
    // Subnormal: value = mant * 2^-24; normalise into an f32.
    int shift = 0;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      ++shift;
    }
    mant &= 0x3ffu;
    u = sign | (static_cast<uint32_t>(113 - shift) << 23) | (mant << 13);
  }
  return bits_float(u);
}

NNRT_HD uint16_t f32_to_f16(float f) {
  uint32_t u = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65536: inf
  if (abs >= 0x38800000u) {
    // Normal f16 range (>= 2^-14). Rebias the exponent, then round the 13 dropped bits.
    uint32_t r = abs - (112u << 23);
    r += 0xfffu + ((r >> 13) & 1u);
    return static_cast<uint16_t>(sign | (r >> 13));  // a carry into exponent 31 gives inf
  }
  if (abs < 0x33000000u) return sign;  // below half the smallest subnormal (2^-25): zero
  // Subnormal f16: shift the full 24-bit significand right and round to nearest even.
  uint32_t exp = abs >> 23;
  uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126u - exp;  // so that the result counts units of 2^-24
  uint32_t kept = mant >> shift;
  uint32_t rest = mant & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (kept & 1u))) ++kept;
  return static_cast<uint16_t>(sign | kept);
}

}  // namespace nnrt::kernels
