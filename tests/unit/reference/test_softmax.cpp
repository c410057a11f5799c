// SOFTMAX and SOFTMAX_BACKWARD: values against the formula in double, stability, axes and strides,
// and finite-difference gradients in f64.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"

namespace nnrt::reftest {
namespace {

nnrt_op_attrs softmax_attrs(int alg, int axis) {
  nnrt_op_attrs a = attrs_with(alg);
  a.axis = axis;
  return a;
}

// The formula, along `axis` of a [rows, cols] matrix.
std::vector<double> reference_softmax(const Tensor &x, int alg, int axis) {
  const int64_t rows = x.dims[0], cols = x.dims[1];
  std::vector<double> y(static_cast<size_t>(rows * cols));
  const int64_t lines = axis == 1 ? rows : cols, length = axis == 1 ? cols : rows;
  for (int64_t l = 0; l < lines; ++l) {
    auto at = [&](int64_t k) { return axis == 1 ? l * cols + k : k * cols + l; };
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < length; ++k) m = fmax(m, x.at(at(k)));
    for (int64_t k = 0; k < length; ++k) s += exp(x.at(at(k)) - m);
    for (int64_t k = 0; k < length; ++k)
      y[static_cast<size_t>(at(k))] = alg == NNRT_SOFTMAX ? exp(x.at(at(k)) - m) / s : x.at(at(k)) - m - log(s);
  }
  return y;
}

std::vector<double> run_softmax(const Tensor &x, int alg, int axis, int threads = 1) {
  Tensor y = Tensor::zeros(x.dtype, x.dims);
  RunOptions o;
  o.threads = threads;
  if (run_op(NNRT_OP_SOFTMAX, softmax_attrs(alg, axis), {&x}, {&y}, o) != NNRT_OK) ADD_FAILURE() << last_error();
  return y.values();
}

TEST(Softmax, MatchesFormulaForEveryDtypeAndAxis) {
  const double tolerance[] = {0, 1e-6, 1e-14, 4e-3, 3e-2};
  for (int32_t dtype : kFloatDtypes)
    for (int alg : {NNRT_SOFTMAX, NNRT_LOG_SOFTMAX})
      for (int axis : {0, 1}) {
        Tensor x = Tensor::random(dtype, {5, 7}, 21, -4, 4);
        EXPECT_LT(max_relative_error(run_softmax(x, alg, axis), reference_softmax(x, alg, axis), 0.01), tolerance[dtype])
            << dtype_label(dtype) << " alg " << alg << " axis " << axis;
      }
}

TEST(Softmax, HandComputedAndStable) {
  Tensor x = Tensor::of(NNRT_DTYPE_F64, {1, 3}, {1000, 1000 + log(2.0), 1000 + log(5.0)});
  const std::vector<double> y = run_softmax(x, NNRT_SOFTMAX, 1);
  // (1000 + log 2 carries an input rounding error of about 1e-13.)
  EXPECT_NEAR(y[0], 0.125, 1e-12);
  EXPECT_NEAR(y[1], 0.25, 1e-12);
  EXPECT_NEAR(y[2], 0.625, 1e-12);
  const std::vector<double> l = run_softmax(x, NNRT_LOG_SOFTMAX, 1);
  EXPECT_NEAR(l[0], log(0.125), 1e-12);
  Tensor f = Tensor::of(NNRT_DTYPE_F32, {2, 2}, {-INFINITY, 0, -1e30, 1e30});
  const std::vector<double> g = run_softmax(f, NNRT_SOFTMAX, 1);
  EXPECT_EQ(g, (std::vector<double>{0, 1, 0, 1}));
}

TEST(Softmax, StridesAndThreadsGiveIdenticalBits) {
  Tensor x = Tensor::random(NNRT_DTYPE_F32, {300, 200}, 4, -3, 3);
  for (int axis : {0, 1}) {
    const std::vector<double> base = run_softmax(x, NNRT_SOFTMAX, axis);
    EXPECT_EQ(run_softmax(x.relayout({1, 0}, 2), NNRT_SOFTMAX, axis, 2), base);
    EXPECT_EQ(run_softmax(x.flipped(), NNRT_SOFTMAX, axis, 2), base);
  }
  Tensor t3 = Tensor::random(NNRT_DTYPE_F64, {2, 3, 4}, 5);
  Tensor y = Tensor::zeros(NNRT_DTYPE_F64, {2, 3, 4});
  ASSERT_EQ(run_op(NNRT_OP_SOFTMAX, softmax_attrs(NNRT_SOFTMAX, 1), {&t3}, {&y}), NNRT_OK);
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t c = 0; c < 4; ++c) {
      double s = 0;
      for (int64_t b = 0; b < 3; ++b) s += y.at(a * 12 + b * 4 + c);
      EXPECT_NEAR(s, 1, 1e-15);
    }
}

