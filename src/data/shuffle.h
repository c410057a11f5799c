// Seeded permutations that are the same on every platform.
//
// std::shuffle and std::uniform_int_distribution are free to differ between standard libraries, so
// a seed would not name one order everywhere. Here the random words come from Philox-4x32-10
// (kernels/philox.h, a pure function of seed and counter) and bounded draws are exact (rejection,
// no modulo bias), so a (size, seed) pair gives one permutation on every system.
#pragma once

#include <cstdint>
#include <vector>

#include "nnrt/kernels/philox.h"

namespace nnrt::data {

// 64-bit random words: block after block of the Philox stream of one seed.
class RandomWords {
 public:
  explicit RandomWords(uint64_t seed) : seed_(seed) {}
  uint64_t next();
  // A uniform draw from [0, bound), bound >= 1.
  uint64_t below(uint64_t bound);

 private:
  uint64_t seed_;
  uint64_t block_ = 0;
  kernels::Philox4 words_{};
  int used_ = 2;  // 64-bit words of words_ already handed out (it holds two)
};

// 0, 1, ..., n-1.
std::vector<int64_t> identity_order(int64_t n);
// A uniformly random permutation of 0..n-1 (Fisher-Yates) determined by seed.
std::vector<int64_t> shuffled_order(int64_t n, uint64_t seed);

}  // namespace nnrt::data
