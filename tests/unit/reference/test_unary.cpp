// UNARY and UNARY_BACKWARD: every alg against formulas written here in double, every dtype path,
// integer wrap-around, in-place runs, strided operands, and finite-difference gradients in f64.
#include <math.h>

#include <functional>

#include <gtest/gtest.h>

#include "harness.h"
#include "nnrt/kernels/half.h"

namespace nnrt::reftest {
namespace {

constexpr double kAlpha = 0.3, kBeta = 0.6;

double reference_unary(int alg, double x) {
  switch (alg) {
    case NNRT_UNARY_IDENTITY: return x;
    case NNRT_UNARY_NEG: return -x;
    case NNRT_UNARY_ABS: return fabs(x);
    case NNRT_UNARY_EXP: return exp(x);
    case NNRT_UNARY_LOG: return log(x);
    case NNRT_UNARY_SQRT: return sqrt(x);
    case NNRT_UNARY_SQUARE: return x * x;
    case NNRT_UNARY_RELU: return x > 0 ? x : 0;
    case NNRT_UNARY_LEAKY_RELU: return x > 0 ? x : kAlpha * x;
    case NNRT_UNARY_ELU: return x > 0 ? x : kAlpha * (exp(x) - 1);
    case NNRT_UNARY_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case NNRT_UNARY_SIGMOID: return 1 / (1 + exp(-x));
    case NNRT_UNARY_TANH: return tanh(x);
    case NNRT_UNARY_LINEAR: return kAlpha * x + kBeta;
    case NNRT_UNARY_CLIP: return x < kAlpha ? kAlpha : (x > kBeta ? kBeta : x);
    case NNRT_UNARY_SIGN: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case NNRT_UNARY_SWISH: return x / (1 + exp(-kAlpha * x));
    case NNRT_UNARY_HARD_SIGMOID: return fmax(0, fmin(1, kAlpha * x + kBeta));
    case NNRT_UNARY_HARD_SWISH: return x * fmax(0, fmin(1, kAlpha * x + kBeta));
    // 0.5 x (1 + tanh(u)) as x / (1 + exp(-2u)), which does not cancel for negative x.
    case NNRT_UNARY_GELU_TANH: return x / (1 + exp(-2 * sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case NNRT_UNARY_ERF: return erf(x);
    case NNRT_UNARY_SOFTPLUS: return log1p(exp(x));
  }
  return NAN;
}

bool positive_only(int alg) { return alg == NNRT_UNARY_LOG || alg == NNRT_UNARY_SQRT; }

// Inputs away from kinks (0, and the clip bounds), exactly representable in every float dtype.
std::vector<double> test_inputs(int alg) {
  if (positive_only(alg)) return {0.125, 0.5, 1, 1.5, 2.75, 7, 0.0625, 3};
  return {-2.5, -1, -0.375, -0.0625, 0.125, 0.4375, 0.875, 2.25, 4, -6};
}

double tolerance(int32_t dtype) {
  switch (dtype) {
    case NNRT_DTYPE_F64: return 1e-14;
    case NNRT_DTYPE_F32: return 1e-6;
    case NNRT_DTYPE_F16: return 2e-3;
    default: return 1.6e-2;
  }
}

nnrt_op_attrs unary_attrs(int alg) {
  nnrt_op_attrs a = attrs_with(alg);
  a.alpha = kAlpha;
  a.beta = kBeta;
  return a;
}

TEST(Unary, EveryAlgEveryFloatDtype) {
  for (int alg = NNRT_UNARY_IDENTITY; alg <= NNRT_UNARY_LAST; ++alg)
    for (int32_t dtype : kFloatDtypes) {
      const std::vector<double> in = test_inputs(alg);
      Tensor x = Tensor::of(dtype, {static_cast<int64_t>(in.size())}, in);
      Tensor y = Tensor::zeros(dtype, x.dims);
      ASSERT_EQ(run_op(NNRT_OP_UNARY, unary_attrs(alg), {&x}, {&y}), NNRT_OK) << last_error();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const double expected = reference_unary(alg, x.at(i));
        EXPECT_NEAR(y.at(i), expected, tolerance(dtype) * (fabs(expected) + 1e-3))
            << "alg " << alg << " " << dtype_label(dtype) << " x=" << x.at(i);
      }
    }
}

TEST(Unary, HandComputedValues) {
  Tensor x = Tensor::of(NNRT_DTYPE_F64, {3}, {-1, 0, 2});
  Tensor y = Tensor::zeros(NNRT_DTYPE_F64, {3});
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_GELU), {&x}, {&y}), NNRT_OK);
  EXPECT_NEAR(y.at(0), -0.15865525393145707, 1e-15);  // -Phi(-1)
  EXPECT_EQ(y.at(1), 0);
  EXPECT_NEAR(y.at(2), 1.9544997361036416, 1e-15);  // 2 Phi(2)
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_SIGMOID), {&x}, {&y}), NNRT_OK);
  EXPECT_NEAR(y.at(0), 0.2689414213699951, 1e-15);
  EXPECT_EQ(y.at(1), 0.5);
  Tensor far = Tensor::of(NNRT_DTYPE_F32, {2}, {-100, 100});
  Tensor s = Tensor::zeros(NNRT_DTYPE_F32, {2});
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_SIGMOID), {&far}, {&s}), NNRT_OK);
  EXPECT_GT(s.at(0), 0);  // exp(-100) / (1 + exp(-100)), not 0 and not NaN
  EXPECT_EQ(s.at(1), 1);
}

