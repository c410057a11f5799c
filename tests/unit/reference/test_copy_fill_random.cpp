// COPY (every dtype pair, conversion rules, strides), FILL and RANDOM.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"
#include "nnrt/kernels/half.h"
#include "nnrt/kernels/philox.h"

namespace nnrt::reftest {
namespace {

// What COPY must give for a source value, by the header's rules (computed independently here).
double expected_cast(double v, int32_t to) {
  if (is_float_dtype(to)) return v;  // the test values are exact in every float dtype
  if (to == NNRT_DTYPE_BOOL) return v != 0 ? 1 : 0;
  if (isnan(v)) return 0;
  double t = trunc(v);
  double lo = to == NNRT_DTYPE_U8 ? 0 : (to == NNRT_DTYPE_I32 ? -2147483648.0 : -9223372036854775808.0);
  double hi = to == NNRT_DTYPE_U8 ? 255 : (to == NNRT_DTYPE_I32 ? 2147483647.0 : 9223372036854775807.0);
  return t < lo ? lo : (t > hi ? hi : t);
}

std::vector<double> source_values(int32_t dtype) {
  switch (dtype) {
    case NNRT_DTYPE_BOOL: return {0, 1, 1, 0, 1, 0};
    case NNRT_DTYPE_U8: return {0, 1, 7, 128, 255, 200};
    case NNRT_DTYPE_I32:
    case NNRT_DTYPE_I64: return {0, -1, 7, 300, -300, 255};
    default: return {0, -1.5, 2.75, 300, -300, 0.25};
  }
}

TEST(Copy, EveryDtypePairConverts) {
  for (int32_t from : kAllDtypes)
    for (int32_t to : kAllDtypes) {
      Tensor x = Tensor::of(from, {2, 3}, source_values(from));
      Tensor y = Tensor::zeros(to, {2, 3});
      ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&x}, {&y}), NNRT_OK) << last_error();
      for (int64_t i = 0; i < 6; ++i)
        EXPECT_EQ(y.at(i), expected_cast(x.at(i), to)) << dtype_label(from) << " -> " << dtype_label(to) << " at " << i;
    }
}

TEST(Copy, FloatToIntegerEdgeCases) {
  Tensor x = Tensor::of(NNRT_DTYPE_F64, {7}, {NAN, INFINITY, -INFINITY, 3e9, -3e9, -0.99, 2.99});
  Tensor i32 = Tensor::zeros(NNRT_DTYPE_I32, {7}), u8 = Tensor::zeros(NNRT_DTYPE_U8, {7}),
         b = Tensor::zeros(NNRT_DTYPE_BOOL, {7});
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&x}, {&i32}), NNRT_OK);
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&x}, {&u8}), NNRT_OK);
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&x}, {&b}), NNRT_OK);
  EXPECT_EQ(i32.values(), (std::vector<double>{0, 2147483647, -2147483648.0, 2147483647, -2147483648.0, 0, 2}));
  EXPECT_EQ(u8.values(), (std::vector<double>{0, 255, 0, 255, 0, 0, 2}));
  EXPECT_EQ(b.values(), (std::vector<double>{1, 1, 1, 1, 1, 1, 1}));
}

TEST(Copy, IntegerNarrowingSaturates) {
  Tensor x = Tensor::of(NNRT_DTYPE_I64, {4}, {5e9, -5e9, 300, -3});
  Tensor i32 = Tensor::zeros(NNRT_DTYPE_I32, {4}), u8 = Tensor::zeros(NNRT_DTYPE_U8, {4});
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&x}, {&i32}), NNRT_OK);
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&x}, {&u8}), NNRT_OK);
  EXPECT_EQ(i32.values(), (std::vector<double>{2147483647, -2147483648.0, 300, -3}));
  EXPECT_EQ(u8.values(), (std::vector<double>{255, 0, 255, 0}));
}

