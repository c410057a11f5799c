// BINARY: every alg and dtype, numpy broadcasting through stride 0, integer semantics, NaN, and
// in-place accumulation.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"
#include "nnrt/kernels/half.h"

namespace nnrt::reftest {
namespace {

// One float operation as the backend must compute it: exactly rounded in the compute type (f32
// for f32/f16/bf16: double is wide enough that rounding the double result to f32 is that), then
// rounded once to the dtype.
double float_op(int alg, double a, double b, int32_t dtype) {
  double r;
  switch (alg) {
    case NNRT_BINARY_ADD: r = a + b; break;
    case NNRT_BINARY_SUB: r = a - b; break;
    case NNRT_BINARY_MUL: r = a * b; break;
    case NNRT_BINARY_DIV: r = a / b; break;
    case NNRT_BINARY_MAX: r = isnan(a) || isnan(b) ? NAN : fmax(a, b); break;
    default: r = isnan(a) || isnan(b) ? NAN : fmin(a, b); break;
  }
  if (dtype == NNRT_DTYPE_F64) return r;
  const float f = static_cast<float>(r);
  if (dtype == NNRT_DTYPE_F16) return kernels::f16_to_f32(kernels::f32_to_f16(f));
  if (dtype == NNRT_DTYPE_BF16) return kernels::bf16_to_f32(kernels::f32_to_bf16(f));
  return f;
}

void expect_same(const std::vector<double> &got, const std::vector<double> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (isnan(want[i])) EXPECT_TRUE(isnan(got[i])) << what << " at " << i;
    else EXPECT_EQ(got[i], want[i]) << what << " at " << i;
  }
}

TEST(Binary, EveryFloatAlgAndDtypeWithBroadcast) {
  for (int alg = NNRT_BINARY_ADD; alg <= NNRT_BINARY_MIN; ++alg)
    for (int32_t dtype : kFloatDtypes) {
      // a [2, 3] with b [3] broadcast over rows (rank-differing: [1, 3] with stride 0), and a
      // column [2, 1] against a row [1, 3] (both broadcast).
      Tensor a = Tensor::random(dtype, {2, 3}, 1), row = Tensor::random(dtype, {1, 3}, 2, 0.5, 2);
      Tensor b = row.broadcast_to({2, 3}), c = Tensor::zeros(dtype, {2, 3});
      ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(alg), {&a, &b}, {&c}), NNRT_OK) << last_error();
      std::vector<double> want;
      for (int64_t i = 0; i < 6; ++i) want.push_back(float_op(alg, a.at(i), row.at(i % 3), dtype));
      expect_same(c.values(), want, std::string("alg ") + std::to_string(alg) + " " + dtype_label(dtype));
      Tensor col = Tensor::random(dtype, {2, 1}, 3).broadcast_to({2, 3});
      ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(alg), {&col, &b}, {&c}), NNRT_OK);
      want.clear();
      for (int64_t i = 0; i < 6; ++i) want.push_back(float_op(alg, col.at(i), row.at(i % 3), dtype));
      expect_same(c.values(), want, "outer broadcast");
    }
}

TEST(Binary, HandComputedAndScalars) {
  Tensor a = Tensor::of(NNRT_DTYPE_F32, {}, {6}), b = Tensor::of(NNRT_DTYPE_F32, {}, {4});
  Tensor c = Tensor::zeros(NNRT_DTYPE_F32, {});
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_DIV), {&a, &b}, {&c}), NNRT_OK);
  EXPECT_EQ(c.at(0), 1.5);
  Tensor x = Tensor::of(NNRT_DTYPE_F32, {4}, {1, NAN, 3, -0.5}), y = Tensor::of(NNRT_DTYPE_F32, {4}, {NAN, 2, 1, -1});
  Tensor m = Tensor::zeros(NNRT_DTYPE_F32, {4});
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_MAX), {&x, &y}, {&m}), NNRT_OK);
  expect_same(m.values(), {NAN, NAN, 3, -0.5}, "max");
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_MIN), {&x, &y}, {&m}), NNRT_OK);
  expect_same(m.values(), {NAN, NAN, 1, -1}, "min");
}

