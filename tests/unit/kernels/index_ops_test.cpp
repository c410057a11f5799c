// kernels/index_ops.h: which element an arg-reduction keeps (first index on ties, NaN largest) and
// which indices name a table row, for the float and integer compute types both backends use.
#include "nnrt/kernels/index_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using nnrt::kernels::arg_beats;
using nnrt::kernels::index_in_rows;

// The index an in-order scan with arg_beats picks, as the backends scan a line.
template <class C>
int64_t scan(int alg, const std::vector<C> &line) {
  C best = line[0];
  int64_t at = 0;
  for (size_t k = 1; k < line.size(); ++k) {
    if (arg_beats(alg, line[k], best)) {
      best = line[k];
      at = static_cast<int64_t>(k);
    }
  }
  return at;
}

const float kNan = std::nanf("");

TEST(ArgBeats, FirstIndexWinsTies) {
  EXPECT_EQ(scan<float>(NNRT_ARG_MAX, {1, 3, 3, 2}), 1);
  EXPECT_EQ(scan<float>(NNRT_ARG_MIN, {2, 0, 1, 0}), 1);
  EXPECT_EQ(scan<int64_t>(NNRT_ARG_MAX, {5, 9, 9, -1}), 1);
  EXPECT_EQ(scan<int32_t>(NNRT_ARG_MIN, {5, -7, 9, -7}), 1);
  EXPECT_EQ(scan<uint8_t>(NNRT_ARG_MAX, {0, 255, 7, 255}), 1);
}

TEST(ArgBeats, NanIsTheLargest) {
  EXPECT_EQ(scan<float>(NNRT_ARG_MAX, {1, kNan, 9, kNan}), 1);
  EXPECT_EQ(scan<float>(NNRT_ARG_MAX, {kNan, 9}), 0);
  EXPECT_EQ(scan<double>(NNRT_ARG_MAX, {-1, std::nan(""), 2}), 1);
}

TEST(ArgBeats, MinSkipsNanUnlessTheLineIsAllNan) {
  EXPECT_EQ(scan<float>(NNRT_ARG_MIN, {kNan, 4, kNan, 3}), 3);
  EXPECT_EQ(scan<float>(NNRT_ARG_MIN, {kNan, kNan}), 0);
  EXPECT_EQ(scan<double>(NNRT_ARG_MIN, {std::nan(""), -2, -3}), 2);
}

TEST(ArgBeats, InfinitiesCompareAsNumbers) {
  const float inf = INFINITY;
  EXPECT_EQ(scan<float>(NNRT_ARG_MAX, {-inf, inf, 1}), 1);
  EXPECT_EQ(scan<float>(NNRT_ARG_MIN, {3, inf, -inf}), 2);
}

TEST(IndexInRows, HalfOpenRange) {
  EXPECT_TRUE(index_in_rows(0, 3));
  EXPECT_TRUE(index_in_rows(2, 3));
  EXPECT_FALSE(index_in_rows(3, 3));
  EXPECT_FALSE(index_in_rows(-1, 3));
  EXPECT_FALSE(index_in_rows(0, 0));
}

}  // namespace