TEST(SoftmaxBackward, FiniteDifferencesInF64) {
  for (int alg : {NNRT_SOFTMAX, NNRT_LOG_SOFTMAX})
    for (int axis : {0, 1}) {
      Tensor x = Tensor::random(NNRT_DTYPE_F64, {4, 5}, 31, -2, 2);
      Tensor y = Tensor::zeros(NNRT_DTYPE_F64, {4, 5}), dy = Tensor::random(NNRT_DTYPE_F64, {4, 5}, 32);
      Tensor dx = Tensor::zeros(NNRT_DTYPE_F64, {4, 5});
      ASSERT_EQ(run_op(NNRT_OP_SOFTMAX, softmax_attrs(alg, axis), {&x}, {&y}), NNRT_OK);
      ASSERT_EQ(run_op(NNRT_OP_SOFTMAX_BACKWARD, softmax_attrs(alg, axis), {&dy, &y}, {&dx}), NNRT_OK) << last_error();
      const std::vector<double> numeric = numeric_gradient(
          [&](const std::vector<double> &v) { return run_softmax(Tensor::of(NNRT_DTYPE_F64, {4, 5}, v), alg, axis); },
          x.values(), dy.values());
      EXPECT_LT(max_relative_error(dx.values(), numeric), 1e-8) << "alg " << alg << " axis " << axis;
      Tensor dx_strided = Tensor::zeros(NNRT_DTYPE_F64, {4, 5}).relayout({1, 0});
      Tensor dyt = dy.relayout({1, 0}, 2), yt = y.flipped();
      RunOptions two;
      two.threads = 2;
      ASSERT_EQ(run_op(NNRT_OP_SOFTMAX_BACKWARD, softmax_attrs(alg, axis), {&dyt, &yt}, {&dx_strided}, two), NNRT_OK);
      EXPECT_EQ(dx_strided.values(), dx.values());
    }
}

TEST(Softmax, RejectsBadDescriptors) {
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, {2, 3}), y = Tensor::zeros(NNRT_DTYPE_F32, {2, 3});
  EXPECT_EQ(run_op(NNRT_OP_SOFTMAX, softmax_attrs(NNRT_SOFTMAX, 2), {&x}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(run_op(NNRT_OP_SOFTMAX, softmax_attrs(3, 1), {&x}, {&y}), NNRT_ERR_UNSUPPORTED);
  Tensor xi = Tensor::zeros(NNRT_DTYPE_I32, {2, 3});
  EXPECT_EQ(run_op(NNRT_OP_SOFTMAX, softmax_attrs(NNRT_SOFTMAX, 1), {&xi}, {&xi}), NNRT_ERR_DTYPE);
  Tensor s = Tensor::zeros(NNRT_DTYPE_F32, {});
  EXPECT_EQ(run_op(NNRT_OP_SOFTMAX, softmax_attrs(NNRT_SOFTMAX, 0), {&s}, {&s}), NNRT_ERR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace nnrt::reftest