TEST(Binary, IntegerSemantics) {
  Tensor a = Tensor::of(NNRT_DTYPE_I32, {6}, {2147483647, -7, 7, -2147483648.0, 5, -9});
  Tensor b = Tensor::of(NNRT_DTYPE_I32, {6}, {1, 2, -2, -1, 0, 4});
  Tensor c = Tensor::zeros(NNRT_DTYPE_I32, {6});
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_ADD), {&a, &b}, {&c}), NNRT_OK);
  EXPECT_EQ(c.values(), (std::vector<double>{-2147483648.0, -5, 5, 2147483647, 5, -5}));
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_DIV), {&a, &b}, {&c}), NNRT_OK);
  EXPECT_EQ(c.values(), (std::vector<double>{2147483647, -3, -3, -2147483648.0, 0, -2}));
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_MUL), {&a, &b}, {&c}), NNRT_OK);
  EXPECT_EQ(c.values(), (std::vector<double>{2147483647, -14, -14, -2147483648.0, 0, -36}));
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_MAX), {&a, &b}, {&c}), NNRT_OK);
  EXPECT_EQ(c.values(), (std::vector<double>{2147483647, 2, 7, -1, 5, 4}));
  Tensor u = Tensor::of(NNRT_DTYPE_U8, {3}, {3, 200, 9}), v = Tensor::of(NNRT_DTYPE_U8, {3}, {5, 100, 2});
  Tensor w = Tensor::zeros(NNRT_DTYPE_U8, {3});
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_SUB), {&u, &v}, {&w}), NNRT_OK);
  EXPECT_EQ(w.values(), (std::vector<double>{254, 100, 7}));
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_ADD), {&u, &v}, {&w}), NNRT_OK);
  EXPECT_EQ(w.values(), (std::vector<double>{8, 44, 11}));
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_DIV), {&u, &v}, {&w}), NNRT_OK);
  EXPECT_EQ(w.values(), (std::vector<double>{0, 2, 4}));
  Tensor l = Tensor::of(NNRT_DTYPE_I64, {2}, {1e15, -3}), k = Tensor::of(NNRT_DTYPE_I64, {2}, {3, 3});
  Tensor r = Tensor::zeros(NNRT_DTYPE_I64, {2});
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_MUL), {&l, &k}, {&r}), NNRT_OK);
  EXPECT_EQ(r.values(), (std::vector<double>{3e15, -9}));
}

TEST(Binary, InPlaceStridedEmptyAndThreads) {
  Tensor a = Tensor::random(NNRT_DTYPE_F32, {150, 400}, 4), b = Tensor::random(NNRT_DTYPE_F32, {150, 400}, 5);
  Tensor expected = Tensor::zeros(NNRT_DTYPE_F32, {150, 400});
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_MUL), {&a, &b}, {&expected}), NNRT_OK);
  Tensor acc = a.relayout({0, 1});
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_MUL), {&acc, &b}, {&acc}), NNRT_OK);  // c aliases a
  EXPECT_EQ(acc.values(), expected.values());
  Tensor at = a.relayout({1, 0}, 2), bt = b.flipped(), c = Tensor::zeros(NNRT_DTYPE_F32, {150, 400}).relayout({1, 0});
  RunOptions two;
  two.threads = 2;
  ASSERT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_MUL), {&at, &bt}, {&c}, two), NNRT_OK);
  EXPECT_EQ(c.values(), expected.values());
  Tensor e = Tensor::zeros(NNRT_DTYPE_F32, {3, 0, 2});
  EXPECT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_ADD), {&e, &e}, {&e}), NNRT_OK);
}

TEST(Binary, RejectsBadDescriptors) {
  Tensor a = Tensor::zeros(NNRT_DTYPE_F32, {2, 3}), b = Tensor::zeros(NNRT_DTYPE_F32, {1, 3});
  Tensor c = Tensor::zeros(NNRT_DTYPE_F32, {2, 3});
  EXPECT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_ADD), {&a, &b}, {&c}), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("stride 0"), std::string::npos) << last_error();
  Tensor d = Tensor::zeros(NNRT_DTYPE_F64, {2, 3});
  EXPECT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_ADD), {&a, &d}, {&c}), NNRT_ERR_DTYPE);
  Tensor bools = Tensor::zeros(NNRT_DTYPE_BOOL, {2, 3});
  EXPECT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_ADD), {&bools, &bools}, {&bools}), NNRT_ERR_DTYPE);
  EXPECT_EQ(run_op(NNRT_OP_BINARY, attrs_with(0), {&a, &a}, {&c}), NNRT_ERR_UNSUPPORTED);
  Tensor repeated = c.broadcast_to({2, 3});
  repeated.strides[0] = 0;
  EXPECT_EQ(run_op(NNRT_OP_BINARY, attrs_with(NNRT_BINARY_ADD), {&a, &a}, {&repeated}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("repeat"), std::string::npos) << last_error();
}

}  // namespace
}  // namespace nnrt::reftest
