// Counter-based random numbers: Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011).
//
// Element i of a random stream with seed s is a pure function of (s, i), so every backend, every
// thread count and every chunking gives the same numbers, and a trainer can resume a stream from a
// saved counter. One Philox call yields four 32-bit words; element i uses word (i % 4) of block
// (i / 4).
#pragma once

#include <math.h>

#include "nnrt/kernels/fmath.h"
#include "nnrt/kernels/kernel_common.h"

namespace nnrt::kernels {

struct Philox4 {
  uint32_t v[4];
};

NNRT_HD void philox_mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo) {
  uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

// The 4 random words of block `block` for key `seed`.
NNRT_HD Philox4 philox4x32_10(uint64_t seed, uint64_t block) {
  uint32_t c0 = static_cast<uint32_t>(block), c1 = static_cast<uint32_t>(block >> 32), c2 = 0,
           c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(0xD2511F53u, c0, &hi0, &lo0);
    philox_mulhilo(0xCD9E8D57u, c2, &hi1, &lo1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  Philox4 r = {{c0, c1, c2, c3}};
  return r;
}

// The 32-bit random word of element `index` in the stream of `seed`.
NNRT_HD uint32_t philox_word(uint64_t seed, uint64_t index) {
  Philox4 b = philox4x32_10(seed, index >> 2);
  return b.v[index & 3u];
}

// A float uniform in [0, 1) with 24 random bits: exact in f32, never 1.
NNRT_HD float uniform01(uint32_t word) { return static_cast<float>(word >> 8) * (1.0f / 16777216.0f); }

// A float uniform in (0, 1]: safe to take the log of.
NNRT_HD float uniform01_open_low(uint32_t word) {
  return (static_cast<float>(word >> 8) + 1.0f) * (1.0f / 16777216.0f);
}

// The uniform in [low, high) that random word `word` gives: every backend computes it here, with
// the multiply and the add rounded apart, so that the streams agree bit for bit.
NNRT_HD float uniform_from_word(uint32_t word, float low, float high) {
  return k_mul_add_unfused(high - low, uniform01(word), low);
}

// Element `index` of a uniform stream in [low, high).
NNRT_HD float random_uniform(uint64_t seed, uint64_t index, float low, float high) {
  return uniform_from_word(philox_word(seed, index), low, high);
}

// Element `index` of a normal stream: Box-Muller on two words of one block of a derived key,
// computed in double so that the f32 result agrees between host and device libm (which may differ
// in the last bits of a double).
NNRT_HD float random_normal(uint64_t seed, uint64_t index, float mean, float stddev) {
  Philox4 b = philox4x32_10(seed ^ 0x6A09E667F3BCC909ull, index);
  double u1 = (static_cast<double>(b.v[0] >> 8) + 1.0) * (1.0 / 16777216.0);
  double u2 = static_cast<double>(b.v[1] >> 8) * (1.0 / 16777216.0);
  double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
  return static_cast<float>(k_mul_add_unfused(static_cast<double>(stddev), z, static_cast<double>(mean)));
}

}  // namespace nnrt::kernels
