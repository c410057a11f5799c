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

#include "backend/ops.h"
#include "layer_check.h"
#include "model/layers/output.h"

namespace nnrt::model::testing {
namespace {

constexpr double kTolerance = 1e-6;
constexpr int64_t kBatch = 3, kFeatures = 5, kUnits = 4;

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

Array make_target(Context &ctx, Target kind, uint64_t seed) {
  Shape out{kBatch, kUnits};
  switch (kind) {
    case Target::kIndices: return random_indices(ctx, NNRT_DTYPE_I64, Shape{kBatch}, kUnits, seed);
    case Target::kDistribution:
      return ops::softmax(ctx, NNRT_SOFTMAX, random_normal(ctx, NNRT_DTYPE_F64, out, seed), 1);
    case Target::kValues: return random_normal(ctx, NNRT_DTYPE_F64, out, seed);
    case Target::kProbabilities: return random_uniform(ctx, NNRT_DTYPE_F64, out, seed, 0.05, 0.95);
  }
  return Array();
}

class OutputGradient : public ::testing::TestWithParam<OutputCase> {};

TEST_P(OutputGradient, LossGradientMatchesFiniteDifferences) {
  const OutputCase &c = GetParam();
  auto ctx = make_context("reference");
  ASSERT_NE(ctx, nullptr);
  Json config = {{"type", "output"}, {"units", kUnits}, {"activation", c.activation}, {"loss", c.loss}};
  BuiltLayer built = build_layer(config, {Shape{kFeatures}});
  const auto &layer = dynamic_cast<const OutputLayer &>(*built.layer);

  std::vector<Array> inputs = {random_normal(*ctx, NNRT_DTYPE_F64, Shape{kBatch, kFeatures}, 31)};
  std::vector<Array> params = make_params(*ctx, layer, NNRT_DTYPE_F64, 32);
  if (c.activation == "identity" && c.loss == "bce") {
    // bce on the outputs themselves needs them inside (0, 1): small weights around 0.5.
    params[0] = random_normal(*ctx, NNRT_DTYPE_F64, params[0].shape(), 33, 0, 0.05);
    params[1] = ops::full(*ctx, NNRT_DTYPE_F64, params[1].shape(), 0.5);
  }
  Array target = make_target(*ctx, c.target, 34);

  Objective loss_f64;
  loss_f64.value = [&](Pass &pass, const Array &, const Saved &saved) {
    const Array &pred = layer.loss_on_logits ? saved.arrays[1] : saved.arrays[2];
    return ops::item(ops::loss(pass.ctx, layer.loss_alg, pred, target));
  };
  loss_f64.dout = [&](Pass &pass, const Array &, const Saved &saved) {
    return layer.loss_gradient(pass, saved, target, 1.0);
  };
  GradientReport report = check_gradients(*ctx, layer, inputs, params, loss_f64);
  std::cout << "[gradcheck] output " << c.name << ": worst " << report.worst << " (" << report.describe() << ")\n";
  EXPECT_LT(report.worst, kTolerance) << report.describe();

  // loss() itself: the same value, rounded to F32.
  Pass pass{*ctx, true, 1, NNRT_DTYPE_F64, {}};
  Saved saved;
  Array out = layer.forward(pass, inputs, params, saved);
  double exact = loss_f64.value(pass, out, saved), f32 = ops::item(layer.loss(pass, saved, target));
  EXPECT_NEAR(f32, exact, 1e-6 * std::max(1.0, std::fabs(exact)));
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

}  // namespace
}  // namespace nnrt::model::testing
