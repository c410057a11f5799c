// LAYERNORM and LAYERNORM_BACKWARD (layer and RMS): the formulas computed here in double, for every
// float dtype and several normalized axes; finite-difference gradients in f64 with and without
// gamma; thread and layout independence; descriptor checks.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"

namespace nnrt::reftest {
namespace {

constexpr double kEps = 1e-3;

nnrt_op_attrs ln_attrs(int32_t alg, int axis) {
  nnrt_op_attrs a = attrs_with(alg);
  a.axis = axis;
  a.eps = kEps;
  return a;
}

std::vector<int64_t> head(const std::vector<int64_t> &d, int axis) { return {d.begin(), d.begin() + axis}; }
std::vector<int64_t> tail(const std::vector<int64_t> &d, int axis) { return {d.begin() + axis, d.end()}; }
int64_t product(const std::vector<int64_t> &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// y, mean and var computed in double from row-major values.
struct Expected {
  std::vector<double> y, mean, var;
};

Expected expected(int32_t alg, const std::vector<double> &x, int64_t rows, int64_t n, const std::vector<double> &gamma,
                  const std::vector<double> &beta) {
  Expected e;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    if (alg == NNRT_NORM_LAYER)
      for (int64_t i = 0; i < n; ++i) mean += x[static_cast<size_t>(r * n + i)] / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) {
      const double d = x[static_cast<size_t>(r * n + i)] - mean;
      var += d * d / static_cast<double>(n);
    }
    e.mean.push_back(mean);
    e.var.push_back(var);
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      e.y.push_back((x[static_cast<size_t>(r * n + i)] - mean) / sqrt(var + kEps) * (gamma.empty() ? 1 : gamma[k]) +
                    (beta.empty() ? 0 : beta[k]));
    }
  }
  return e;
}

struct Forward {
  Tensor y, mean, var;
};

Forward forward(int32_t alg, int axis, const Tensor &x, const Tensor *gamma, const Tensor *beta, int threads = 1) {
  Forward f{Tensor::zeros(x.dtype, x.dims), Tensor::zeros(NNRT_DTYPE_F32, head(x.dims, axis)),
            Tensor::zeros(NNRT_DTYPE_F32, head(x.dims, axis))};
  RunOptions o;
  o.threads = threads;
  nnrt_status s = !gamma ? run_op(NNRT_OP_LAYERNORM, ln_attrs(alg, axis), {&x}, {&f.y, &f.mean, &f.var}, o)
                  : !beta ? run_op(NNRT_OP_LAYERNORM, ln_attrs(alg, axis), {&x, gamma}, {&f.y, &f.mean, &f.var}, o)
                          : run_op(NNRT_OP_LAYERNORM, ln_attrs(alg, axis), {&x, gamma, beta}, {&f.y, &f.mean, &f.var}, o);
  if (s != NNRT_OK) ADD_FAILURE() << last_error();
  return f;
}

TEST(Layernorm, MatchesFormula) {
  const std::vector<int64_t> dims{3, 4, 5};
  for (int32_t alg : {NNRT_NORM_LAYER, NNRT_NORM_RMS})
    for (int axis : {0, 1, 2})
      for (int32_t dtype : kFloatDtypes) {
        Tensor x = Tensor::random(dtype, dims, 1, -2, 3);
        Tensor gamma = Tensor::random(NNRT_DTYPE_F32, tail(dims, axis), 2, 0.5, 1.5);
        Tensor beta = Tensor::random(NNRT_DTYPE_F32, tail(dims, axis), 3);
        const Forward f = forward(alg, axis, x, &gamma, &beta);
        const Expected e = expected(alg, x.values(), product(head(dims, axis)), product(tail(dims, axis)), gamma.values(),
                                    beta.values());
        const std::string what = std::string(alg == NNRT_NORM_RMS ? "rms" : "layer") + " axis " + std::to_string(axis) +
                                 " " + dtype_label(dtype);
        EXPECT_LT(max_relative_error(f.mean.values(), e.mean), 1e-6) << what;
        EXPECT_LT(max_relative_error(f.var.values(), e.var), 1e-6) << what;
        const double tol = dtype == NNRT_DTYPE_F64 ? 1e-7 : (dtype == NNRT_DTYPE_F32 ? 1e-5 : (dtype == NNRT_DTYPE_F16 ? 4e-3 : 3e-2));
        EXPECT_LT(max_relative_error(f.y.values(), e.y), tol) << what;
      }
}

