// f16/bf16 conversions (kernels/half.h, kernels/convert.h) against slow, obviously correct
// references written here with double arithmetic, and the Philox generator (kernels/philox.h)
// against the published known-answer vectors.
#include <math.h>
#include <string.h>

#include <random>

#include <gtest/gtest.h>

#include "nnrt/kernels/convert.h"
#include "nnrt/kernels/half.h"
#include "nnrt/kernels/philox.h"

namespace {

using namespace nnrt::kernels;

// ---- Slow references ------------------------------------------------------------------------

// The value of an f16 bit pattern, decoded from the IEEE definition.
double f16_value(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
  double v;
  if (exp == 31) v = mant ? NAN : INFINITY;
  else if (exp == 0) v = ldexp(mant, -24);
  else v = ldexp(1024 + mant, exp - 25);
  return sign ? -v : v;
}

double bf16_value(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 7) & 255, mant = h & 127;
  double v;
  if (exp == 255) v = mant ? NAN : INFINITY;
  else if (exp == 0) v = ldexp(mant, -133);
  else v = ldexp(128 + mant, exp - 134);
  return sign ? -v : v;
}

// Rounds v (not NaN) to nearest, ties to even, among the non-negative patterns [0, inf_bits] of a
// format whose positive values increase with their bits. For rounding, infinity stands for the
// next power of two after the largest finite value, which puts the overflow threshold at the
// largest value plus half an ulp, as IEEE 754 says.
template <class Value>
uint16_t slow_round(double v, uint16_t inf_bits, double inf_as, Value value) {
  const uint16_t sign = v < 0 || (v == 0 && signbit(v)) ? 0x8000 : 0;
  const double a = fabs(v);
  if (a >= inf_as) return sign | inf_bits;
  auto val = [&](uint16_t h) { return h == inf_bits ? inf_as : value(h); };
  uint16_t lo = 0, hi = inf_bits;  // the largest h with val(h) <= a
  while (hi - lo > 1) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi) / 2);
    (val(mid) <= a ? lo : hi) = mid;
  }
  if (val(hi) <= a) lo = hi;
  if (val(lo) == a) return sign | lo;
  const uint16_t up = static_cast<uint16_t>(lo + 1);
  const double below = a - val(lo), above = val(up) - a;
  if (below < above || (below == above && (lo & 1) == 0)) return sign | lo;
  return sign | up;
}

uint16_t slow_f16(double v) { return slow_round(v, 0x7c00, 65536.0, f16_value); }
uint16_t slow_bf16(double v) { return slow_round(v, 0x7f80, ldexp(1.0, 128), bf16_value); }

float bits_to_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// ---- Widening: every pattern ----------------------------------------------------------------

TEST(Half, EveryF16PatternWidensExactlyAndRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    const double expected = f16_value(static_cast<uint16_t>(h));
    if (isnan(expected)) {
      ASSERT_TRUE(isnan(f)) << std::hex << h;
      const uint16_t back = f32_to_f16(f);
      ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << h;           // sign kept
      ASSERT_TRUE((back & 0x7c00) == 0x7c00 && (back & 0x3ff)) << h;  // still NaN
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), expected) << std::hex << h;
    ASSERT_EQ(signbit(f), signbit(expected)) << std::hex << h;
    ASSERT_EQ(f32_to_f16(f), h) << std::hex << h;
    ASSERT_EQ(f64_to_f16(static_cast<double>(f)), h) << std::hex << h;
  }
}

TEST(Half, EveryBf16PatternWidensExactlyAndRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16_to_f32(static_cast<uint16_t>(h));
    const double expected = bf16_value(static_cast<uint16_t>(h));
    if (isnan(expected)) {
      ASSERT_TRUE(isnan(f)) << std::hex << h;
      const uint16_t back = f32_to_bf16(f);
      ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << h;
      ASSERT_TRUE((back & 0x7f80) == 0x7f80 && (back & 0x7f)) << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), expected) << std::hex << h;
    ASSERT_EQ(f32_to_bf16(f), h) << std::hex << h;
    ASSERT_EQ(f64_to_bf16(static_cast<double>(f)), h) << std::hex << h;
  }
}

// ---- Narrowing f32: every exponent and mantissa high part, with the low bits at the interesting
// places around the rounding point (exact, just above/below a tie, the tie, all ones). ----

TEST(Half, F32ToF16MatchesSlowReferenceAroundEveryRoundingPoint) {
  const uint32_t lows[] = {0x0, 0x1, 0xfff, 0x1000, 0x1001, 0x1fff};
  for (uint32_t high = 0; high < (1u << 19); ++high) {
    for (uint32_t low : lows) {
      const uint32_t bits = (high << 13) | low;
      const float f = bits_to_float(bits);
      if (isnan(f)) continue;
      ASSERT_EQ(f32_to_f16(f), slow_f16(f)) << std::hex << bits;
    }
  }
}

