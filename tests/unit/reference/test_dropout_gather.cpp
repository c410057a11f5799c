// DROPOUT (the mask follows the Philox stream exactly), GATHER and SCATTER_ADD.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"
#include "nnrt/kernels/philox.h"

namespace nnrt::reftest {
namespace {

nnrt_op_attrs dropout_attrs(double p, uint64_t seed) {
  nnrt_op_attrs a = attrs_with(0);
  a.alpha = p;
  a.seed = seed;
  return a;
}

TEST(Dropout, MaskFollowsTheStreamAndScales) {
  for (int32_t dtype : kFloatDtypes) {
    Tensor x = Tensor::random(dtype, {33, 40}, 1);
    Tensor y = Tensor::zeros(dtype, x.dims), mask = Tensor::zeros(NNRT_DTYPE_U8, x.dims);
    RunOptions o;
    o.counter = 1000;
    ASSERT_EQ(run_op(NNRT_OP_DROPOUT, dropout_attrs(0.25, 77), {&x}, {&y, &mask}, o), NNRT_OK) << last_error();
    int64_t kept = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const bool keep = kernels::uniform01(kernels::philox_word(77, 1000 + static_cast<uint64_t>(i))) >= 0.25f;
      ASSERT_EQ(mask.at(i), keep ? 1 : 0) << i;
      kept += keep;
      const double want = keep ? x.at(i) / 0.75 : 0;
      ASSERT_NEAR(y.at(i), want, dtype == NNRT_DTYPE_BF16 ? 1e-2 : (dtype == NNRT_DTYPE_F16 ? 1e-3 : 1e-6)) << i;
    }
    EXPECT_NEAR(static_cast<double>(kept) / x.numel(), 0.75, 0.04);
    Tensor dy = Tensor::random(dtype, x.dims, 2), dx = Tensor::zeros(dtype, x.dims);
    ASSERT_EQ(run_op(NNRT_OP_DROPOUT_BACKWARD, dropout_attrs(0.25, 77), {&dy, &mask}, {&dx}), NNRT_OK);
    for (int64_t i = 0; i < x.numel(); ++i)
      ASSERT_NEAR(dx.at(i), mask.at(i) ? dy.at(i) / 0.75 : 0, dtype == NNRT_DTYPE_BF16 ? 1e-2 : 1e-3);
  }
}

TEST(Dropout, ZeroProbabilityKeepsEverythingAndThreadsAgree) {
  Tensor x = Tensor::random(NNRT_DTYPE_F32, {1000, 70}, 3);
  Tensor y = Tensor::zeros(NNRT_DTYPE_F32, x.dims), mask = Tensor::zeros(NNRT_DTYPE_U8, x.dims);
  ASSERT_EQ(run_op(NNRT_OP_DROPOUT, dropout_attrs(0, 5), {&x}, {&y, &mask}), NNRT_OK);
  EXPECT_EQ(y.values(), x.values());
  Tensor y1 = Tensor::zeros(NNRT_DTYPE_F32, x.dims), m1 = Tensor::zeros(NNRT_DTYPE_U8, x.dims);
  Tensor y2 = Tensor::zeros(NNRT_DTYPE_F32, {70, 1000}).transposed(0, 1), m2 = Tensor::zeros(NNRT_DTYPE_U8, x.dims).relayout({1, 0});
  RunOptions o;
  ASSERT_EQ(run_op(NNRT_OP_DROPOUT, dropout_attrs(0.5, 6), {&x}, {&y1, &m1}, o), NNRT_OK);
  o.threads = 2;
  Tensor xs = x.relayout({1, 0}, 2);
  ASSERT_EQ(run_op(NNRT_OP_DROPOUT, dropout_attrs(0.5, 6), {&xs}, {&y2, &m2}, o), NNRT_OK);
  EXPECT_EQ(y2.values(), y1.values());  // element i of the stream goes to logical element i
  EXPECT_EQ(m2.values(), m1.values());
  Tensor nan = Tensor::of(NNRT_DTYPE_F32, {64}, std::vector<double>(64, NAN));
  Tensor ny = Tensor::zeros(NNRT_DTYPE_F32, {64}), nm = Tensor::zeros(NNRT_DTYPE_U8, {64});
  ASSERT_EQ(run_op(NNRT_OP_DROPOUT, dropout_attrs(0.5, 6), {&nan}, {&ny, &nm}), NNRT_OK);
  for (double v : ny.values()) EXPECT_TRUE(isnan(v));  // x * mask * scale, as PyTorch: NaN stays NaN
}

TEST(Dropout, RejectsBadProbability) {
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, {3}), y = Tensor::zeros(NNRT_DTYPE_F32, {3}), m = Tensor::zeros(NNRT_DTYPE_U8, {3});
  EXPECT_EQ(run_op(NNRT_OP_DROPOUT, dropout_attrs(1, 0), {&x}, {&y, &m}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("[0, 1)"), std::string::npos) << last_error();
  Tensor mf = Tensor::zeros(NNRT_DTYPE_F32, {3});
  EXPECT_EQ(run_op(NNRT_OP_DROPOUT, dropout_attrs(0.5, 0), {&x}, {&y, &mf}), NNRT_ERR_DTYPE);
}

TEST(Gather, RowsOfEveryDtypeAndIndexShape) {
  for (int32_t dtype : kAllDtypes) {
    Tensor table = Tensor::of(dtype, {4, 2}, {0, 1, 1, 0, 1, 1, 0, 0});
    Tensor idx = Tensor::of(NNRT_DTYPE_I64, {2, 3}, {3, 0, 2, 2, 1, 0});
    Tensor y = Tensor::zeros(dtype, {2, 3, 2});
    ASSERT_EQ(run_op(NNRT_OP_GATHER, attrs_with(0), {&table, &idx}, {&y}), NNRT_OK) << last_error();
    EXPECT_EQ(y.values(), (std::vector<double>{0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1})) << dtype_label(dtype);
  }
  Tensor table = Tensor::random(NNRT_DTYPE_F32, {10, 5}, 4).relayout({1, 0}, 2);
  Tensor scalar_index = Tensor::of(NNRT_DTYPE_I32, {}, {7});
  Tensor row = Tensor::zeros(NNRT_DTYPE_F32, {5});
  ASSERT_EQ(run_op(NNRT_OP_GATHER, attrs_with(0), {&table, &scalar_index}, {&row}), NNRT_OK);
  for (int64_t d = 0; d < 5; ++d) EXPECT_EQ(row.at(d), table.at(7 * 5 + d));
}

TEST(Gather, OutOfRangeIndexIsNamedAndNothingIsWritten) {
  Tensor table = Tensor::zeros(NNRT_DTYPE_F32, {4, 2});
  Tensor idx = Tensor::of(NNRT_DTYPE_I32, {2, 2}, {0, 1, 2, 4});
  Tensor y = Tensor::of(NNRT_DTYPE_F32, {2, 2, 2}, std::vector<double>(8, 9));
  EXPECT_EQ(run_op(NNRT_OP_GATHER, attrs_with(0), {&table, &idx}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("indices[1, 1] = 4"), std::string::npos) << last_error();
  EXPECT_EQ(y.values(), std::vector<double>(8, 9));
  Tensor negative = Tensor::of(NNRT_DTYPE_I64, {1}, {-1}), dtable = Tensor::zeros(NNRT_DTYPE_F32, {4, 2});
  Tensor dy = Tensor::zeros(NNRT_DTYPE_F32, {1, 2});
  EXPECT_EQ(run_op(NNRT_OP_SCATTER_ADD, attrs_with(0), {&dy, &negative}, {&dtable}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("-1"), std::string::npos) << last_error();
}

TEST(ScatterAdd, SumsRepeatedIndicesAndIsTheAdjointOfGather) {
  Tensor dy = Tensor::of(NNRT_DTYPE_F32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor idx = Tensor::of(NNRT_DTYPE_I32, {4}, {2, 0, 2, 2});
  Tensor dtable = Tensor::of(NNRT_DTYPE_F32, {3, 2}, {9, 9, 9, 9, 9, 9});  // overwritten
  ASSERT_EQ(run_op(NNRT_OP_SCATTER_ADD, attrs_with(0), {&dy, &idx}, {&dtable}), NNRT_OK) << last_error();
  EXPECT_EQ(dtable.values(), (std::vector<double>{3, 4, 0, 0, 13, 16}));
  // <gather(T), G> == <T, scatter_add(G)> for every float dtype, layouts and thread counts.
  for (int32_t dtype : kFloatDtypes) {
    Tensor table = Tensor::random(dtype, {50, 7}, 5), indices = Tensor::random(NNRT_DTYPE_I64, {30, 4}, 6, 0, 50);
    Tensor g = Tensor::random(dtype, {30, 4, 7}, 7), gathered = Tensor::zeros(dtype, {30, 4, 7});
    Tensor scattered = Tensor::zeros(dtype, {50, 7});
    ASSERT_EQ(run_op(NNRT_OP_GATHER, attrs_with(0), {&table, &indices}, {&gathered}), NNRT_OK);
    ASSERT_EQ(run_op(NNRT_OP_SCATTER_ADD, attrs_with(0), {&g, &indices}, {&scattered}), NNRT_OK);
    double left = 0, right = 0;
    for (int64_t i = 0; i < g.numel(); ++i) left += gathered.at(i) * g.at(i);
    for (int64_t i = 0; i < table.numel(); ++i) right += table.at(i) * scattered.at(i);
    // (The scattered table is rounded to the dtype: f16 and bf16 agree only to their precision.)
    const double tol = dtype == NNRT_DTYPE_BF16 ? 0.5 : (dtype == NNRT_DTYPE_F16 ? 2e-2 : 1e-3);
    EXPECT_NEAR(left, right, tol) << dtype_label(dtype);
    Tensor strided = Tensor::zeros(dtype, {7, 50}).transposed(0, 1);
    Tensor gs = g.relayout({2, 0, 1}), is = indices.flipped();
    RunOptions two;
    two.threads = 2;
    ASSERT_EQ(run_op(NNRT_OP_SCATTER_ADD, attrs_with(0), {&gs, &is}, {&strided}, two), NNRT_OK);
    EXPECT_EQ(strided.values(), scattered.values()) << dtype_label(dtype);
  }
}

}  // namespace
}  // namespace nnrt::reftest