TEST(Layernorm, AbsentGammaAndBetaAreOneAndZero) {
  Tensor x = Tensor::of(NNRT_DTYPE_F32, {2, 2}, {1, 3, -2, 2});
  Tensor y = Tensor::zeros(NNRT_DTYPE_F32, {2, 2});
  nnrt_op_attrs a = ln_attrs(NNRT_NORM_LAYER, 1);
  a.eps = 0;
  ASSERT_EQ(run_op(NNRT_OP_LAYERNORM, a, {&x}, {&y}), NNRT_OK) << last_error();
  EXPECT_EQ(y.values(), (std::vector<double>{-1, 1, -1, 1}));
  // RMS of (3, 4) is sqrt(12.5); with gamma (2, 1).
  Tensor r = Tensor::of(NNRT_DTYPE_F64, {1, 2}, {3, 4}), gamma = Tensor::of(NNRT_DTYPE_F32, {2}, {2, 1});
  Tensor ry = Tensor::zeros(NNRT_DTYPE_F64, {1, 2});
  a.alg = NNRT_NORM_RMS;
  ASSERT_EQ(run_op(NNRT_OP_LAYERNORM, a, {&r, &gamma}, {&ry}), NNRT_OK) << last_error();
  EXPECT_NEAR(ry.at(0), 6 / sqrt(12.5), 1e-12);
  EXPECT_NEAR(ry.at(1), 4 / sqrt(12.5), 1e-12);
}

TEST(LayernormBackward, FiniteDifferencesInF64) {
  for (int32_t alg : {NNRT_NORM_LAYER, NNRT_NORM_RMS})
    for (int axis : {1, 2})
      for (bool with_gamma : {true, false}) {
        const std::vector<int64_t> dims{2, 3, 4}, norm = tail(dims, axis);
        Tensor x = Tensor::random(NNRT_DTYPE_F64, dims, 4, -1, 2), dy = Tensor::random(NNRT_DTYPE_F64, dims, 5);
        Tensor gamma = Tensor::random(NNRT_DTYPE_F32, norm, 6, 0.5, 1.5), beta = Tensor::random(NNRT_DTYPE_F32, norm, 7);
        const Tensor *g = with_gamma ? &gamma : nullptr;
        const Forward f = forward(alg, axis, x, g, with_gamma ? &beta : nullptr);
        Tensor dx = Tensor::zeros(NNRT_DTYPE_F64, dims), dgamma = Tensor::zeros(NNRT_DTYPE_F32, norm),
               dbeta = Tensor::zeros(NNRT_DTYPE_F32, norm);
        const nnrt_op_attrs a = ln_attrs(alg, axis);
        nnrt_status s = with_gamma ? run_op(NNRT_OP_LAYERNORM_BACKWARD, a, {&x, &dy, &f.mean, &f.var, &gamma}, {&dx, &dgamma, &dbeta})
                                   : run_op(NNRT_OP_LAYERNORM_BACKWARD, a, {&x, &dy, &f.mean, &f.var}, {&dx, &dgamma, &dbeta});
        ASSERT_EQ(s, NNRT_OK) << last_error();
        const std::string what = std::string(alg == NNRT_NORM_RMS ? "rms" : "layer") + " axis " + std::to_string(axis) +
                                 (with_gamma ? " gamma" : " no gamma");
        auto with_x = [&](const std::vector<double> &v) {
          return forward(alg, axis, Tensor::of(NNRT_DTYPE_F64, dims, v), g, with_gamma ? &beta : nullptr).y.values();
        };
        // mean and var reach the backward pass rounded to f32, so agreement is to about 1e-7.
        EXPECT_LT(max_relative_error(dx.values(), numeric_gradient(with_x, x.values(), dy.values(), 1e-5)), 1e-5) << what;
        if (!with_gamma) continue;
        auto with_gamma_values = [&](const std::vector<double> &v) {
          Tensor t = Tensor::of(NNRT_DTYPE_F32, norm, v);
          return forward(alg, axis, x, &t, &beta).y.values();
        };
        auto with_beta_values = [&](const std::vector<double> &v) {
          Tensor t = Tensor::of(NNRT_DTYPE_F32, norm, v);
          return forward(alg, axis, x, &gamma, &t).y.values();
        };
        EXPECT_LT(max_relative_error(dgamma.values(), numeric_gradient(with_gamma_values, gamma.values(), dy.values(), 1.0 / 64)), 1e-5)
            << what;
        EXPECT_LT(max_relative_error(dbeta.values(), numeric_gradient(with_beta_values, beta.values(), dy.values(), 1.0 / 64)), 1e-5)
            << what;
      }
}

