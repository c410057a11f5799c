// kernels/strided_index.h: the per-element operand offsets a GPU thread computes must be those of
// a plain row-major walk over the dims, for any strides (broadcast, transposed, padded).
#include "nnrt/kernels/strided_index.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

using nnrt::kernels::StridedIndex;

// Offsets of every element in row-major order, by counting through the dims like an odometer.
std::vector<int64_t> naive_offsets(const std::vector<int64_t> &dims, const std::vector<int64_t> &strides) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<int64_t> out;
  std::vector<int64_t> at(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < dims.size(); ++d) o += at[d] * strides[d];
    out.push_back(o);
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      if (++at[d] < dims[d]) break;
      at[d] = 0;
    }
  }
  return out;
}

TEST(StridedIndex, MatchesARowMajorWalkForRandomLayouts) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int ndim = static_cast<int>(rng() % 6);
    std::vector<int64_t> dims(ndim);
    for (auto &d : dims) d = 1 + static_cast<int64_t>(rng() % 4);
    // Operand 0 contiguous, operand 1 transposed-ish with broadcast dims, operand 2 padded.
    std::vector<int64_t> s0(ndim), s1(ndim), s2(ndim);
    int64_t run = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      s0[d] = run;
      run *= dims[d];
    }
    run = 1;
    for (int d = 0; d < ndim; ++d) {
      s1[d] = (rng() % 3 == 0) ? 0 : run;
      run *= dims[d];
    }
    run = 3;
    for (int d = ndim - 1; d >= 0; --d) {
      s2[d] = run;
      run *= dims[d] + 1;
    }
    const int64_t *strides[3] = {s0.data(), s1.data(), s2.data()};
    StridedIndex<3> index{};
    int64_t n = nnrt::kernels::make_strided_index<3>(ndim, dims.data(), strides, &index);
    std::vector<int64_t> e0 = naive_offsets(dims, s0), e1 = naive_offsets(dims, s1), e2 = naive_offsets(dims, s2);
    ASSERT_EQ(n, static_cast<int64_t>(e0.size()));
    for (int64_t i = 0; i < n; ++i) {
      int64_t o[3];
      nnrt::kernels::strided_offsets(index, i, o);
      ASSERT_EQ(o[0], e0[i]) << "trial " << trial << " element " << i;
      ASSERT_EQ(o[1], e1[i]) << "trial " << trial << " element " << i;
      ASSERT_EQ(o[2], e2[i]) << "trial " << trial << " element " << i;
    }
  }
}

TEST(StridedIndex, ContiguousOperandsMergeIntoOneDim) {
  const int64_t dims[4] = {2, 3, 1, 5};
  const int64_t c[4] = {15, 5, 5, 1};
  const int64_t broadcast_row[4] = {0, 0, 0, 1};  // a [5] vector broadcast over the rest
  const int64_t *both_contiguous[2] = {c, c};
  StridedIndex<2> index{};
  EXPECT_EQ(nnrt::kernels::make_strided_index<2>(4, dims, both_contiguous, &index), 30);
  EXPECT_EQ(index.ndim, 1);
  const int64_t *with_broadcast[2] = {c, broadcast_row};
  EXPECT_EQ(nnrt::kernels::make_strided_index<2>(4, dims, with_broadcast, &index), 30);
  EXPECT_EQ(index.ndim, 2);  // [6, 5]: the broadcast dims merge with each other, not with the row
  int64_t o[2];
  nnrt::kernels::strided_offsets(index, 17, o);
  EXPECT_EQ(o[0], 17);
  EXPECT_EQ(o[1], 2);
}

TEST(StridedIndex, RankZeroIsOneElement) {
  StridedIndex<1> index{};
  const int64_t *none[1] = {nullptr};
  EXPECT_EQ(nnrt::kernels::make_strided_index<1>(0, nullptr, none, &index), 1);
  int64_t o[1];
  nnrt::kernels::strided_offsets(index, 0, o);
  EXPECT_EQ(o[0], 0);
}

}  // namespace