TEST(Copy, RoundsToNearestEvenOnce) {
  // 1 + 2^-11 is the f16 tie between 1 and 1 + 2^-10: to even (1). 1 + 3 * 2^-11 ties up.
  // f64 1 + 2^-11 + 2^-40 is above the tie: an f32 detour would lose that and give 1.
  Tensor x = Tensor::of(NNRT_DTYPE_F64, {4}, {1 + ldexp(1, -11), 1 + 3 * ldexp(1, -11), 1 + ldexp(1, -11) + ldexp(1, -40), 65520});
  Tensor h = Tensor::zeros(NNRT_DTYPE_F16, {4});
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&x}, {&h}), NNRT_OK);
  EXPECT_EQ(h.values(), (std::vector<double>{1, 1 + ldexp(1, -9), 1 + ldexp(1, -10), INFINITY}));
  // i64 2^60 + 2^52 + 1 lies above the bf16 midpoint of 2^60 and 2^60 + 2^53.
  Tensor big = Tensor::zeros(NNRT_DTYPE_I64, {1});
  *static_cast<int64_t *>(big.data()) = (int64_t{1} << 60) + (int64_t{1} << 52) + 1;
  Tensor b = Tensor::zeros(NNRT_DTYPE_BF16, {1});
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&big}, {&b}), NNRT_OK);
  EXPECT_EQ(b.at(0), ldexp(1, 60) + ldexp(1, 53));
}

TEST(Copy, StridedInputsAndOutputs) {
  Tensor x = Tensor::random(NNRT_DTYPE_F32, {3, 4, 5}, 1);
  const std::vector<Tensor> inputs = {x.relayout({2, 0, 1}), x.relayout({1, 2, 0}, 3), x.flipped()};
  for (const Tensor &in : inputs) {
    Tensor y = Tensor::zeros(NNRT_DTYPE_F32, {3, 4, 5});
    ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&in}, {&y}), NNRT_OK);
    EXPECT_EQ(y.values(), x.values());
    Tensor strided_out = y.relayout({2, 1, 0}, 2);
    Tensor f64_out = y.cast(NNRT_DTYPE_F64).relayout({1, 0, 2});
    ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&in}, {&strided_out}), NNRT_OK);
    ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&in}, {&f64_out}), NNRT_OK);
    EXPECT_EQ(strided_out.values(), x.values());
    EXPECT_EQ(f64_out.values(), x.values());
  }
}

TEST(Copy, BroadcastScalarAndEmpty) {
  Tensor row = Tensor::of(NNRT_DTYPE_I32, {1, 3}, {1, 2, 3});
  Tensor wide = row.broadcast_to({4, 3});
  Tensor y = Tensor::zeros(NNRT_DTYPE_I64, {4, 3});
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&wide}, {&y}), NNRT_OK);
  EXPECT_EQ(y.values(), (std::vector<double>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
  Tensor s = Tensor::of(NNRT_DTYPE_F64, {}, {2.5}), t = Tensor::zeros(NNRT_DTYPE_F16, {});
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&s}, {&t}), NNRT_OK);
  EXPECT_EQ(t.at(0), 2.5);
  Tensor e = Tensor::zeros(NNRT_DTYPE_F32, {0, 3}), f = Tensor::zeros(NNRT_DTYPE_I32, {0, 3});
  EXPECT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&e}, {&f}), NNRT_OK);
}

TEST(Copy, ThreadCountDoesNotChangeResults) {
  Tensor x = Tensor::random(NNRT_DTYPE_F32, {300, 500}, 2, -1e5, 1e5).transposed(0, 1);
  Tensor a = Tensor::zeros(NNRT_DTYPE_BF16, {500, 300}), b = Tensor::zeros(NNRT_DTYPE_BF16, {500, 300});
  RunOptions two;
  two.threads = 2;
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&x}, {&a}), NNRT_OK);
  ASSERT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&x}, {&b}, two), NNRT_OK);
  EXPECT_EQ(a.bytes(), b.bytes());
}

TEST(Copy, RejectsMismatchedDims) {
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, {2, 3}), y = Tensor::zeros(NNRT_DTYPE_F32, {3, 2});
  EXPECT_EQ(run_op(NNRT_OP_COPY, attrs_with(0), {&x}, {&y}), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("[3, 2]"), std::string::npos) << last_error();
  EXPECT_NE(last_error().find("[2, 3]"), std::string::npos) << last_error();
}

TEST(Fill, EveryDtype) {
  for (int32_t dtype : kAllDtypes) {
    Tensor y = Tensor::zeros(dtype, {2, 2});
    RunOptions o;
    o.scalars[0] = -2.5;
    ASSERT_EQ(run_op(NNRT_OP_FILL, attrs_with(0), {}, {&y}, o), NNRT_OK) << last_error();
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(y.at(i), expected_cast(-2.5, dtype)) << dtype_label(dtype);
  }
  Tensor strided = Tensor::zeros(NNRT_DTYPE_F32, {3, 4}).relayout({1, 0}, 2);
  RunOptions o;
  o.scalars[0] = 7;
  ASSERT_EQ(run_op(NNRT_OP_FILL, attrs_with(0), {}, {&strided}, o), NNRT_OK);
  EXPECT_EQ(strided.values(), std::vector<double>(12, 7.0));
  Tensor scalar = Tensor::zeros(NNRT_DTYPE_I64, {});
  ASSERT_EQ(run_op(NNRT_OP_FILL, attrs_with(0), {}, {&scalar}, o), NNRT_OK);
  EXPECT_EQ(scalar.at(0), 7);
}