TEST(Layernorm, ThreadsAndLayoutsGiveIdenticalBits) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{64, 3, 200}, std::vector<int64_t>{2, 3, 5000}}) {
    Tensor x = Tensor::random(NNRT_DTYPE_F32, dims, 8), dy = Tensor::random(NNRT_DTYPE_F32, dims, 9);
    Tensor gamma = Tensor::random(NNRT_DTYPE_F32, {dims[2]}, 10), beta = Tensor::random(NNRT_DTYPE_F32, {dims[2]}, 11);
    const Forward one = forward(NNRT_NORM_LAYER, 2, x, &gamma, &beta, 1);
    const Forward two = forward(NNRT_NORM_LAYER, 2, x.relayout({1, 0, 2}, 2), &gamma, &beta, 2);
    EXPECT_EQ(one.y.values(), two.y.values());
    EXPECT_EQ(one.mean.values(), two.mean.values());
    EXPECT_EQ(one.var.values(), two.var.values());
    const std::vector<int64_t> n{dims[2]};
    Tensor dx1 = Tensor::zeros(NNRT_DTYPE_F32, dims), dg1 = Tensor::zeros(NNRT_DTYPE_F32, n), db1 = Tensor::zeros(NNRT_DTYPE_F32, n);
    Tensor dx2 = dx1.relayout({1, 0, 2}), dg2 = dg1.relayout({0}, 3), db2 = db1.relayout({0});
    const nnrt_op_attrs a = ln_attrs(NNRT_NORM_LAYER, 2);
    RunOptions o;
    ASSERT_EQ(run_op(NNRT_OP_LAYERNORM_BACKWARD, a, {&x, &dy, &one.mean, &one.var, &gamma}, {&dx1, &dg1, &db1}, o), NNRT_OK);
    o.threads = 2;
    Tensor dy_strided = dy.flipped();
    ASSERT_EQ(run_op(NNRT_OP_LAYERNORM_BACKWARD, a, {&x, &dy_strided, &one.mean, &one.var, &gamma}, {&dx2, &dg2, &db2}, o), NNRT_OK);
    EXPECT_EQ(dx1.values(), dx2.values());
    EXPECT_EQ(dg1.values(), dg2.values());
    EXPECT_EQ(db1.values(), db2.values());
  }
}

TEST(Layernorm, RefusesBadDescriptors) {
  Tensor x = Tensor::random(NNRT_DTYPE_F32, {2, 3}, 1), y = Tensor::zeros(NNRT_DTYPE_F32, {2, 3});
  Tensor g3 = Tensor::zeros(NNRT_DTYPE_F32, {3}), g2 = Tensor::zeros(NNRT_DTYPE_F32, {2}), g3h = Tensor::zeros(NNRT_DTYPE_F16, {3});
  Tensor m2 = Tensor::zeros(NNRT_DTYPE_F32, {2}), m3 = Tensor::zeros(NNRT_DTYPE_F32, {3});
  Tensor i = Tensor::zeros(NNRT_DTYPE_I32, {2, 3});
  EXPECT_EQ(run_op(NNRT_OP_LAYERNORM, ln_attrs(NNRT_NORM_LAYER, 1), {&x, &g2}, {&y}), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("gamma"), std::string::npos) << last_error();
  EXPECT_EQ(run_op(NNRT_OP_LAYERNORM, ln_attrs(NNRT_NORM_LAYER, 1), {&x, &g3h}, {&y}), NNRT_ERR_DTYPE);
  EXPECT_EQ(run_op(NNRT_OP_LAYERNORM, ln_attrs(NNRT_NORM_LAYER, 1), {&x}, {&y, &m3, &m3}), NNRT_ERR_SHAPE);
  EXPECT_EQ(run_op(NNRT_OP_LAYERNORM, ln_attrs(NNRT_NORM_LAYER, 1), {&x}, {&y, &m2}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(run_op(NNRT_OP_LAYERNORM, ln_attrs(NNRT_NORM_LAYER, 2), {&x}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("axis 2"), std::string::npos) << last_error();
  EXPECT_EQ(run_op(NNRT_OP_LAYERNORM, ln_attrs(3, 1), {&x}, {&y}), NNRT_ERR_UNSUPPORTED);
  EXPECT_EQ(run_op(NNRT_OP_LAYERNORM, ln_attrs(NNRT_NORM_LAYER, 1), {&i}, {&i}), NNRT_ERR_DTYPE);
  nnrt_op_attrs negative = ln_attrs(NNRT_NORM_LAYER, 1);
  negative.eps = -1;
  EXPECT_EQ(run_op(NNRT_OP_LAYERNORM, negative, {&x}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
  Tensor dx = Tensor::zeros(NNRT_DTYPE_F32, {2, 3});
  EXPECT_EQ(run_op(NNRT_OP_LAYERNORM_BACKWARD, ln_attrs(NNRT_NORM_LAYER, 1), {&x, &x, &m3, &m2}, {&dx}), NNRT_ERR_SHAPE);
  EXPECT_EQ(run_op(NNRT_OP_LAYERNORM_BACKWARD, ln_attrs(NNRT_NORM_LAYER, 1), {&x, &x, &m2}, {&dx}), NNRT_ERR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace nnrt::reftest
