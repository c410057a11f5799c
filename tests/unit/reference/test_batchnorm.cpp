// BATCHNORM (training and inference) and BATCHNORM_BACKWARD: the formulas computed here in
// double, rank 2 and rank 4, finite-difference gradients in f64, and thread independence.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"

namespace nnrt::reftest {
namespace {

constexpr double kEps = 1e-3;

nnrt_op_attrs bn_attrs(bool training) {
  nnrt_op_attrs a = attrs_with(0);
  a.flags = training ? NNRT_FLAG_TRAINING : 0;
  a.eps = kEps;
  return a;
}

// Per-channel statistics of x [N, C, ...] in double.
void channel_stats(const Tensor &x, std::vector<double> &mean, std::vector<double> &var) {
  const int64_t c = x.dims[1], inner = x.numel() / (x.dims[0] * c);
  mean.assign(static_cast<size_t>(c), 0);
  var.assign(static_cast<size_t>(c), 0);
  const double count = static_cast<double>(x.dims[0] * inner);
  const std::vector<double> v = x.values();
  for (size_t i = 0; i < v.size(); ++i) mean[static_cast<size_t>(static_cast<int64_t>(i) / inner % c)] += v[i] / count;
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t ch = static_cast<size_t>(static_cast<int64_t>(i) / inner % c);
    var[ch] += (v[i] - mean[ch]) * (v[i] - mean[ch]) / count;
  }
}

struct Forward {
  Tensor y, mean, var;
};

Forward train(const Tensor &x, const Tensor &gamma, const Tensor &beta, int threads = 1) {
  Forward f{Tensor::zeros(x.dtype, x.dims), Tensor::zeros(NNRT_DTYPE_F32, {x.dims[1]}), Tensor::zeros(NNRT_DTYPE_F32, {x.dims[1]})};
  RunOptions o;
  o.threads = threads;
  if (run_op(NNRT_OP_BATCHNORM, bn_attrs(true), {&x, &gamma, &beta}, {&f.y, &f.mean, &f.var}, o) != NNRT_OK)
    ADD_FAILURE() << last_error();
  return f;
}

TEST(Batchnorm, TrainingMatchesFormula) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{6, 3}, std::vector<int64_t>{2, 3, 4, 5}})
    for (int32_t dtype : kFloatDtypes) {
      Tensor x = Tensor::random(dtype, dims, 1, -2, 3);
      Tensor gamma = Tensor::random(NNRT_DTYPE_F32, {3}, 2, 0.5, 1.5), beta = Tensor::random(NNRT_DTYPE_F32, {3}, 3);
      const Forward f = train(x, gamma, beta);
      std::vector<double> mean, var;
      channel_stats(x, mean, var);
      EXPECT_LT(max_relative_error(f.mean.values(), mean), 1e-6) << dtype_label(dtype);
      EXPECT_LT(max_relative_error(f.var.values(), var), 1e-6) << dtype_label(dtype);
      const int64_t inner = x.numel() / (dims[0] * 3);
      std::vector<double> want;
      for (int64_t i = 0; i < x.numel(); ++i) {
        const size_t c = static_cast<size_t>(i / inner % 3);
        want.push_back(gamma.at(static_cast<int64_t>(c)) * (x.at(i) - mean[c]) / sqrt(var[c] + kEps) + beta.at(static_cast<int64_t>(c)));
      }
      const double tol = dtype == NNRT_DTYPE_F64 ? 1e-7 : (dtype == NNRT_DTYPE_F32 ? 1e-5 : (dtype == NNRT_DTYPE_F16 ? 4e-3 : 3e-2));
      EXPECT_LT(max_relative_error(f.y.values(), want), tol) << dtype_label(dtype);
    }
}

TEST(Batchnorm, HandComputedInference) {
  Tensor x = Tensor::of(NNRT_DTYPE_F32, {2, 2}, {1, 10, 3, 20});
  Tensor gamma = Tensor::of(NNRT_DTYPE_F32, {2}, {2, 1}), beta = Tensor::of(NNRT_DTYPE_F32, {2}, {1, -1});
  Tensor mean = Tensor::of(NNRT_DTYPE_F32, {2}, {2, 15}), var = Tensor::of(NNRT_DTYPE_F32, {2}, {1, 25});
  Tensor y = Tensor::zeros(NNRT_DTYPE_F32, {2, 2});
  nnrt_op_attrs a = bn_attrs(false);
  a.eps = 0;
  ASSERT_EQ(run_op(NNRT_OP_BATCHNORM, a, {&x, &gamma, &beta, &mean, &var}, {&y}), NNRT_OK) << last_error();
  EXPECT_EQ(y.values(), (std::vector<double>{-1, -2, 3, 0}));
  // Training on the same x: channel 0 has mean 2, biased variance 1.
  Tensor ty = Tensor::zeros(NNRT_DTYPE_F32, {2, 2}), tm = Tensor::zeros(NNRT_DTYPE_F32, {2}), tv = Tensor::zeros(NNRT_DTYPE_F32, {2});
  a.flags = NNRT_FLAG_TRAINING;
  ASSERT_EQ(run_op(NNRT_OP_BATCHNORM, a, {&x, &gamma, &beta}, {&ty, &tm, &tv}), NNRT_OK);
  EXPECT_EQ(tm.values(), (std::vector<double>{2, 15}));
  EXPECT_EQ(tv.values(), (std::vector<double>{1, 25}));
}

