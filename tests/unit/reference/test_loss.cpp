// LOSS and LOSS_BACKWARD: every alg on hand-computed examples, index and distribution targets,
// PyTorch's clamps, finite-difference gradients in f64, data errors and thread independence.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"

namespace nnrt::reftest {
namespace {

double loss(int alg, const Tensor &pred, const Tensor &target, int threads = 1) {
  Tensor out = Tensor::zeros(pred.dtype, {});
  RunOptions o;
  o.threads = threads;
  if (run_op(NNRT_OP_LOSS, attrs_with(alg), {&pred, &target}, {&out}, o) != NNRT_OK) ADD_FAILURE() << last_error();
  return out.at(0);
}

Tensor loss_grad(int alg, const Tensor &pred, const Tensor &target, double scale = 1, int threads = 1) {
  Tensor d = Tensor::zeros(pred.dtype, pred.dims);
  RunOptions o;
  o.scalars[0] = scale;
  o.threads = threads;
  if (run_op(NNRT_OP_LOSS_BACKWARD, attrs_with(alg), {&pred, &target}, {&d}, o) != NNRT_OK) ADD_FAILURE() << last_error();
  return d;
}

TEST(Loss, ElementwiseHandComputed) {
  Tensor p = Tensor::of(NNRT_DTYPE_F64, {2, 2}, {0.5, 0.25, 0.75, 1});
  Tensor t = Tensor::of(NNRT_DTYPE_F64, {2, 2}, {1, 0, 1, 0});
  EXPECT_DOUBLE_EQ(loss(NNRT_LOSS_MSE, p, t), (0.25 + 0.0625 + 0.0625 + 1) / 4);
  EXPECT_DOUBLE_EQ(loss(NNRT_LOSS_L1, p, t), (0.5 + 0.25 + 0.25 + 1) / 4);
  // BCE: the last term is -log(1 - 1) = inf, clamped to 100.
  EXPECT_NEAR(loss(NNRT_LOSS_BCE, p, t), (-log(0.5) - log(0.75) - log(0.75) + 100) / 4, 1e-14);
  Tensor zero = Tensor::of(NNRT_DTYPE_F64, {2}, {0, 0.5}), one = Tensor::of(NNRT_DTYPE_F64, {2}, {1, 1});
  EXPECT_NEAR(loss(NNRT_LOSS_BCE, zero, one), (100 - log(0.5)) / 2, 1e-14);  // -log(0) clamped too
  const double bcel = (log1p(exp(-0.5)) + (0.25 + log1p(exp(-0.25))) + log1p(exp(-0.75)) + (1 + log1p(exp(-1)))) / 4;
  EXPECT_NEAR(loss(NNRT_LOSS_BCE_WITH_LOGITS, p, t), bcel, 1e-15);
  Tensor big = Tensor::of(NNRT_DTYPE_F32, {2}, {-200, 200}), tb = Tensor::of(NNRT_DTYPE_F32, {2}, {0, 0});
  EXPECT_NEAR(loss(NNRT_LOSS_BCE_WITH_LOGITS, big, tb), 100, 1e-4);  // no overflow
  Tensor e = Tensor::zeros(NNRT_DTYPE_F32, {0});
  EXPECT_TRUE(isnan(loss(NNRT_LOSS_MSE, e, e)));
}

TEST(Loss, ClassLossesWithIndicesAndDistributions) {
  // Logits [[0, ln 3], [ln 2, 0, ln 5]]-style rows chosen so that softmax is simple.
  Tensor logits = Tensor::of(NNRT_DTYPE_F64, {2, 3}, {0, log(3.0), 0, log(2.0), 0, log(5.0)});
  for (int32_t index_dtype : {NNRT_DTYPE_I32, NNRT_DTYPE_I64}) {
    Tensor labels = Tensor::of(index_dtype, {2}, {1, 2});
    // softmax rows: [0.2, 0.6, 0.2] and [0.25, 0.125, 0.625].
    EXPECT_NEAR(loss(NNRT_LOSS_SOFTMAX_CROSS_ENTROPY, logits, labels), -(log(0.6) + log(0.625)) / 2, 1e-15);
    EXPECT_NEAR(loss(NNRT_LOSS_NLL, logits, labels), -(log(3.0) + log(5.0)) / 2, 1e-15);
    const Tensor g = loss_grad(NNRT_LOSS_SOFTMAX_CROSS_ENTROPY, logits, labels);
    const std::vector<double> want = {0.1, -0.2, 0.1, 0.125, 0.0625, -0.1875};
    EXPECT_LT(max_relative_error(g.values(), want), 1e-15);
    EXPECT_EQ(loss_grad(NNRT_LOSS_NLL, logits, labels, 4).values(), (std::vector<double>{0, -2, 0, 0, 0, -2}));
  }
  Tensor dist = Tensor::of(NNRT_DTYPE_F64, {2, 3}, {0, 1, 0, 0, 0, 1});  // the same labels as distributions
  Tensor labels = Tensor::of(NNRT_DTYPE_I64, {2}, {1, 2});
  EXPECT_NEAR(loss(NNRT_LOSS_SOFTMAX_CROSS_ENTROPY, logits, dist), loss(NNRT_LOSS_SOFTMAX_CROSS_ENTROPY, logits, labels), 1e-15);
  EXPECT_LT(max_relative_error(loss_grad(NNRT_LOSS_SOFTMAX_CROSS_ENTROPY, logits, dist).values(),
                               loss_grad(NNRT_LOSS_SOFTMAX_CROSS_ENTROPY, logits, labels).values()),
            1e-15);
}

TEST(Loss, OutOfRangeClassIsAnError) {
  Tensor logits = Tensor::zeros(NNRT_DTYPE_F32, {3, 4});
  Tensor labels = Tensor::of(NNRT_DTYPE_I32, {3}, {0, 4, 1});
  Tensor out = Tensor::zeros(NNRT_DTYPE_F32, {});
  EXPECT_EQ(run_op(NNRT_OP_LOSS, attrs_with(NNRT_LOSS_NLL), {&logits, &labels}, {&out}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("target[1] = 4"), std::string::npos) << last_error();
  Tensor negative = Tensor::of(NNRT_DTYPE_I64, {3}, {0, 1, -100});
  Tensor d = Tensor::zeros(NNRT_DTYPE_F32, {3, 4});
  EXPECT_EQ(run_op(NNRT_OP_LOSS_BACKWARD, attrs_with(NNRT_LOSS_SOFTMAX_CROSS_ENTROPY), {&logits, &negative}, {&d}),
            NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("-100"), std::string::npos) << last_error();
}

TEST(LossBackward, FiniteDifferencesInF64ForEveryAlg) {
  for (int alg = NNRT_LOSS_SOFTMAX_CROSS_ENTROPY; alg <= NNRT_LOSS_BCE_WITH_LOGITS; ++alg)
    for (bool indices : {false, true}) {
      const bool class_loss = alg <= NNRT_LOSS_NLL;
      if (indices && !class_loss) continue;
      const bool probabilities = alg == NNRT_LOSS_BCE;
      Tensor pred = Tensor::random(NNRT_DTYPE_F64, {4, 5}, 20 + alg, probabilities ? 0.1 : -2, probabilities ? 0.9 : 2);
      Tensor target = indices ? Tensor::of(NNRT_DTYPE_I32, {4}, {0, 4, 2, 2}) : Tensor::random(NNRT_DTYPE_F64, {4, 5}, 30 + alg, 0, 1);
      const double scale = 0.75;
      const Tensor g = loss_grad(alg, pred, target, scale);
      auto f = [&](const std::vector<double> &v) {
        return std::vector<double>{loss(alg, Tensor::of(NNRT_DTYPE_F64, {4, 5}, v), target)};
      };
      std::vector<double> numeric = numeric_gradient(f, pred.values(), {scale});
      EXPECT_LT(max_relative_error(g.values(), numeric, 0.01), 1e-7) << "alg " << alg << (indices ? " indices" : "");
    }
}

TEST(Loss, HalvesThreadsAndStrides) {
  Tensor pred = Tensor::random(NNRT_DTYPE_F32, {300, 100}, 3, -3, 3), target = Tensor::random(NNRT_DTYPE_F32, {300, 100}, 4, 0, 1);
  for (int alg = NNRT_LOSS_SOFTMAX_CROSS_ENTROPY; alg <= NNRT_LOSS_BCE_WITH_LOGITS; ++alg) {
    if (alg == NNRT_LOSS_BCE) continue;
    const double one = loss(alg, pred, target);
    Tensor pt = pred.relayout({1, 0}, 2), tt = target.flipped();
    EXPECT_EQ(loss(alg, pt, tt, 2), one) << alg;
    EXPECT_EQ(loss_grad(alg, pt, tt, 1, 2).values(), loss_grad(alg, pred, target).values()) << alg;
    Tensor ph = pred.cast(NNRT_DTYPE_BF16), th = target.cast(NNRT_DTYPE_BF16);
    Tensor p64 = ph.cast(NNRT_DTYPE_F64), t64 = th.cast(NNRT_DTYPE_F64);
    EXPECT_NEAR(loss(alg, ph, th), loss(alg, p64, t64), 2e-2 * fabs(loss(alg, p64, t64)) + 1e-3) << alg;
  }
}

TEST(Loss, RejectsBadDescriptors) {
  Tensor p = Tensor::zeros(NNRT_DTYPE_F32, {3, 4}), t = Tensor::zeros(NNRT_DTYPE_F32, {3, 5});
  Tensor out = Tensor::zeros(NNRT_DTYPE_F32, {}), out1 = Tensor::zeros(NNRT_DTYPE_F32, {1});
  EXPECT_EQ(run_op(NNRT_OP_LOSS, attrs_with(NNRT_LOSS_MSE), {&p, &t}, {&out}), NNRT_ERR_SHAPE);
  EXPECT_EQ(run_op(NNRT_OP_LOSS, attrs_with(NNRT_LOSS_MSE), {&p, &p}, {&out1}), NNRT_ERR_SHAPE);
  Tensor labels = Tensor::zeros(NNRT_DTYPE_I32, {4});
  EXPECT_EQ(run_op(NNRT_OP_LOSS, attrs_with(NNRT_LOSS_NLL), {&p, &labels}, {&out}), NNRT_ERR_SHAPE);
  Tensor u8 = Tensor::zeros(NNRT_DTYPE_U8, {3});
  EXPECT_EQ(run_op(NNRT_OP_LOSS, attrs_with(NNRT_LOSS_NLL), {&p, &u8}, {&out}), NNRT_ERR_DTYPE);
  Tensor p3 = Tensor::zeros(NNRT_DTYPE_F32, {3, 4, 1});
  EXPECT_EQ(run_op(NNRT_OP_LOSS, attrs_with(NNRT_LOSS_SOFTMAX_CROSS_ENTROPY), {&p3, &labels}, {&out}), NNRT_ERR_SHAPE);
  EXPECT_EQ(run_op(NNRT_OP_LOSS, attrs_with(0), {&p, &p}, {&out}), NNRT_ERR_UNSUPPORTED);
}

}  // namespace
}  // namespace nnrt::reftest