TEST(Half, F32ToF16SubnormalTiesAndNeighbours) {
  // The f16 subnormal range rounds at a different bit of the f32 significand: test each midpoint
  // between neighbouring f16 values below 2^-14, and the floats on either side of it.
  for (int k = 0; k <= 1024; ++k) {
    const double mid = ldexp(2 * k + 1, -25);
    for (double v : {mid, (double)nextafterf((float)mid, 0.0f), (double)nextafterf((float)mid, 1.0f), -mid}) {
      const float f = static_cast<float>(v);
      ASSERT_EQ(f32_to_f16(f), slow_f16(f)) << v;
    }
  }
  EXPECT_EQ(f32_to_f16(ldexp(1.0f, -25)), 0x0000);  // exactly half the smallest subnormal: to even (0)
  EXPECT_EQ(f32_to_f16(nextafterf(ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(f32_to_f16(ldexp(3.0f, -25)), 0x0002);  // 1.5 units: tie, to even (2)
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65519.99f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // the overflow threshold rounds to infinity
  EXPECT_EQ(f32_to_f16(-65520.0f), 0xfc00);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
}

TEST(Half, F32ToBf16MatchesSlowReferenceAroundEveryRoundingPoint) {
  const uint32_t lows[] = {0x0, 0x1, 0x7fff, 0x8000, 0x8001, 0xffff};
  for (uint32_t high = 0; high < (1u << 16); ++high) {
    for (uint32_t low : lows) {
      const uint32_t bits = (high << 16) | low;
      const float f = bits_to_float(bits);
      if (isnan(f)) continue;
      ASSERT_EQ(f32_to_bf16(f), slow_bf16(f)) << std::hex << bits;
    }
  }
  EXPECT_EQ(f32_to_bf16(bits_to_float(0x7f7fffff)), 0x7f80);  // FLT_MAX rounds up to infinity
  EXPECT_EQ(f32_to_bf16(bits_to_float(0x00008000)), 0x0000);  // subnormal tie to even
  EXPECT_EQ(f32_to_bf16(bits_to_float(0x00018000)), 0x0002);
}

TEST(Half, RandomF32PatternsMatchSlowReference) {
  std::mt19937 gen(7);
  for (int i = 0; i < 300000; ++i) {
    const uint32_t bits = gen();
    const float f = bits_to_float(bits);
    if (isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), slow_f16(f)) << std::hex << bits;
    ASSERT_EQ(f32_to_bf16(f), slow_bf16(f)) << std::hex << bits;
  }
}

// ---- Narrowing f64 and i64: one rounding, not two -------------------------------------------

TEST(Convert, F64ToHalfRoundsOnceNearTies) {
  std::mt19937 gen(11);
  for (int i = 0; i < 20000; ++i) {
    // A midpoint between two neighbouring finite values, nudged by far less than an f32 ulp: a
    // detour through f32 would land on the tie and round to even, the wrong way half the time.
    const uint16_t h = static_cast<uint16_t>(gen() % 0x7bff);
    const double mid16 = (f16_value(h) + f16_value(static_cast<uint16_t>(h + 1))) / 2;
    const uint16_t b = static_cast<uint16_t>(gen() % 0x7f7f);
    const double mid_b = (bf16_value(b) + bf16_value(static_cast<uint16_t>(b + 1))) / 2;
    for (double scale : {1.0 + ldexp(1.0, -40), 1.0 - ldexp(1.0, -40), 1.0}) {
      ASSERT_EQ(f64_to_f16(mid16 * scale), slow_f16(mid16 * scale)) << mid16 * scale;
      ASSERT_EQ(f64_to_f16(-mid16 * scale), slow_f16(-mid16 * scale));
      ASSERT_EQ(f64_to_bf16(mid_b * scale), slow_bf16(mid_b * scale)) << mid_b * scale;
    }
  }
  EXPECT_EQ(f64_to_f16(1e300), 0x7c00);
  EXPECT_EQ(f64_to_bf16(-1e300), 0xff80);
  EXPECT_EQ(f64_to_bf16(1e-300), 0x0000);
  EXPECT_EQ(f64_to_f16(-1e-300), 0x8000);
  EXPECT_TRUE(isnan(f16_to_f32(f64_to_f16(NAN))));
}

TEST(Convert, I64ToHalfRoundsOnce) {
  // 2^60 + 2^52 + 1 is just above the midpoint between the bf16 neighbours 2^60 and 2^60 + 2^53;
  // through a double rounded to nearest it would become the midpoint and round down.
  const int64_t v = (int64_t{1} << 60) + (int64_t{1} << 52) + 1;
  EXPECT_EQ(f64_to_bf16(i64_to_f64_round_odd(v)), slow_bf16(ldexp(1.0, 60) + ldexp(1.0, 53)));
  EXPECT_EQ(f64_to_bf16(i64_to_f64_round_odd(-v)), slow_bf16(-(ldexp(1.0, 60) + ldexp(1.0, 53))));
  EXPECT_EQ(i64_to_f64_round_odd(INT64_MIN), -ldexp(1.0, 63));
  EXPECT_EQ(i64_to_f64_round_odd(12345), 12345.0);
  EXPECT_EQ(f64_to_f16(i64_to_f64_round_odd(INT64_MAX)), 0x7c00);
}

TEST(Convert, FloatToIntegerTruncatesAndSaturates) {
  EXPECT_EQ(f64_to_i32_saturate(2.9), 2);
  EXPECT_EQ(f64_to_i32_saturate(-2.9), -2);
  EXPECT_EQ(f64_to_i32_saturate(NAN), 0);
  EXPECT_EQ(f64_to_i32_saturate(3e9), INT32_MAX);
  EXPECT_EQ(f64_to_i32_saturate(-3e9), INT32_MIN);
  EXPECT_EQ(f64_to_i32_saturate(INFINITY), INT32_MAX);
  EXPECT_EQ(f64_to_i64_saturate(1e19), INT64_MAX);
  EXPECT_EQ(f64_to_i64_saturate(-1e19), INT64_MIN);
  EXPECT_EQ(f64_to_i64_saturate(-9223372036854775808.0), INT64_MIN);
  EXPECT_EQ(f64_to_i64_saturate(9007199254740993.0), 9007199254740992);
  EXPECT_EQ(f64_to_u8_saturate(-0.5), 0);
  EXPECT_EQ(f64_to_u8_saturate(255.9), 255);
  EXPECT_EQ(f64_to_u8_saturate(300), 255);
  EXPECT_EQ(f64_to_u8_saturate(-300), 0);
}

// ---- Philox ---------------------------------------------------------------------------------

// Philox-4x32-10 over a full 128-bit counter, written from the paper; checked against the
// published known-answer vectors, then used to check kernels/philox.h (whose counter is
// (block, 0)).
struct Words {
  uint32_t v[4];
};
Words philox_full(Words ctr, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = uint64_t{0xD2511F53} * ctr.v[0], p1 = uint64_t{0xCD9E8D57} * ctr.v[2];
    Words next = {{static_cast<uint32_t>(p1 >> 32) ^ ctr.v[1] ^ k0, static_cast<uint32_t>(p1),
                   static_cast<uint32_t>(p0 >> 32) ^ ctr.v[3] ^ k1, static_cast<uint32_t>(p0)}};
    ctr = next;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return ctr;
}

TEST(Philox, KnownAnswers) {
  struct Kat {
    Words ctr;
    uint32_t k0, k1;
    Words expected;
  } kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, 0xffffffff, 0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, 0xa4093822, 0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat &k : kats) {
    const Words got = philox_full(k.ctr, k.k0, k.k1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], k.expected.v[i]) << i;
  }
  const Philox4 zero = philox4x32_10(0, 0);
  EXPECT_EQ(zero.v[0], 0x6627e8d5u);
  EXPECT_EQ(zero.v[3], 0x9b00dbd8u);
}

TEST(Philox, KernelMatchesFullCounterVersion) {
  std::mt19937_64 gen(3);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t seed = gen(), block = gen() >> 2;  // so that block * 4 + w does not wrap
    const Philox4 got = philox4x32_10(seed, block);
    const Words ref = philox_full({{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0}},
                                  static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
    for (int w = 0; w < 4; ++w) ASSERT_EQ(got.v[w], ref.v[w]);
    for (int w = 0; w < 4; ++w) ASSERT_EQ(philox_word(seed, block * 4 + w), ref.v[w]);
  }
}

TEST(Philox, UniformRangeAndNormalMoments) {
  EXPECT_EQ(uniform01(0), 0.0f);
  EXPECT_LT(uniform01(0xffffffffu), 1.0f);
  EXPECT_GT(uniform01_open_low(0), 0.0f);
  EXPECT_EQ(uniform01_open_low(0xffffffffu), 1.0f);
  double sum = 0, sum_sq = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const double z = random_normal(42, static_cast<uint64_t>(i), 0.0f, 1.0f);
    sum += z;
    sum_sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(sum_sq / n, 1.0, 0.02);
}

}  // namespace
