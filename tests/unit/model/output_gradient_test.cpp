// The output layer against finite differences of its loss, for every activation and loss pair it
// accepts: the gradient training uses (loss_gradient, then backward) with respect to the layer's
// input and parameters.
//
// loss() and loss_gradient() compute in F32 whatever the pass's dtype (half precision would lose
// the loss), and an F32 loss is too coarse to difference. So the differences are taken of the same
// loss computed in F64 from the same saved forward pass, and loss() is checked against it
// separately; the analytic side keeps its F32 rounding, well inside the tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <tuple>

#include "backend/ops.h"
#include "layer_check.h"
#include "model/layers/output.h"

namespace nnrt::model::testing {
namespace {

constexpr double kTolerance = 1e-6;
constexpr int64_t kBatch = 3, kFeatures = 5, kUnits = 4, kPositions = 2;

enum class Target { kIndices, kDistribution, kValues, kProbabilities };

struct OutputCase {
  std::string name, activation, loss;
  Target target;
};

void PrintTo(const OutputCase &c, std::ostream *os) { *os << c.name; }

std::vector<OutputCase> output_cases() {
  std::vector<OutputCase> c = {
      {"softmax_nll_indices", "softmax", "nll", Target::kIndices},
      {"softmax_nll_distribution", "softmax", "nll", Target::kDistribution},
      {"softmax_cross_entropy", "softmax", "cross_entropy", Target::kIndices},
      {"log_softmax_nll", "log_softmax", "nll", Target::kIndices},
      {"identity_nll_log_probabilities", "identity", "nll", Target::kIndices},
      {"sigmoid_bce", "sigmoid", "bce", Target::kProbabilities},
      {"identity_bce_probabilities", "identity", "bce", Target::kProbabilities},
  };
  for (const char *loss : {"mse", "l1"}) {
    for (const char *a : {"identity", "relu", "leaky_relu", "elu", "gelu", "sigmoid", "tanh", "softmax", "log_softmax"}) {
      c.push_back({std::string(a) + "_" + loss, a, loss, Target::kValues});
    }
  }
  return c;
}

// Labels for kBatch examples: one per example, or one per position of `positions`.
Array make_target(Context &ctx, Target kind, uint64_t seed, const Shape &positions = Shape{}) {
  Shape labels{kBatch};
  for (int32_t i = 0; i < positions.rank; ++i) labels.dims[labels.rank++] = positions[i];
  Shape out = labels;
  out.dims[out.rank++] = kUnits;
  switch (kind) {
    case Target::kIndices: return random_indices(ctx, NNRT_DTYPE_I64, labels, kUnits, seed);
    case Target::kDistribution:
      return ops::softmax(ctx, NNRT_SOFTMAX, random_normal(ctx, NNRT_DTYPE_F64, out, seed), out.rank - 1);
    case Target::kValues: return random_normal(ctx, NNRT_DTYPE_F64, out, seed);
    case Target::kProbabilities: return random_uniform(ctx, NNRT_DTYPE_F64, out, seed, 0.05, 0.95);
  }
  return Array();
}

// Checks the gradient training uses (loss_gradient, then backward) against finite differences of
// the F64 loss, and loss() against that loss, for a layer built for per-example `input` shapes.
void check_output_layer(Context &ctx, const Json &config, const Shape &input, const Array &target) {
  BuiltLayer built = build_layer(config, {input});
  const auto &layer = dynamic_cast<const OutputLayer &>(*built.layer);
  Shape batch{kBatch};
  for (int32_t i = 0; i < input.rank; ++i) batch.dims[batch.rank++] = input[i];
  std::vector<Array> inputs = {random_normal(ctx, NNRT_DTYPE_F64, batch, 31)};
  std::vector<Array> params = make_params(ctx, layer, NNRT_DTYPE_F64, 32);
  if (config["activation"] == "identity" && config["loss"] == "bce") {
    // bce on the outputs themselves needs them inside (0, 1): small weights around 0.5.
    params[0] = random_normal(ctx, NNRT_DTYPE_F64, params[0].shape(), 33, 0, 0.05);
    params[1] = ops::full(ctx, NNRT_DTYPE_F64, params[1].shape(), 0.5);
  }
  layer.check_target(target, kBatch);

  Objective loss_f64;
  loss_f64.value = [&](Pass &pass, const Array &, const Saved &saved) {
    // The rows the layer's loss sees: one per example, or one per position.
    const Array &pred = layer.loss_on_logits ? saved.arrays[1] : saved.arrays[2];
    Array t = target.dtype() == NNRT_DTYPE_I64 ? ops::reshape(pass.ctx, target, {pred.dim(0)})
                                               : ops::reshape(pass.ctx, target, pred.shape().vec());
    return ops::item(ops::loss(pass.ctx, layer.loss_alg, pred, t));
  };
  loss_f64.dout = [&](Pass &pass, const Array &, const Saved &saved) {
    return layer.loss_gradient(pass, saved, target, 1.0);
  };
  GradientReport report = check_gradients(ctx, layer, inputs, params, loss_f64);
  std::cout << "[gradcheck] output " << config.dump() << ": worst " << report.worst << " (" << report.describe() << ")\n";
  EXPECT_LT(report.worst, kTolerance) << report.describe();

  // loss() itself: the same value, rounded to F32.
  Pass pass{ctx, true, 1, NNRT_DTYPE_F64, {}};
  Saved saved;
  Array out = layer.forward(pass, inputs, params, saved);
  double exact = loss_f64.value(pass, out, saved), f32 = ops::item(layer.loss(pass, saved, target));
  EXPECT_NEAR(f32, exact, 1e-6 * std::max(1.0, std::fabs(exact)));
}

class OutputGradient : public ::testing::TestWithParam<OutputCase> {};

TEST_P(OutputGradient, LossGradientMatchesFiniteDifferences) {
  const OutputCase &c = GetParam();
  auto ctx = make_context("reference");
  ASSERT_NE(ctx, nullptr);
  Json config = {{"type", "output"}, {"units", kUnits}, {"activation", c.activation}, {"loss", c.loss}};
  check_output_layer(*ctx, config, Shape{kFeatures}, make_target(*ctx, c.target, 34));
}

INSTANTIATE_TEST_SUITE_P(Pairs, OutputGradient, ::testing::ValuesIn(output_cases()),
                         [](const ::testing::TestParamInfo<OutputCase> &info) { return info.param.name; });

TEST(OutputLayer, RefusesPairsThatDoNotFit) {
  for (auto [activation, loss] : {std::pair{"relu", "nll"}, std::pair{"tanh", "bce"}, std::pair{"softmax", "hinge"}}) {
    Json config = {{"type", "output"}, {"units", 2}, {"activation", activation}, {"loss", loss}};
    try {
      build_layer(config, {Shape{3}});
      ADD_FAILURE() << activation << " + " << loss << " was accepted";
    } catch (const Error &e) {
      EXPECT_EQ(e.status(), NNRT_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("loss"), std::string::npos) << e.what();
    }
  }
}

// "flatten": false: a label per position of [T, features] (a language model's next tokens).
TEST(OutputPerPosition, LossGradientMatchesFiniteDifferences) {
  auto ctx = make_context("reference");
  ASSERT_NE(ctx, nullptr);
  const Shape positions{kPositions};
  for (const OutputCase &c : {OutputCase{"softmax_nll_indices", "softmax", "nll", Target::kIndices},
                              OutputCase{"softmax_nll_distribution", "softmax", "nll", Target::kDistribution},
                              OutputCase{"log_softmax_nll", "log_softmax", "nll", Target::kIndices},
                              OutputCase{"tanh_mse", "tanh", "mse", Target::kValues},
                              OutputCase{"sigmoid_bce", "sigmoid", "bce", Target::kProbabilities}}) {
    SCOPED_TRACE(c.name);
    Json config = {{"type", "output"}, {"units", kUnits}, {"activation", c.activation}, {"loss", c.loss}, {"flatten", false}};
    check_output_layer(*ctx, config, Shape{kPositions, kFeatures}, make_target(*ctx, c.target, 35, positions));
  }
}

// A per-position output is the flattening one applied to every position as an example of its own:
// the same outputs, loss (the mean over all positions) and gradients.
TEST(OutputPerPosition, IsEachPositionAsAnExample) {
  auto ctx = make_context("reference");
  ASSERT_NE(ctx, nullptr);
  Json config = {{"type", "output"}, {"units", kUnits}, {"loss", "nll"}};
  BuiltLayer flat = build_layer(config, {Shape{kFeatures}});
  config["flatten"] = false;
  BuiltLayer per = build_layer(config, {Shape{kPositions, kFeatures}});
  EXPECT_EQ(per.out_shape, (Shape{kPositions, kUnits}));
  const auto &per_layer = dynamic_cast<const OutputLayer &>(*per.layer);
  const auto &flat_layer = dynamic_cast<const OutputLayer &>(*flat.layer);
  EXPECT_EQ(per_layer.label_shape(), (Shape{kPositions}));
  EXPECT_EQ(flat_layer.label_shape().rank, 0);

  std::vector<Array> params = make_params(*ctx, per_layer, NNRT_DTYPE_F64, 36);
  Array x = random_normal(*ctx, NNRT_DTYPE_F64, Shape{kBatch, kPositions, kFeatures}, 37);
  Array labels = random_indices(*ctx, NNRT_DTYPE_I64, Shape{kBatch, kPositions}, kUnits, 38);
  const int64_t rows = kBatch * kPositions;
  struct Run {
    Array out, loss;
    std::vector<Array> din, dparams;
  };
  auto run = [&](const OutputLayer &layer, const Array &in, const Array &target) {
    Pass pass{*ctx, true, 1, NNRT_DTYPE_F64, {}};
    pass.need_input_grad = {true};
    Saved saved;
    Run r;
    r.out = layer.forward(pass, {in}, params, saved);
    r.loss = layer.loss(pass, saved, target);
    r.din.resize(1);
    r.dparams.resize(params.size());
    layer.backward(pass, {in}, params, r.out, saved, layer.loss_gradient(pass, saved, target, 1.0), r.din, r.dparams);
    return r;
  };
  Run a = run(per_layer, x, labels);
  Run b = run(flat_layer, ops::reshape(*ctx, x, {rows, kFeatures}), ops::reshape(*ctx, labels, {rows}));
  EXPECT_EQ(a.out.shape(), (Shape{kBatch, kPositions, kUnits}));
  EXPECT_LT(relative_error(ops::reshape(*ctx, a.out, {rows, kUnits}), b.out), 1e-12);
  EXPECT_NEAR(ops::item(a.loss), ops::item(b.loss), 1e-6);
  EXPECT_EQ(a.din[0].shape(), x.shape());
  EXPECT_LT(relative_error(ops::reshape(*ctx, a.din[0], {rows, kFeatures}), b.din[0]), 1e-12);
  for (size_t i = 0; i < params.size(); ++i) EXPECT_LT(relative_error(a.dparams[i], b.dparams[i]), 1e-12) << i;
}

TEST(OutputPerPosition, RefusesLabelsOfAnotherShape) {
  auto ctx = make_context("reference");
  ASSERT_NE(ctx, nullptr);
  Json config = {{"type", "output"}, {"units", kUnits}, {"loss", "nll"}, {"flatten", false}};
  BuiltLayer built = build_layer(config, {Shape{kPositions, kFeatures}});
  const auto &layer = dynamic_cast<const OutputLayer &>(*built.layer);
  auto status_and_message = [&](const Array &target) -> std::pair<nnrt_status, std::string> {
    try {
      layer.check_target(target, kBatch);
    } catch (const Error &e) {
      return {e.status(), e.what()};
    }
    return {NNRT_OK, ""};
  };
  auto [status, message] = status_and_message(random_indices(*ctx, NNRT_DTYPE_I64, Shape{kBatch}, kUnits, 1));
  EXPECT_EQ(status, NNRT_ERR_SHAPE);
  EXPECT_NE(message.find("expected class labels shaped [3, 2] (one per position of 3 examples of [2]), got [3]"),
            std::string::npos)
      << message;
  std::tie(status, message) = status_and_message(random_normal(*ctx, NNRT_DTYPE_F64, Shape{kBatch, kUnits}, 1));
  EXPECT_EQ(status, NNRT_ERR_SHAPE);
  EXPECT_NE(message.find("expected targets shaped [3, 2, 4], got [3, 4]"), std::string::npos) << message;
}

}  // namespace
}  // namespace nnrt::model::testing
