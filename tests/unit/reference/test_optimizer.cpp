// OPTIMIZER_UPDATE against a straightforward per-element implementation written here in double,
// over several steps, for every alg and the common steps (gradient scale, clipping, L1, L2,
// decoupled weight decay); state counts and hyperparameter checks.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"

namespace nnrt::reftest {
namespace {

struct Case {
  const char *name;
  nnrt_op_attrs attrs;
  int states;
};

nnrt_op_attrs make(int alg) { return attrs_with(alg); }

std::vector<Case> cases() {
  std::vector<Case> c;
  nnrt_op_attrs a = make(NNRT_OPTIMIZER_SGD);
  a.l2 = 0.01;
  a.l1 = 0.001;
  a.clip_value = 0.5;
  c.push_back({"sgd + l1 + l2 + clip", a, 0});
  a = make(NNRT_OPTIMIZER_SGD);
  a.momentum = 0.9;
  c.push_back({"sgd momentum", a, 1});
  a.flags = NNRT_FLAG_NESTEROV;
  a.weight_decay = 0.01;
  c.push_back({"sgd nesterov + weight decay", a, 1});
  a = make(NNRT_OPTIMIZER_ADAGRAD);
  a.eps = 1e-10;
  c.push_back({"adagrad", a, 1});
  a = make(NNRT_OPTIMIZER_ADAM);
  a.beta1 = 0.9;
  a.beta2 = 0.999;
  a.eps = 1e-8;
  a.l2 = 0.001;
  c.push_back({"adam + l2", a, 2});
  a.l2 = 0;
  a.alg = NNRT_OPTIMIZER_ADAMW;
  a.weight_decay = 0.01;
  c.push_back({"adamw", a, 2});
  a = make(NNRT_OPTIMIZER_RMSPROP);
  a.beta1 = 0.99;
  a.eps = 1e-8;
  c.push_back({"rmsprop", a, 1});
  a = make(NNRT_OPTIMIZER_ADAMAX);
  a.beta1 = 0.9;
  a.beta2 = 0.999;
  a.eps = 1e-8;
  a.clip_value = 0.3;
  c.push_back({"adamax + clip", a, 2});
  return c;
}

// One step for one element, exactly as nnrt_backend.h words it, in double.
void reference_step(const nnrt_op_attrs &a, double lr, double t, double scale, double grad, double &p, double &s0, double &s1) {
  double g = grad * scale;
  if (a.clip_value > 0) g = fmin(fmax(g, -a.clip_value), a.clip_value);
  g += a.l2 * p + a.l1 * (p > 0 ? 1 : (p < 0 ? -1 : 0));
  p -= lr * a.weight_decay * p;
  switch (a.alg) {
    case NNRT_OPTIMIZER_SGD:
      if (a.momentum > 0) {
        s0 = a.momentum * s0 + g;
        p -= lr * ((a.flags & NNRT_FLAG_NESTEROV) ? g + a.momentum * s0 : s0);
      } else {
        p -= lr * g;
      }
      break;
    case NNRT_OPTIMIZER_ADAGRAD:
      s0 += g * g;
      p -= lr * g / (sqrt(s0) + a.eps);
      break;
    case NNRT_OPTIMIZER_ADAM:
    case NNRT_OPTIMIZER_ADAMW:
      s0 = a.beta1 * s0 + (1 - a.beta1) * g;
      s1 = a.beta2 * s1 + (1 - a.beta2) * g * g;
      p -= lr * (s0 / (1 - pow(a.beta1, t))) / (sqrt(s1 / (1 - pow(a.beta2, t))) + a.eps);
      break;
    case NNRT_OPTIMIZER_RMSPROP:
      s0 = a.beta1 * s0 + (1 - a.beta1) * g * g;
      p -= lr * g / (sqrt(s0) + a.eps);
      break;
    case NNRT_OPTIMIZER_ADAMAX:
      s0 = a.beta1 * s0 + (1 - a.beta1) * g;
      s1 = fmax(a.beta2 * s1, fabs(g) + a.eps);
      p -= lr / (1 - pow(a.beta1, t)) * s0 / s1;
      break;
  }
}

TEST(Optimizer, EveryAlgMatchesThePerElementRuleOverSeveralSteps) {
  for (const Case &c : cases()) {
    const std::vector<int64_t> dims = {7, 9};
    Tensor param = Tensor::random(NNRT_DTYPE_F32, dims, 1, -2, 2);
    Tensor s0 = Tensor::zeros(NNRT_DTYPE_F32, dims), s1 = Tensor::zeros(NNRT_DTYPE_F32, dims);
    std::vector<double> p = param.values(), r0(p.size(), 0), r1(p.size(), 0);
    for (int step = 1; step <= 4; ++step) {
      Tensor grad = Tensor::random(NNRT_DTYPE_F32, dims, 10 + step);
      RunOptions o;
      o.scalars[0] = 0.05;  // learning rate
      o.scalars[1] = step;
      o.scalars[2] = 0.5;   // gradient factor
      nnrt_status s = c.states == 0   ? run_op(NNRT_OP_OPTIMIZER_UPDATE, c.attrs, {&grad}, {&param}, o)
                      : c.states == 1 ? run_op(NNRT_OP_OPTIMIZER_UPDATE, c.attrs, {&grad}, {&param, &s0}, o)
                                      : run_op(NNRT_OP_OPTIMIZER_UPDATE, c.attrs, {&grad}, {&param, &s0, &s1}, o);
      ASSERT_EQ(s, NNRT_OK) << c.name << ": " << last_error();
      for (size_t i = 0; i < p.size(); ++i) reference_step(c.attrs, 0.05, step, 0.5, grad.at(static_cast<int64_t>(i)), p[i], r0[i], r1[i]);
      // Errors are measured against O(1) (floor 1): momentum and RMSprop steps of size ~0.5 cancel,
      // so f32 rounding shows as an absolute, not a relative, error.
      EXPECT_LT(max_relative_error(param.values(), p, 1.0), 1e-6) << c.name << " step " << step;
      if (c.states > 0) {
        EXPECT_LT(max_relative_error(s0.values(), r0, 1.0), 1e-6) << c.name << " step " << step;
      }
      if (c.states > 1) {
        EXPECT_LT(max_relative_error(s1.values(), r1, 1.0), 1e-6) << c.name << " step " << step;
      }
    }
  }
}

TEST(Optimizer, HandComputedSgdStep) {
  Tensor p = Tensor::of(NNRT_DTYPE_F32, {2}, {1, -2}), g = Tensor::of(NNRT_DTYPE_F32, {2}, {0.5, 4});
  RunOptions o;
  o.scalars[0] = 0.25;
  o.scalars[1] = 1;
  o.scalars[2] = 2;
  nnrt_op_attrs a = attrs_with(NNRT_OPTIMIZER_SGD);
  a.clip_value = 1;  // g = (1, 8) clipped to (1, 1)
  ASSERT_EQ(run_op(NNRT_OP_OPTIMIZER_UPDATE, a, {&g}, {&p}, o), NNRT_OK) << last_error();
  EXPECT_EQ(p.values(), (std::vector<double>{0.75, -2.25}));
}

// Dense tensors take a vectorized loop, strided ones the general walk: both give the same bits, for
// every alg and any thread count.
TEST(Optimizer, StridedAndThreadsGiveIdenticalBits) {
  for (const Case &c : cases()) {
    Tensor grad = Tensor::random(NNRT_DTYPE_F32, {300, 257}, 3);
    Tensor p1 = Tensor::random(NNRT_DTYPE_F32, {300, 257}, 4), m1 = Tensor::random(NNRT_DTYPE_F32, {300, 257}, 5, 0, 1);
    Tensor v1 = Tensor::random(NNRT_DTYPE_F32, {300, 257}, 6, 0, 1);
    Tensor p2 = p1.relayout({1, 0}), m2 = m1.relayout({1, 0}, 2), v2 = v1.flipped(), g2 = grad.relayout({1, 0});
    RunOptions o;
    o.scalars[0] = 0.01;
    o.scalars[1] = 3;
    o.scalars[2] = 1;
    auto update = [&](const Tensor &g, Tensor &p, Tensor &m, Tensor &v) {
      return c.states == 0   ? run_op(NNRT_OP_OPTIMIZER_UPDATE, c.attrs, {&g}, {&p}, o)
             : c.states == 1 ? run_op(NNRT_OP_OPTIMIZER_UPDATE, c.attrs, {&g}, {&p, &m}, o)
                             : run_op(NNRT_OP_OPTIMIZER_UPDATE, c.attrs, {&g}, {&p, &m, &v}, o);
    };
    ASSERT_EQ(update(grad, p1, m1, v1), NNRT_OK) << c.name;
    o.threads = 2;
    ASSERT_EQ(update(g2, p2, m2, v2), NNRT_OK) << c.name;
    EXPECT_EQ(p1.values(), p2.values()) << c.name;
    EXPECT_EQ(m1.values(), m2.values()) << c.name;
    EXPECT_EQ(v1.values(), v2.values()) << c.name;
  }
}

TEST(Optimizer, RejectsWrongStatesAndHyperparameters) {
  Tensor g = Tensor::zeros(NNRT_DTYPE_F32, {3}), p = Tensor::zeros(NNRT_DTYPE_F32, {3}), s = Tensor::zeros(NNRT_DTYPE_F32, {3});
  nnrt_op_attrs sgd = attrs_with(NNRT_OPTIMIZER_SGD);
  EXPECT_EQ(run_op(NNRT_OP_OPTIMIZER_UPDATE, sgd, {&g}, {&p, &s}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("(param)"), std::string::npos) << last_error();
  sgd.flags = NNRT_FLAG_NESTEROV;
  EXPECT_EQ(run_op(NNRT_OP_OPTIMIZER_UPDATE, sgd, {&g}, {&p}), NNRT_ERR_INVALID_ARGUMENT);
  nnrt_op_attrs adam = cases()[4].attrs;
  EXPECT_EQ(run_op(NNRT_OP_OPTIMIZER_UPDATE, adam, {&g}, {&p, &s}), NNRT_ERR_INVALID_ARGUMENT);
  RunOptions step0;
  step0.scalars[0] = 0.1;
  Tensor s1 = Tensor::zeros(NNRT_DTYPE_F32, {3});
  EXPECT_EQ(run_op(NNRT_OP_OPTIMIZER_UPDATE, adam, {&g}, {&p, &s, &s1}, step0), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("t >= 1"), std::string::npos) << last_error();
  adam.beta2 = 1;
  EXPECT_EQ(run_op(NNRT_OP_OPTIMIZER_UPDATE, adam, {&g}, {&p, &s, &s1}), NNRT_ERR_INVALID_ARGUMENT);
  nnrt_op_attrs neg = attrs_with(NNRT_OPTIMIZER_SGD);
  neg.weight_decay = -1;
  EXPECT_EQ(run_op(NNRT_OP_OPTIMIZER_UPDATE, neg, {&g}, {&p}), NNRT_ERR_INVALID_ARGUMENT);
  Tensor p64 = Tensor::zeros(NNRT_DTYPE_F64, {3}), p4 = Tensor::zeros(NNRT_DTYPE_F32, {4});
  EXPECT_EQ(run_op(NNRT_OP_OPTIMIZER_UPDATE, attrs_with(NNRT_OPTIMIZER_SGD), {&g}, {&p64}), NNRT_ERR_DTYPE);
  EXPECT_EQ(run_op(NNRT_OP_OPTIMIZER_UPDATE, attrs_with(NNRT_OPTIMIZER_SGD), {&g}, {&p4}), NNRT_ERR_SHAPE);
  EXPECT_EQ(run_op(NNRT_OP_OPTIMIZER_UPDATE, attrs_with(7), {&g}, {&p}), NNRT_ERR_UNSUPPORTED);
}

}  // namespace
}  // namespace nnrt::reftest
