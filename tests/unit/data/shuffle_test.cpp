#include "data/shuffle.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace nnrt::data {
namespace {

TEST(Shuffle, IsAPermutationFixedBySeed) {
  for (int64_t n : {0, 1, 2, 7, 1000}) {
    std::vector<int64_t> a = shuffled_order(n, 42);
    EXPECT_EQ(a, shuffled_order(n, 42));
    std::vector<int64_t> sorted = a;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, identity_order(n));
  }
  EXPECT_NE(shuffled_order(1000, 1), shuffled_order(1000, 2));
  EXPECT_NE(shuffled_order(1000, 1), identity_order(1000));
}

TEST(Shuffle, SameOrderOnEveryPlatform) {
  // Pinned: a change here changes every seeded training run, so it must be deliberate.
  EXPECT_EQ(shuffled_order(10, 42), (std::vector<int64_t>{6, 2, 1, 8, 4, 3, 0, 5, 7, 9}));
}

TEST(Shuffle, BoundedDrawsAreUniform) {
  // 3 does not divide 2^64: a plain modulo would still pass this test (its bias is 2^-63), but a
  // wrong rejection loop that skews or repeats would not.
  RandomWords r(7);
  int counts[3] = {0, 0, 0};
  const int draws = 30000;
  for (int i = 0; i < draws; ++i) ++counts[r.below(3)];
  for (int c : counts) EXPECT_NEAR(c, draws / 3, 400);
  // A bound just above 2^63 rejects almost half of the words and must still terminate, in range.
  const uint64_t big = (uint64_t{1} << 63) + 12345;
  for (int i = 0; i < 1000; ++i) EXPECT_LT(r.below(big), big);
  EXPECT_EQ(r.below(1), 0u);
}

TEST(Shuffle, EveryPositionIsReachable) {
  // Over many seeds, element 0 lands in every slot of a 5-permutation about equally often.
  int where[5] = {0, 0, 0, 0, 0};
  for (uint64_t seed = 0; seed < 5000; ++seed) {
    std::vector<int64_t> o = shuffled_order(5, seed);
    ++where[std::find(o.begin(), o.end(), 0) - o.begin()];
  }
  for (int w : where) EXPECT_NEAR(w, 1000, 150);
}

}  // namespace
}  // namespace nnrt::data