TEST(Random, UniformFollowsTheCounterBasedStream) {
  nnrt_op_attrs a = attrs_with(NNRT_RANDOM_UNIFORM);
  a.seed = 1234;
  RunOptions o;
  o.scalars[0] = -2;
  o.scalars[1] = 3;
  o.counter = 10;
  Tensor y = Tensor::zeros(NNRT_DTYPE_F32, {37, 11});
  ASSERT_EQ(run_op(NNRT_OP_RANDOM, a, {}, {&y}, o), NNRT_OK) << last_error();
  for (int64_t i = 0; i < y.numel(); ++i) {
    ASSERT_EQ(y.at(i), kernels::random_uniform(1234, 10 + static_cast<uint64_t>(i), -2.0f, 3.0f)) << i;
    ASSERT_GE(y.at(i), -2);
    ASSERT_LT(y.at(i), 3);
  }
  // A transposed output receives the stream in its own row-major (logical) order.
  Tensor t = Tensor::zeros(NNRT_DTYPE_F32, {11, 37}).transposed(0, 1);
  ASSERT_EQ(run_op(NNRT_OP_RANDOM, a, {}, {&t}, o), NNRT_OK);
  EXPECT_EQ(t.values(), y.values());
  // f64 and f16 outputs are the f32 values widened or rounded once.
  Tensor d = Tensor::zeros(NNRT_DTYPE_F64, {37, 11}), h = Tensor::zeros(NNRT_DTYPE_F16, {37, 11});
  ASSERT_EQ(run_op(NNRT_OP_RANDOM, a, {}, {&d}, o), NNRT_OK);
  ASSERT_EQ(run_op(NNRT_OP_RANDOM, a, {}, {&h}, o), NNRT_OK);
  EXPECT_EQ(d.values(), y.values());
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(h.at(i), kernels::f16_to_f32(kernels::f32_to_f16((float)y.at(i))));
}

TEST(Random, NormalStatisticsAndThreads) {
  nnrt_op_attrs a = attrs_with(NNRT_RANDOM_NORMAL);
  a.seed = 99;
  RunOptions o;
  o.scalars[0] = 1.5;
  o.scalars[1] = 2;
  Tensor y = Tensor::zeros(NNRT_DTYPE_F32, {200000});
  ASSERT_EQ(run_op(NNRT_OP_RANDOM, a, {}, {&y}, o), NNRT_OK);
  double sum = 0, sq = 0;
  for (double v : y.values()) {
    sum += v;
    sq += v * v;
  }
  const double mean = sum / y.numel(), var = sq / y.numel() - mean * mean;
  EXPECT_NEAR(mean, 1.5, 0.02);
  EXPECT_NEAR(var, 4.0, 0.05);
  EXPECT_EQ(y.at(5), kernels::random_normal(99, 5, 1.5f, 2.0f));
  Tensor z = Tensor::zeros(NNRT_DTYPE_F32, {200000});
  o.threads = 2;
  ASSERT_EQ(run_op(NNRT_OP_RANDOM, a, {}, {&z}, o), NNRT_OK);
  EXPECT_EQ(y.bytes(), z.bytes());
}

TEST(Random, RejectsIntegerOutputAndUnknownAlg) {
  Tensor y = Tensor::zeros(NNRT_DTYPE_I32, {3});
  EXPECT_EQ(run_op(NNRT_OP_RANDOM, attrs_with(NNRT_RANDOM_UNIFORM), {}, {&y}), NNRT_ERR_DTYPE);
  EXPECT_NE(last_error().find("i32"), std::string::npos) << last_error();
  Tensor f = Tensor::zeros(NNRT_DTYPE_F32, {3});
  EXPECT_EQ(run_op(NNRT_OP_RANDOM, attrs_with(7), {}, {&f}), NNRT_ERR_UNSUPPORTED);
}

}  // namespace
}  // namespace nnrt::reftest
