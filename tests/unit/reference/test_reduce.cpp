// REDUCE and ARGREDUCE: hand-computed values, every alg and dtype path, NaN, empty reductions,
// accuracy of long sums, and bit-identical results whatever the layout or thread count.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"

namespace nnrt::reftest {
namespace {

nnrt_op_attrs reduce_attrs(int alg, uint32_t mask) {
  nnrt_op_attrs a = attrs_with(alg);
  a.axes_mask = mask;
  return a;
}

std::vector<double> reduce(const Tensor &x, int alg, uint32_t mask, std::vector<int64_t> out_dims, int threads = 1) {
  Tensor y = Tensor::zeros(x.dtype, std::move(out_dims));
  RunOptions o;
  o.threads = threads;
  if (run_op(NNRT_OP_REDUCE, reduce_attrs(alg, mask), {&x}, {&y}, o) != NNRT_OK) ADD_FAILURE() << last_error();
  return y.values();
}

TEST(Reduce, HandComputed) {
  for (int32_t dtype : {NNRT_DTYPE_F32, NNRT_DTYPE_F64, NNRT_DTYPE_F16, NNRT_DTYPE_BF16}) {
    Tensor x = Tensor::of(dtype, {2, 3}, {1, 2, 3, 4, 5, 6});
    EXPECT_EQ(reduce(x, NNRT_REDUCE_SUM, 2, {2, 1}), (std::vector<double>{6, 15})) << dtype_label(dtype);
    EXPECT_EQ(reduce(x, NNRT_REDUCE_SUM, 1, {1, 3}), (std::vector<double>{5, 7, 9}));
    EXPECT_EQ(reduce(x, NNRT_REDUCE_SUM, 3, {1, 1}), (std::vector<double>{21}));
    EXPECT_EQ(reduce(x, NNRT_REDUCE_MEAN, 3, {1, 1}), (std::vector<double>{3.5}));
    EXPECT_EQ(reduce(x, NNRT_REDUCE_MEAN, 1, {1, 3}), (std::vector<double>{2.5, 3.5, 4.5}));
    EXPECT_EQ(reduce(x, NNRT_REDUCE_MAX, 2, {2, 1}), (std::vector<double>{3, 6}));
    EXPECT_EQ(reduce(x, NNRT_REDUCE_MIN, 1, {1, 3}), (std::vector<double>{1, 2, 3}));
    EXPECT_EQ(reduce(x, NNRT_REDUCE_SUM_SQUARES, 3, {1, 1}), (std::vector<double>{91}));
    EXPECT_EQ(reduce(x, NNRT_REDUCE_SUM, 0, {2, 3}), x.values());  // nothing reduced
  }
}

TEST(Reduce, IntegerSumsWrapAndExtremes) {
  Tensor i = Tensor::of(NNRT_DTYPE_I32, {3}, {2147483647, 1, 5});
  EXPECT_EQ(reduce(i, NNRT_REDUCE_SUM, 1, {1}), (std::vector<double>{-2147483643.0}));
  EXPECT_EQ(reduce(i, NNRT_REDUCE_MAX, 1, {1}), (std::vector<double>{2147483647}));
  Tensor u = Tensor::of(NNRT_DTYPE_U8, {3}, {200, 100, 7});
  EXPECT_EQ(reduce(u, NNRT_REDUCE_SUM, 1, {1}), (std::vector<double>{51}));  // 307 mod 256
  EXPECT_EQ(reduce(u, NNRT_REDUCE_MIN, 1, {1}), (std::vector<double>{7}));
  Tensor l = Tensor::of(NNRT_DTYPE_I64, {2, 2}, {-5, 3, 1e12, -1e12});
  EXPECT_EQ(reduce(l, NNRT_REDUCE_SUM, 2, {2, 1}), (std::vector<double>{-2, 0}));
  Tensor big = Tensor::zeros(NNRT_DTYPE_I64, {100000});
  for (int64_t k = 0; k < big.numel(); ++k) big.set(k, k % 7 - 3);
  big.set(77777, -1000);
  EXPECT_EQ(reduce(big, NNRT_REDUCE_MIN, 1, {1}, 2), (std::vector<double>{-1000}));
}

TEST(Reduce, NaNPropagatesAndEmptyReductions) {
  Tensor x = Tensor::of(NNRT_DTYPE_F32, {4}, {1, NAN, 3, 2});
  EXPECT_TRUE(isnan(reduce(x, NNRT_REDUCE_MAX, 1, {1})[0]));
  EXPECT_TRUE(isnan(reduce(x, NNRT_REDUCE_MIN, 1, {1})[0]));
  EXPECT_TRUE(isnan(reduce(x, NNRT_REDUCE_SUM, 1, {1})[0]));
  Tensor empty = Tensor::zeros(NNRT_DTYPE_F32, {0, 3});
  EXPECT_EQ(reduce(empty, NNRT_REDUCE_SUM, 1, {1, 3}), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(reduce(empty, NNRT_REDUCE_SUM_SQUARES, 3, {1, 1}), (std::vector<double>{0}));
  EXPECT_TRUE(isnan(reduce(empty, NNRT_REDUCE_MEAN, 1, {1, 3})[0]));
  Tensor y = Tensor::zeros(NNRT_DTYPE_F32, {1, 3});
  EXPECT_EQ(run_op(NNRT_OP_REDUCE, reduce_attrs(NNRT_REDUCE_MAX, 1), {&empty}, {&y}), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("identity"), std::string::npos) << last_error();
  Tensor no_rows = Tensor::zeros(NNRT_DTYPE_F32, {0, 1});  // nothing to compute: fine
  EXPECT_EQ(run_op(NNRT_OP_REDUCE, reduce_attrs(NNRT_REDUCE_MAX, 2), {&empty}, {&no_rows}), NNRT_OK);
  Tensor s = Tensor::of(NNRT_DTYPE_F64, {}, {4});
  EXPECT_EQ(reduce(s, NNRT_REDUCE_SUM_SQUARES, 0, {}), (std::vector<double>{16}));
}

TEST(Reduce, LongSumsStayAccurate) {
  // A million copies of 0.1f: a sequential f32 sum drifts by ~1%; the cascade stays within 1e-6.
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, {1000000});
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, 0.1);
  const double exact = 1000000.0 * static_cast<double>(0.1f);
  for (int threads : {1, 2}) {
    EXPECT_NEAR(reduce(x, NNRT_REDUCE_SUM, 1, {1}, threads)[0], exact, exact * 1e-6);
    EXPECT_NEAR(reduce(x, NNRT_REDUCE_MEAN, 1, {1}, threads)[0], 0.1, 1e-7);
  }
  Tensor r = Tensor::random(NNRT_DTYPE_F32, {1000, 1000}, 8, 0, 1);
  double sum = 0;
  for (double v : r.values()) sum += v;
  EXPECT_NEAR(reduce(r, NNRT_REDUCE_SUM, 3, {1, 1})[0], sum, sum * 1e-6);
  EXPECT_NEAR(reduce(r.transposed(0, 1), NNRT_REDUCE_SUM, 3, {1, 1})[0], sum, sum * 1e-6);
}

TEST(Reduce, LayoutAndThreadsGiveIdenticalBits) {
  Tensor x = Tensor::random(NNRT_DTYPE_F32, {37, 300, 41}, 12, -5, 5);
  const std::vector<Tensor> layouts = {x.relayout({2, 0, 1}), x.relayout({1, 2, 0}, 3), x.flipped()};
  for (uint32_t mask : {1u, 2u, 4u, 3u, 5u, 6u, 7u}) {
    std::vector<int64_t> out = {mask & 1 ? 1 : 37, mask & 2 ? 1 : 300, mask & 4 ? 1 : 41};
    for (int alg : {NNRT_REDUCE_SUM, NNRT_REDUCE_MEAN, NNRT_REDUCE_SUM_SQUARES, NNRT_REDUCE_MAX}) {
      const std::vector<double> base = reduce(x, alg, mask, out);
      EXPECT_EQ(reduce(x, alg, mask, out, 2), base) << "mask " << mask << " alg " << alg;
      for (const Tensor &l : layouts) EXPECT_EQ(reduce(l, alg, mask, out, 2), base) << "mask " << mask;
    }
  }
  // Outputs side by side in memory are summed a cache line (16 f32, 8 f64) at a time, the rest one
  // by one; over more than one block of terms they must still give each output's own cascade.
  for (int32_t dtype : {NNRT_DTYPE_F32, NNRT_DTYPE_F64}) {
    Tensor tall = Tensor::random(dtype, {700, 37}, 15, -3, 3);
    for (int alg : {NNRT_REDUCE_SUM, NNRT_REDUCE_MEAN, NNRT_REDUCE_SUM_SQUARES})
      EXPECT_EQ(reduce(tall, alg, 1, {1, 37}, 2), reduce(tall.relayout({1, 0}), alg, 1, {1, 37}))
          << dtype_label(dtype) << " alg " << alg;
  }
  Tensor long_line = Tensor::random(NNRT_DTYPE_F64, {3, 400000}, 13);
  EXPECT_EQ(reduce(long_line, NNRT_REDUCE_SUM, 2, {3, 1}, 2), reduce(long_line, NNRT_REDUCE_SUM, 2, {3, 1}, 1));
  Tensor row = Tensor::random(NNRT_DTYPE_F32, {1, 7}, 14);
  std::vector<double> broadcast = reduce(row.broadcast_to({5, 7}), NNRT_REDUCE_SUM, 1, {1, 7});
  for (int64_t j = 0; j < 7; ++j) EXPECT_FLOAT_EQ(broadcast[j], 5 * row.at(j));
}

TEST(Reduce, RejectsBadDescriptors) {
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, {2, 3}), y = Tensor::zeros(NNRT_DTYPE_F32, {2, 1});
  EXPECT_EQ(run_op(NNRT_OP_REDUCE, reduce_attrs(NNRT_REDUCE_SUM, 4), {&x}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(run_op(NNRT_OP_REDUCE, reduce_attrs(NNRT_REDUCE_SUM, 1), {&x}, {&y}), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("[1, 3]"), std::string::npos) << last_error();
  Tensor xi = Tensor::zeros(NNRT_DTYPE_I32, {2, 3}), yi = Tensor::zeros(NNRT_DTYPE_I32, {2, 1});
  EXPECT_EQ(run_op(NNRT_OP_REDUCE, reduce_attrs(NNRT_REDUCE_MEAN, 2), {&xi}, {&yi}), NNRT_ERR_DTYPE);
  EXPECT_EQ(run_op(NNRT_OP_REDUCE, reduce_attrs(9, 2), {&x}, {&y}), NNRT_ERR_UNSUPPORTED);
}

// ---- ARGREDUCE --------------------------------------------------------------------------------

std::vector<double> argreduce(const Tensor &x, int alg, int axis, std::vector<int64_t> out_dims, int threads = 1) {
  nnrt_op_attrs a = attrs_with(alg);
  a.axis = axis;
  Tensor y = Tensor::zeros(NNRT_DTYPE_I64, std::move(out_dims));
  RunOptions o;
  o.threads = threads;
  if (run_op(NNRT_OP_ARGREDUCE, a, {&x}, {&y}, o) != NNRT_OK) ADD_FAILURE() << last_error();
  return y.values();
}

TEST(ArgReduce, FirstIndexWinsAndNaNIsLargest) {
  for (int32_t dtype : {NNRT_DTYPE_F32, NNRT_DTYPE_F64, NNRT_DTYPE_F16, NNRT_DTYPE_BF16}) {
    Tensor x = Tensor::of(dtype, {3, 4}, {1, 5, 5, 2, 3, NAN, 9, NAN, NAN, NAN, NAN, NAN});
    EXPECT_EQ(argreduce(x, NNRT_ARG_MAX, 1, {3, 1}), (std::vector<double>{1, 1, 0})) << dtype_label(dtype);
    EXPECT_EQ(argreduce(x, NNRT_ARG_MIN, 1, {3, 1}), (std::vector<double>{0, 0, 0}));
    EXPECT_EQ(argreduce(x, NNRT_ARG_MAX, 0, {1, 4}), (std::vector<double>{2, 1, 2, 1}));
    EXPECT_EQ(argreduce(x, NNRT_ARG_MIN, 0, {1, 4}), (std::vector<double>{0, 0, 0, 0}));
  }
  Tensor y = Tensor::of(NNRT_DTYPE_F32, {4}, {NAN, 2, -1, -1});
  EXPECT_EQ(argreduce(y, NNRT_ARG_MIN, 0, {1}), (std::vector<double>{2}));  // NaN skipped by argmin
}

TEST(ArgReduce, IntegersStridesAndThreads) {
  Tensor i = Tensor::of(NNRT_DTYPE_I32, {2, 3}, {-4, 9, 9, 7, -8, 7});
  EXPECT_EQ(argreduce(i, NNRT_ARG_MAX, 1, {2, 1}), (std::vector<double>{1, 0}));
  EXPECT_EQ(argreduce(i, NNRT_ARG_MIN, 1, {2, 1}), (std::vector<double>{0, 1}));
  Tensor u = Tensor::of(NNRT_DTYPE_U8, {3}, {4, 200, 199});
  EXPECT_EQ(argreduce(u, NNRT_ARG_MAX, 0, {1}), (std::vector<double>{1}));
  Tensor l = Tensor::of(NNRT_DTYPE_I64, {2}, {-1e12, 1e12});
  EXPECT_EQ(argreduce(l, NNRT_ARG_MIN, 0, {1}), (std::vector<double>{0}));
  Tensor x = Tensor::random(NNRT_DTYPE_F32, {64, 500}, 3);
  const std::vector<double> base = argreduce(x, NNRT_ARG_MAX, 1, {64, 1});
  EXPECT_EQ(argreduce(x.relayout({1, 0}, 2), NNRT_ARG_MAX, 1, {64, 1}, 2), base);
  for (int64_t r = 0; r < 64; ++r) {
    int64_t best = 0;
    for (int64_t c = 1; c < 500; ++c)
      if (x.at(r * 500 + c) > x.at(r * 500 + best)) best = c;
    ASSERT_EQ(base[r], best);
  }
}

TEST(ArgReduce, RejectsBadDescriptors) {
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, {2, 0}), y = Tensor::zeros(NNRT_DTYPE_I64, {2, 1});
  nnrt_op_attrs a = attrs_with(NNRT_ARG_MAX);
  a.axis = 1;
  EXPECT_EQ(run_op(NNRT_OP_ARGREDUCE, a, {&x}, {&y}), NNRT_ERR_SHAPE);
  Tensor x2 = Tensor::zeros(NNRT_DTYPE_F32, {2, 3}), y32 = Tensor::zeros(NNRT_DTYPE_I32, {2, 1});
  EXPECT_EQ(run_op(NNRT_OP_ARGREDUCE, a, {&x2}, {&y32}), NNRT_ERR_DTYPE);
  a.axis = 2;
  EXPECT_EQ(run_op(NNRT_OP_ARGREDUCE, a, {&x2}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
  Tensor b = Tensor::zeros(NNRT_DTYPE_BOOL, {2, 3});
  a.axis = 1;
  EXPECT_EQ(run_op(NNRT_OP_ARGREDUCE, a, {&b}, {&y}), NNRT_ERR_DTYPE);
}

}  // namespace
}  // namespace nnrt::reftest