TEST(Unary, NaNAndSignedZero) {
  Tensor x = Tensor::of(NNRT_DTYPE_F32, {2}, {NAN, -0.0});
  Tensor y = Tensor::zeros(NNRT_DTYPE_F32, {2});
  for (int alg : {NNRT_UNARY_RELU, NNRT_UNARY_SIGN, NNRT_UNARY_ABS, NNRT_UNARY_CLIP}) {
    nnrt_op_attrs a = unary_attrs(alg);
    a.alpha = -1;
    ASSERT_EQ(run_op(NNRT_OP_UNARY, a, {&x}, {&y}), NNRT_OK);
    EXPECT_TRUE(isnan(y.at(0))) << alg;
  }
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_SIGN), {&x}, {&y}), NNRT_OK);
  EXPECT_EQ(y.at(1), 0);
}

TEST(Unary, IntegersWrapLikeNumpy) {
  Tensor x = Tensor::of(NNRT_DTYPE_I32, {4}, {-2147483648.0, -5, 0, 7});
  Tensor y = Tensor::zeros(NNRT_DTYPE_I32, {4});
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_NEG), {&x}, {&y}), NNRT_OK);
  EXPECT_EQ(y.values(), (std::vector<double>{-2147483648.0, 5, 0, -7}));
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_ABS), {&x}, {&y}), NNRT_OK);
  EXPECT_EQ(y.values(), (std::vector<double>{-2147483648.0, 5, 0, 7}));
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_SIGN), {&x}, {&y}), NNRT_OK);
  EXPECT_EQ(y.values(), (std::vector<double>{-1, -1, 0, 1}));
  Tensor u = Tensor::of(NNRT_DTYPE_U8, {3}, {0, 3, 255}), v = Tensor::zeros(NNRT_DTYPE_U8, {3});
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_NEG), {&u}, {&v}), NNRT_OK);
  EXPECT_EQ(v.values(), (std::vector<double>{0, 253, 1}));
  Tensor l = Tensor::of(NNRT_DTYPE_I64, {2}, {-3, 4}), m = Tensor::zeros(NNRT_DTYPE_I64, {2});
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_ABS), {&l}, {&m}), NNRT_OK);
  EXPECT_EQ(m.values(), (std::vector<double>{3, 4}));
  EXPECT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_EXP), {&x}, {&y}), NNRT_ERR_DTYPE);
  EXPECT_NE(last_error().find("i32"), std::string::npos) << last_error();
}

