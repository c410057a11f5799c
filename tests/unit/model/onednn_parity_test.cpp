// Every layer's forward and backward pass in F32 on the oneDNN backend against the reference
// backend, from the same parameters, inputs and output gradient. Skipped where the oneDNN plugin
// is not built; where it is built (NNRT_TEST_ONEDNN_BUILT), a plugin that does not load fails.
// Ops the plugin does not run fall back to the reference backend: the test records where every op
// ran, prints it, and asserts that only these two backends ran ops. A case in which no op ran on
// oneDNN would compare the reference backend with itself, so it says it skipped instead of passing.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "backend/dispatch.h"
#include "backend/ops.h"
#include "backend_fixture.h"
#include "layer_cases.h"
#include "layer_check.h"
#include "model/layers/output.h"

namespace nnrt::model::testing {
namespace {

constexpr double kTolerance = 1e-4;

// Which backend ran each op kind.
class OpLog : public backend::PlacementRecorder {
 public:
  void record(int32_t kind, const std::string &backend, bool) override {
    ran[backend::op_kind_name(kind)].insert(backend);
  }
  std::string describe() const {
    std::string s;
    for (const auto &[op, backends] : ran) {
      s += (s.empty() ? "" : ", ") + op + ":";
      for (const std::string &b : backends) s += " " + b;
    }
    return s;
  }
  // Ops that ran on oneDNN, and problems: an op on a backend other than the two under test.
  int on_onednn() const {
    int n = 0;
    for (const auto &[op, backends] : ran) n += backends.count("onednn") ? 1 : 0;
    return n;
  }
  std::string strangers() const {
    std::string s;
    for (const auto &[op, backends] : ran)
      for (const std::string &b : backends)
        if (b != "onednn" && b != "reference") s += " " + op + " on " + b;
    return s;
  }
  std::map<std::string, std::set<std::string>> ran;
};

// Skips where no plugin was built; fails where one was built but did not load.
#define REQUIRE_ONEDNN(b)                                                                        \
  do {                                                                                           \
    ASSERT_NE((b).reference, nullptr);                                                           \
    if (!(b).onednn && !kOnednnBuilt) GTEST_SKIP() << "the oneDNN plugin is not built here";     \
    ASSERT_NE((b).onednn, nullptr) << "the oneDNN plugin is built but did not open";             \
  } while (0)

// Asserts where the ops of one case ran; skips a case that ran no op (a view such as flatten) or
// whose ops all fell back to the reference backend: it compared that backend with itself.
#define CHECK_PLACEMENT(log, what)                                                               \
  do {                                                                                           \
    EXPECT_EQ((log).strangers(), "") << (what) << ": ops ran on a backend not under test";       \
    if ((log).ran.empty()) GTEST_SKIP() << (what) << ": runs no backend op, nothing to compare"; \
    if ((log).on_onednn() == 0)                                                                  \
      GTEST_SKIP() << (what) << ": every op fell back to the reference backend ("                \
                   << (log).describe() << "), which compared it with itself";                   \
  } while (0)

// One training forward and backward pass, and an inference forward pass.
struct Results {
  Array out, inference_out;
  std::vector<Array> din, dparams, params_after;
};

Results run(Context &ctx, const Layer &layer, const std::vector<Array> &inputs, const std::vector<Array> &params,
            const Array &dout) {
  Results r;
  Pass pass{ctx, true, 3, NNRT_DTYPE_F32, {}};
  Saved saved;
  r.out = layer.forward(pass, inputs, params, saved);
  r.din.resize(inputs.size());
  r.dparams.resize(params.size());
  layer.backward(pass, inputs, params, r.out, saved, dout, r.din, r.dparams);
  r.params_after = params;  // batchnorm moved its statistics in place
  Pass inference{ctx, false, 0, NNRT_DTYPE_F32, {}};
  Saved unused;
  r.inference_out = layer.forward(inference, inputs, params, unused);
  return r;
}

std::vector<Array> copy_all(Context &ctx, const std::vector<Array> &arrays) {
  std::vector<Array> out;
  for (const Array &a : arrays) out.push_back(copy_to(ctx, a));
  return out;
}

// Compares two arrays (both undefined is fine) and keeps the worst error.
void compare(const std::string &what, const Array &ref, const Array &dnn, double &worst) {
  ASSERT_EQ(ref.defined(), dnn.defined()) << what;
  if (!ref.defined()) return;
  double e = relative_error(ref, dnn);
  EXPECT_LT(e, kTolerance) << what;
  worst = std::max(worst, e);
}

struct Backends {
  std::shared_ptr<Context> reference = make_context("reference"), onednn = make_context("onednn");
};

class OnednnParity : public ::testing::TestWithParam<LayerCase> {};

TEST_P(OnednnParity, MatchesTheReferenceBackend) {
  const LayerCase &c = GetParam();
  Backends b;
  REQUIRE_ONEDNN(b);
  BuiltLayer built = build_layer(Json::parse(c.config), c.inputs);
  std::vector<Array> inputs = make_inputs(*b.reference, c, NNRT_DTYPE_F32, 21);
  std::vector<Array> params = make_params(*b.reference, *built.layer, NNRT_DTYPE_F32, 22);
  Array dout = random_normal(*b.reference, NNRT_DTYPE_F32, with_batch(c.batch, built.out_shape), 23);

  // Copied before either pass: batchnorm's pass moves its running statistics in place.
  std::vector<Array> dnn_inputs = copy_all(*b.onednn, inputs), dnn_params = copy_all(*b.onednn, params);
  Array dnn_dout = copy_to(*b.onednn, dout);

  Results ref = run(*b.reference, *built.layer, inputs, params, dout);
  OpLog log;
  Results dnn;
  {
    backend::PlacementScope scope(&log);
    dnn = run(*b.onednn, *built.layer, dnn_inputs, dnn_params, dnn_dout);
  }

  double worst = 0;
  compare("output", ref.out, dnn.out, worst);
  compare("inference output", ref.inference_out, dnn.inference_out, worst);
  for (size_t k = 0; k < ref.din.size(); ++k) compare("input gradient " + std::to_string(k), ref.din[k], dnn.din[k], worst);
  for (size_t j = 0; j < ref.dparams.size(); ++j) {
    compare("parameter gradient " + std::to_string(j), ref.dparams[j], dnn.dparams[j], worst);
    compare("parameter after the pass " + std::to_string(j), ref.params_after[j], dnn.params_after[j], worst);
  }
  std::cout << "[onednn] " << c.name << ": worst " << worst << " (" << log.describe() << ")\n";
  CHECK_PLACEMENT(log, c.name);
}

INSTANTIATE_TEST_SUITE_P(Layers, OnednnParity, ::testing::ValuesIn(layer_cases()),
                         [](const ::testing::TestParamInfo<LayerCase> &info) { return info.param.name; });

// The output layer: its loss and the gradient training starts from, for one pair of each loss.
TEST(OnednnParityOutput, LossAndGradientsMatch) {
  Backends b;
  REQUIRE_ONEDNN(b);
  OpLog log;
  struct Pair {
    const char *activation, *loss;
    bool indices;
  };
  for (Pair p : {Pair{"softmax", "nll", true}, Pair{"sigmoid", "bce", false}, Pair{"tanh", "mse", false},
                 Pair{"identity", "l1", false}}) {
    Json config = {{"type", "output"}, {"units", 4}, {"activation", p.activation}, {"loss", p.loss}};
    BuiltLayer built = build_layer(config, {Shape{6}});
    const auto &layer = dynamic_cast<const OutputLayer &>(*built.layer);
    std::vector<Array> inputs = {random_normal(*b.reference, NNRT_DTYPE_F32, Shape{5, 6}, 41)};
    std::vector<Array> params = make_params(*b.reference, layer, NNRT_DTYPE_F32, 42);
    Array target = p.indices ? random_indices(*b.reference, NNRT_DTYPE_I64, Shape{5}, 4, 43)
                             : random_uniform(*b.reference, NNRT_DTYPE_F32, Shape{5, 4}, 43, 0.1, 0.9);

    double worst = 0;
    std::vector<Array> grads[2];
    double losses[2];
    Context *contexts[2] = {b.reference.get(), b.onednn.get()};
    for (int k = 0; k < 2; ++k) {
      Context &ctx = *contexts[k];
      std::unique_ptr<backend::PlacementScope> scope;
      if (k == 1) scope = std::make_unique<backend::PlacementScope>(&log);
      Pass pass{ctx, true, 1, NNRT_DTYPE_F32, {}};
      std::vector<Array> in = copy_all(ctx, inputs), par = copy_all(ctx, params);
      Saved saved;
      Array out = layer.forward(pass, in, par, saved);
      Array t = copy_to(ctx, target);
      losses[k] = ops::item(layer.loss(pass, saved, t));
      std::vector<Array> din(1), dparams(par.size());
      layer.backward(pass, in, par, out, saved, layer.loss_gradient(pass, saved, t, 1.0), din, dparams);
      grads[k] = {out, din[0], dparams[0], dparams[1]};
    }
    EXPECT_NEAR(losses[0], losses[1], kTolerance * std::max(1.0, std::fabs(losses[0])));
    for (size_t i = 0; i < grads[0].size(); ++i) {
      compare(std::string(p.loss) + " array " + std::to_string(i), grads[0][i], grads[1][i], worst);
    }
    std::cout << "[onednn] output " << p.activation << "+" << p.loss << ": worst " << worst << "\n";
  }
  std::cout << "[onednn] output layer ops: " << log.describe() << "\n";
  CHECK_PLACEMENT(log, "the output layer");
}

}  // namespace
}  // namespace nnrt::model::testing
