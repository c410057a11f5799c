// The reference backend's int8 kernels on hand-computed cases: QUANTIZE's rounding (half to even),
// saturation and NaN; MATMUL_INT8 and CONV2D_INT8 with zero points (a padded position adds nothing),
// per-channel scales, bias and a fused activation; and the descriptor checks.
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"

namespace nnrt::reftest {
namespace {

nnrt_op_attrs quantization(double scale, int32_t zero_point) {
  nnrt_op_attrs a = attrs_with(0);
  a.scale = scale;
  a.zero_point = zero_point;
  return a;
}

TEST(Int8, QuantizeRoundsHalfToEvenAndSaturates) {
  Tensor x = Tensor::of(NNRT_DTYPE_F32, {8}, {0.25, 0.75, -0.25, 1.25, 300, -300, NAN, 0.5});
  Tensor u8 = Tensor::zeros(NNRT_DTYPE_U8, {8}), i8 = Tensor::zeros(NNRT_DTYPE_I8, {8});
  // x / 0.5: 0.5 -> 0, 1.5 -> 2, -0.5 -> 0, 2.5 -> 2 (ties to even); then + 10, saturated; NaN -> 10.
  ASSERT_EQ(run_op(NNRT_OP_QUANTIZE, quantization(0.5, 10), {&x}, {&u8}), NNRT_OK) << last_error();
  EXPECT_EQ(u8.values(), (std::vector<double>{10, 12, 10, 12, 255, 0, 10, 11}));
  ASSERT_EQ(run_op(NNRT_OP_QUANTIZE, quantization(0.5, -3), {&x}, {&i8}), NNRT_OK) << last_error();
  EXPECT_EQ(i8.values(), (std::vector<double>{-3, -1, -3, -1, 127, -128, -3, -2}));
  // A strided input (transposed) gives the same values in the output's layout.
  Tensor m = Tensor::of(NNRT_DTYPE_F32, {2, 3}, {0, 1, 2, 3, 4, 5}).transposed(0, 1), q = Tensor::zeros(NNRT_DTYPE_U8, {3, 2});
  ASSERT_EQ(run_op(NNRT_OP_QUANTIZE, quantization(1, 0), {&m}, {&q}), NNRT_OK) << last_error();
  EXPECT_EQ(q.values(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(Int8, MatmulHandComputed) {
  // a (u8, zero point 2) [2, 3], b (i8) [3, 2]: acc = (a - 2) x b, then 0.5 * scales[n] * acc + bias.
  Tensor a = Tensor::of(NNRT_DTYPE_U8, {2, 3}, {2, 3, 4, 5, 6, 7});
  Tensor b = Tensor::of(NNRT_DTYPE_I8, {3, 2}, {1, -1, 2, 3, -4, 5});
  Tensor scales = Tensor::of(NNRT_DTYPE_F32, {2}, {1, 0.25}), bias = Tensor::of(NNRT_DTYPE_F32, {2}, {10, -1});
  Tensor c = Tensor::zeros(NNRT_DTYPE_F32, {2, 2});
  // acc row 0: (0, 1, 2) -> (0*1 + 1*2 + 2*-4, 0*-1 + 1*3 + 2*5) = (-6, 13); row 1: (3, 4, 5) -> (-9, 34).
  nnrt_op_attrs at = quantization(0.5, 2);
  ASSERT_EQ(run_op(NNRT_OP_MATMUL_INT8, at, {&a, &b, &scales, &bias}, {&c}), NNRT_OK) << last_error();
  EXPECT_EQ(c.values(), (std::vector<double>{0.5 * -6 + 10, 0.125 * 13 - 1, 0.5 * -9 + 10, 0.125 * 34 - 1}));
  at.fused = NNRT_UNARY_RELU;
  Tensor relu = Tensor::zeros(NNRT_DTYPE_F32, {2, 2});
  ASSERT_EQ(run_op(NNRT_OP_MATMUL_INT8, at, {&a, &b, &scales}, {&relu}), NNRT_OK) << last_error();
  EXPECT_EQ(relu.values(), (std::vector<double>{0, 0.125 * 13, 0, 0.125 * 34}));
  // b as a transposed view of [2, 3] (a dense layer's weight), c strided: the same numbers.
  Tensor bt = Tensor::of(NNRT_DTYPE_I8, {2, 3}, {1, 2, -4, -1, 3, 5}).transposed(0, 1);
  Tensor c2 = Tensor::zeros(NNRT_DTYPE_F32, {2, 2}).relayout({1, 0}, 2);
  ASSERT_EQ(run_op(NNRT_OP_MATMUL_INT8, quantization(0.5, 2), {&a, &bt, &scales, &bias}, {&c2}), NNRT_OK) << last_error();
  EXPECT_EQ(c2.values(), c.values());
}

TEST(Int8, ConvPaddingHoldsTheZeroPoint) {
  // One 3x3 channel of 5s (u8, zero point 5: all real zeros but the center 9 -> 4), a 3x3 filter of
  // ones, padding 1: every output sums only the center's 4 (padding adds nothing, as real zeros).
  std::vector<double> xv(9, 5);
  xv[4] = 9;
  Tensor x = Tensor::of(NNRT_DTYPE_U8, {1, 1, 3, 3}, xv);
  Tensor w = Tensor::of(NNRT_DTYPE_I8, {2, 1, 3, 3}, std::vector<double>(18, 1));
  for (int k = 9; k < 18; ++k) w.set(k, -2);
  Tensor scales = Tensor::of(NNRT_DTYPE_F32, {2}, {0.5, 1}), y = Tensor::zeros(NNRT_DTYPE_F32, {1, 2, 3, 3});
  nnrt_op_attrs at = quantization(0.25, 5);
  at.groups = 1;
  at.stride[0] = at.stride[1] = 1;
  at.dilation[0] = at.dilation[1] = 1;
  for (int i = 0; i < 4; ++i) at.pad[i] = 1;
  ASSERT_EQ(run_op(NNRT_OP_CONV2D_INT8, at, {&x, &w, &scales}, {&y}), NNRT_OK) << last_error();
  std::vector<double> want(9, 0.25 * 0.5 * 4);
  want.resize(18, 0.25 * 1 * 4 * -2);
  EXPECT_EQ(y.values(), want);
}

TEST(Int8, DescriptorChecks) {
  Tensor a = Tensor::zeros(NNRT_DTYPE_U8, {2, 3}), b = Tensor::zeros(NNRT_DTYPE_I8, {3, 2});
  Tensor scales = Tensor::zeros(NNRT_DTYPE_F32, {2}), c = Tensor::zeros(NNRT_DTYPE_F32, {2, 2});
  Tensor f = Tensor::zeros(NNRT_DTYPE_F32, {3, 2}), short_scales = Tensor::zeros(NNRT_DTYPE_F32, {3});
  EXPECT_EQ(create_op(make_desc(NNRT_OP_MATMUL_INT8, quantization(0, 0), {&a, &b, &scales}, {&c})), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(create_op(make_desc(NNRT_OP_MATMUL_INT8, quantization(1, 300), {&a, &b, &scales}, {&c})), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(create_op(make_desc(NNRT_OP_MATMUL_INT8, quantization(1, 0), {&a, &f, &scales}, {&c})), NNRT_ERR_DTYPE);
  EXPECT_EQ(create_op(make_desc(NNRT_OP_MATMUL_INT8, quantization(1, 0), {&a, &b, &short_scales}, {&c})), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("scales"), std::string::npos) << last_error();
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, {4}), y = Tensor::zeros(NNRT_DTYPE_I32, {4});
  EXPECT_EQ(create_op(make_desc(NNRT_OP_QUANTIZE, quantization(1, 0), {&x}, {&y})), NNRT_ERR_DTYPE);
}

}  // namespace
}  // namespace nnrt::reftest