TEST(Unary, InPlaceStridedAndThreads) {
  Tensor x = Tensor::random(NNRT_DTYPE_F32, {200, 300}, 5, -3, 3);
  Tensor expected = Tensor::zeros(NNRT_DTYPE_F32, {200, 300});
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_TANH), {&x}, {&expected}), NNRT_OK);
  Tensor in_place = x.relayout({0, 1});
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_TANH), {&in_place}, {&in_place}), NNRT_OK);
  EXPECT_EQ(in_place.values(), expected.values());
  Tensor transposed_in = x.relayout({1, 0}, 2), strided_out = expected.relayout({1, 0}, 3);
  RunOptions two;
  two.threads = 2;
  ASSERT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_TANH), {&transposed_in}, {&strided_out}, two), NNRT_OK);
  EXPECT_EQ(strided_out.values(), expected.values());
}

TEST(Unary, RejectsBadDescriptors) {
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, {3}), y = Tensor::zeros(NNRT_DTYPE_F32, {3});
  nnrt_op_attrs clip = attrs_with(NNRT_UNARY_CLIP);
  clip.alpha = 2;
  clip.beta = 1;
  EXPECT_EQ(run_op(NNRT_OP_UNARY, clip, {&x}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("alpha"), std::string::npos);
  EXPECT_EQ(run_op(NNRT_OP_UNARY, attrs_with(99), {&x}, {&y}), NNRT_ERR_UNSUPPORTED);
  Tensor y64 = Tensor::zeros(NNRT_DTYPE_F64, {3}), y4 = Tensor::zeros(NNRT_DTYPE_F32, {4});
  EXPECT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_EXP), {&x}, {&y64}), NNRT_ERR_DTYPE);
  EXPECT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_EXP), {&x}, {&y4}), NNRT_ERR_SHAPE);
  EXPECT_EQ(run_op(NNRT_OP_UNARY, attrs_with(NNRT_UNARY_EXP), {&x, &x}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
}

// ---- Backward ---------------------------------------------------------------------------------

std::vector<double> forward_f64(int alg, const std::vector<double> &x) {
  Tensor in = Tensor::of(NNRT_DTYPE_F64, {static_cast<int64_t>(x.size())}, x);
  Tensor out = Tensor::zeros(NNRT_DTYPE_F64, in.dims);
  if (run_op(NNRT_OP_UNARY, unary_attrs(alg), {&in}, {&out}) != NNRT_OK) ADD_FAILURE() << last_error();
  return out.values();
}

TEST(UnaryBackward, FiniteDifferencesInF64ForEveryAlg) {
  for (int alg = NNRT_UNARY_IDENTITY; alg <= NNRT_UNARY_LAST; ++alg) {
    const std::vector<double> x = test_inputs(alg);
    Tensor xt = Tensor::of(NNRT_DTYPE_F64, {static_cast<int64_t>(x.size())}, x);
    Tensor dy = Tensor::random(NNRT_DTYPE_F64, xt.dims, 100 + alg);
    Tensor dx = Tensor::zeros(NNRT_DTYPE_F64, xt.dims);
    ASSERT_EQ(run_op(NNRT_OP_UNARY_BACKWARD, unary_attrs(alg), {&dy, &xt}, {&dx}), NNRT_OK) << last_error();
    const std::vector<double> numeric =
        numeric_gradient([&](const std::vector<double> &v) { return forward_f64(alg, v); }, x, dy.values());
    EXPECT_LT(max_relative_error(dx.values(), numeric), 1e-7) << "alg " << alg;
  }
}

TEST(UnaryBackward, FromForwardOutputEqualsFromInput) {
  for (int alg : {NNRT_UNARY_RELU, NNRT_UNARY_LEAKY_RELU, NNRT_UNARY_ELU, NNRT_UNARY_SIGMOID, NNRT_UNARY_TANH,
                  NNRT_UNARY_LINEAR})
    for (int32_t dtype : {NNRT_DTYPE_F64, NNRT_DTYPE_F32}) {
      Tensor x = Tensor::of(dtype, {10}, test_inputs(alg));
      Tensor y = Tensor::zeros(dtype, {10}), dy = Tensor::random(dtype, {10}, 3);
      ASSERT_EQ(run_op(NNRT_OP_UNARY, unary_attrs(alg), {&x}, {&y}), NNRT_OK);
      Tensor from_x = Tensor::zeros(dtype, {10}), from_y = Tensor::zeros(dtype, {10});
      nnrt_op_attrs a = unary_attrs(alg);
      ASSERT_EQ(run_op(NNRT_OP_UNARY_BACKWARD, a, {&dy, &x}, {&from_x}), NNRT_OK);
      a.flags = NNRT_FLAG_USE_DST;
      ASSERT_EQ(run_op(NNRT_OP_UNARY_BACKWARD, a, {&dy, &y}, {&from_y}), NNRT_OK) << last_error();
      EXPECT_LT(max_relative_error(from_y.values(), from_x.values()), dtype == NNRT_DTYPE_F64 ? 1e-13 : 1e-5) << alg;
    }
}

TEST(UnaryBackward, HalvesAndStrides) {
  for (int32_t dtype : {NNRT_DTYPE_F16, NNRT_DTYPE_BF16}) {
    Tensor x = Tensor::of(dtype, {2, 5}, test_inputs(NNRT_UNARY_GELU)), dy = Tensor::random(dtype, {2, 5}, 9);
    Tensor dx = Tensor::zeros(dtype, {2, 5});
    ASSERT_EQ(run_op(NNRT_OP_UNARY_BACKWARD, attrs_with(NNRT_UNARY_GELU), {&dy, &x}, {&dx}), NNRT_OK);
    Tensor x64 = x.cast(NNRT_DTYPE_F64), dy64 = dy.cast(NNRT_DTYPE_F64), dx64 = Tensor::zeros(NNRT_DTYPE_F64, {2, 5});
    ASSERT_EQ(run_op(NNRT_OP_UNARY_BACKWARD, attrs_with(NNRT_UNARY_GELU), {&dy64, &x64}, {&dx64}), NNRT_OK);
    EXPECT_LT(max_relative_error(dx.values(), dx64.values(), 0.1), tolerance(dtype));
    Tensor xs = x.relayout({1, 0}), dys = dy.flipped(), dxs = dx.relayout({1, 0}, 2);
    ASSERT_EQ(run_op(NNRT_OP_UNARY_BACKWARD, attrs_with(NNRT_UNARY_GELU), {&dys, &xs}, {&dxs}), NNRT_OK);
    EXPECT_EQ(dxs.values(), dx.values());
  }
}

TEST(UnaryBackward, RejectsUseDstWhereItCannotWork) {
  Tensor a = Tensor::zeros(NNRT_DTYPE_F32, {3}), b = Tensor::zeros(NNRT_DTYPE_F32, {3}), c = Tensor::zeros(NNRT_DTYPE_F32, {3});
  nnrt_op_attrs exp_dst = attrs_with(NNRT_UNARY_EXP);
  exp_dst.flags = NNRT_FLAG_USE_DST;
  EXPECT_EQ(run_op(NNRT_OP_UNARY_BACKWARD, exp_dst, {&a, &b}, {&c}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("USE_DST"), std::string::npos);
  nnrt_op_attrs leaky = attrs_with(NNRT_UNARY_LEAKY_RELU);
  leaky.flags = NNRT_FLAG_USE_DST;
  leaky.alpha = -0.5;
  EXPECT_EQ(run_op(NNRT_OP_UNARY_BACKWARD, leaky, {&a, &b}, {&c}), NNRT_ERR_INVALID_ARGUMENT);
  Tensor ints = Tensor::zeros(NNRT_DTYPE_I32, {3});
  EXPECT_EQ(run_op(NNRT_OP_UNARY_BACKWARD, attrs_with(NNRT_UNARY_NEG), {&ints, &ints}, {&ints}), NNRT_ERR_DTYPE);
}

}  // namespace
}  // namespace nnrt::reftest