TEST(BatchnormBackward, FiniteDifferencesInF64) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{5, 3}, std::vector<int64_t>{2, 3, 3, 2}}) {
    Tensor x = Tensor::random(NNRT_DTYPE_F64, dims, 4, -1, 2), dy = Tensor::random(NNRT_DTYPE_F64, dims, 5);
    Tensor gamma = Tensor::random(NNRT_DTYPE_F32, {3}, 6, 0.5, 1.5), beta = Tensor::random(NNRT_DTYPE_F32, {3}, 7);
    const Forward f = train(x, gamma, beta);
    Tensor dx = Tensor::zeros(NNRT_DTYPE_F64, dims), dgamma = Tensor::zeros(NNRT_DTYPE_F32, {3}), dbeta = Tensor::zeros(NNRT_DTYPE_F32, {3});
    ASSERT_EQ(run_op(NNRT_OP_BATCHNORM_BACKWARD, bn_attrs(true), {&x, &dy, &f.mean, &f.var, &gamma}, {&dx, &dgamma, &dbeta}), NNRT_OK)
        << last_error();
    auto with_x = [&](const std::vector<double> &v) { return train(Tensor::of(NNRT_DTYPE_F64, dims, v), gamma, beta).y.values(); };
    // mean and var reach the backward pass rounded to f32, so agreement is to about 1e-7.
    EXPECT_LT(max_relative_error(dx.values(), numeric_gradient(with_x, x.values(), dy.values(), 1e-5)), 1e-5);
    // y is linear in gamma and beta: differences with a step exact in f32 are exact up to rounding.
    auto with_gamma = [&](const std::vector<double> &v) { return train(x, Tensor::of(NNRT_DTYPE_F32, {3}, v), beta).y.values(); };
    auto with_beta = [&](const std::vector<double> &v) { return train(x, gamma, Tensor::of(NNRT_DTYPE_F32, {3}, v)).y.values(); };
    EXPECT_LT(max_relative_error(dgamma.values(), numeric_gradient(with_gamma, gamma.values(), dy.values(), 1.0 / 64)), 1e-5);
    EXPECT_LT(max_relative_error(dbeta.values(), numeric_gradient(with_beta, beta.values(), dy.values(), 1.0 / 64)), 1e-5);
  }
}

TEST(Batchnorm, ThreadsAndLayoutsGiveIdenticalBits) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{64, 2, 30, 30}, std::vector<int64_t>{16, 40, 9, 9}}) {
    const int64_t c = dims[1];
    Tensor x = Tensor::random(NNRT_DTYPE_F32, dims, 8), dy = Tensor::random(NNRT_DTYPE_F32, dims, 9);
    Tensor gamma = Tensor::random(NNRT_DTYPE_F32, {c}, 10), beta = Tensor::random(NNRT_DTYPE_F32, {c}, 11);
    const Forward one = train(x, gamma, beta, 1), two = train(x.relayout({0, 2, 3, 1}), gamma, beta, 2);
    EXPECT_EQ(one.y.values(), two.y.values());
    EXPECT_EQ(one.mean.values(), two.mean.values());
    EXPECT_EQ(one.var.values(), two.var.values());
    Tensor dx1 = Tensor::zeros(NNRT_DTYPE_F32, dims), dg1 = Tensor::zeros(NNRT_DTYPE_F32, {c}), db1 = Tensor::zeros(NNRT_DTYPE_F32, {c});
    Tensor dx2 = dx1.relayout({1, 0, 2, 3}), dg2 = dg1.relayout({0}), db2 = db1.relayout({0});
    RunOptions o;
    ASSERT_EQ(run_op(NNRT_OP_BATCHNORM_BACKWARD, bn_attrs(true), {&x, &dy, &one.mean, &one.var, &gamma}, {&dx1, &dg1, &db1}, o), NNRT_OK);
    o.threads = 2;
    Tensor dy_strided = dy.flipped();
    ASSERT_EQ(run_op(NNRT_OP_BATCHNORM_BACKWARD, bn_attrs(true), {&x, &dy_strided, &one.mean, &one.var, &gamma}, {&dx2, &dg2, &db2}, o), NNRT_OK);
    EXPECT_EQ(dx1.values(), dx2.values());
    EXPECT_EQ(dg1.values(), dg2.values());
    EXPECT_EQ(db1.values(), db2.values());
  }
}

TEST(Batchnorm, RejectsBadDescriptors) {
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, {4, 3}), y = Tensor::zeros(NNRT_DTYPE_F32, {4, 3});
  Tensor c3 = Tensor::zeros(NNRT_DTYPE_F32, {3}), c4 = Tensor::zeros(NNRT_DTYPE_F32, {4}), c3d = Tensor::zeros(NNRT_DTYPE_F64, {3});
  EXPECT_EQ(run_op(NNRT_OP_BATCHNORM, bn_attrs(true), {&x, &c4, &c3}, {&y, &c3, &c3}), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("gamma"), std::string::npos) << last_error();
  EXPECT_EQ(run_op(NNRT_OP_BATCHNORM, bn_attrs(true), {&x, &c3d, &c3}, {&y, &c3, &c3}), NNRT_ERR_DTYPE);
  EXPECT_EQ(run_op(NNRT_OP_BATCHNORM, bn_attrs(false), {&x, &c3, &c3}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
  nnrt_op_attrs negative = bn_attrs(true);
  negative.eps = -1;
  EXPECT_EQ(run_op(NNRT_OP_BATCHNORM, negative, {&x, &c3, &c3}, {&y, &c3, &c3}), NNRT_ERR_INVALID_ARGUMENT);
  Tensor v = Tensor::zeros(NNRT_DTYPE_F32, {3});
  EXPECT_EQ(run_op(NNRT_OP_BATCHNORM, bn_attrs(true), {&v, &c3, &c3}, {&v, &c3, &c3}), NNRT_ERR_SHAPE);
}

}  // namespace
}  // namespace nnrt::reftest
