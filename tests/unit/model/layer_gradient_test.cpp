// Every layer's backward pass against central finite differences, in F64 on the reference backend.
// The scalar differentiated is a random projection of the output, L = sum(out * R), so every
// output element contributes with its own weight.
#include <gtest/gtest.h>

#include <iostream>

#include "backend/ops.h"
#include "layer_cases.h"
#include "layer_check.h"

namespace nnrt::model::testing {
namespace {

constexpr double kTolerance = 1e-6;

class LayerGradient : public ::testing::TestWithParam<LayerCase> {};

TEST_P(LayerGradient, MatchesFiniteDifferences) {
  const LayerCase &c = GetParam();
  auto ctx = make_context("reference");
  ASSERT_NE(ctx, nullptr);
  BuiltLayer built = build_layer(Json::parse(c.config), c.inputs);
  std::vector<Array> inputs = make_inputs(*ctx, c, NNRT_DTYPE_F64, 11);
  std::vector<Array> params = make_params(*ctx, *built.layer, NNRT_DTYPE_F64, 12);
  Objective objective = random_projection(*ctx, with_batch(c.batch, built.out_shape), NNRT_DTYPE_F64, 13);

  GradientCheckOptions options;
  options.check_inputs = c.kind != InputKind::kIndices && c.kind != InputKind::kFloatIndices;  // not differentiable
  GradientReport report = check_gradients(*ctx, *built.layer, inputs, params, objective, options);

  std::cout << "[gradcheck] " << c.name << ": worst " << report.worst << " (" << report.describe() << ")\n";
  EXPECT_LT(report.worst, kTolerance) << report.describe();
  EXPECT_FALSE(report.errors.empty());
}

INSTANTIATE_TEST_SUITE_P(Layers, LayerGradient, ::testing::ValuesIn(layer_cases()),
                         [](const ::testing::TestParamInfo<LayerCase> &info) { return info.param.name; });

}  // namespace
}  // namespace nnrt::model::testing
