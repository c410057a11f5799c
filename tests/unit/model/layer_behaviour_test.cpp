// What the gradient checks cannot see: forward values against the definitions (computed here on
// the host), state updates, masks, and the errors layers give for inputs that do not fit.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "backend/ops.h"
#include "core/error.h"
#include "layer_check.h"

namespace nnrt::model::testing {
namespace {

using std::vector;

std::shared_ptr<Context> reference() {
  auto ctx = make_context("reference");
  if (!ctx) throw std::runtime_error("no reference context");
  return ctx;
}

// Runs a layer's forward pass on F64 inputs.
Array forward(Context &ctx, const Layer &layer, const vector<Array> &in, const vector<Array> &params, bool training,
              uint64_t step = 1) {
  Pass pass{ctx, training, step, NNRT_DTYPE_F64, {}};
  Saved saved;
  return layer.forward(pass, in, params, saved);
}

// Expects `f` to throw an nnrt::Error of `status` whose message holds every one of `parts`.
template <class F>
void expect_error(F &&f, nnrt_status status, const vector<std::string> &parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << status_name(status);
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), status) << e.what();
    for (const std::string &p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

// ---- batchnorm ------------------------------------------------------------------------------

// Per-channel batch mean and biased variance of x [N, C, rest...] on the host.
void channel_stats(const vector<double> &x, int64_t n, int64_t c, int64_t rest, vector<double> &mean,
                   vector<double> &var) {
  mean.assign(c, 0);
  var.assign(c, 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t r = 0; r < rest; ++r) mean[ch] += x[(i * c + ch) * rest + r] / double(n * rest);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t r = 0; r < rest; ++r) {
        double d = x[(i * c + ch) * rest + r] - mean[ch];
        var[ch] += d * d / double(n * rest);
      }
}

TEST(Batchnorm, TrainingMovesTheRunningStatisticsLikePyTorch) {
  auto ctx = reference();
  BuiltLayer bn = build_layer(Json::parse(R"({"type": "batchnorm", "momentum": 0.25})"), {Shape{3, 2, 2}});
  vector<Array> params = make_params(*ctx, *bn.layer, NNRT_DTYPE_F64, 5);
  Array x = random_normal(*ctx, NNRT_DTYPE_F64, Shape{4, 3, 2, 2}, 6, 0.5, 2);
  vector<double> mean0 = ops::to_doubles(params[2]), var0 = ops::to_doubles(params[3]);

  forward(*ctx, *bn.layer, {x}, params, true);

  vector<double> mean, var;
  channel_stats(ops::to_doubles(x), 4, 3, 4, mean, var);
  vector<double> want_mean(3), want_var(3);
  double n = 4 * 2 * 2;
  for (int c = 0; c < 3; ++c) {
    want_mean[c] = 0.75 * mean0[c] + 0.25 * mean[c];
    want_var[c] = 0.75 * var0[c] + 0.25 * var[c] * n / (n - 1);  // the unbiased variance
  }
  EXPECT_LT(relative_error(ops::to_doubles(params[2]), want_mean), 1e-6);
  EXPECT_LT(relative_error(ops::to_doubles(params[3]), want_var), 1e-6);
}

TEST(Batchnorm, InferenceUsesTheRunningStatistics) {
  auto ctx = reference();
  BuiltLayer bn = build_layer(Json::parse(R"({"type": "batchnorm", "eps": 0.01})"), {Shape{3}});
  vector<Array> params = make_params(*ctx, *bn.layer, NNRT_DTYPE_F64, 7);
  Array x = random_normal(*ctx, NNRT_DTYPE_F64, Shape{2, 3}, 8);
  vector<double> before = ops::to_doubles(params[2]);
  Array y = forward(*ctx, *bn.layer, {x}, params, false);

  vector<double> xs = ops::to_doubles(x), g = ops::to_doubles(params[0]), b = ops::to_doubles(params[1]),
                 m = ops::to_doubles(params[2]), v = ops::to_doubles(params[3]), want(6);
  for (int i = 0; i < 6; ++i) want[i] = g[i % 3] * (xs[i] - m[i % 3]) / std::sqrt(v[i % 3] + 0.01) + b[i % 3];
  EXPECT_LT(relative_error(ops::to_doubles(y), want), 1e-6);
  EXPECT_EQ(ops::to_doubles(params[2]), before);  // inference leaves the statistics alone
}

TEST(Batchnorm, TrainingNormalizesWithTheBatchStatistics) {
  auto ctx = reference();
  BuiltLayer bn = build_layer(Json::parse(R"({"type": "batchnorm"})"), {Shape{2}});
  vector<Array> params = make_params(*ctx, *bn.layer, NNRT_DTYPE_F64, 9);
  params[0] = ops::full(*ctx, NNRT_DTYPE_F32, Shape{2}, 1);
  params[1] = ops::zeros(*ctx, NNRT_DTYPE_F32, Shape{2});
  Array y = forward(*ctx, *bn.layer, {random_normal(*ctx, NNRT_DTYPE_F64, Shape{6, 2}, 10, 3, 2)}, params, true);
  vector<double> mean, var;
  channel_stats(ops::to_doubles(y), 6, 2, 1, mean, var);
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(mean[c], 0, 1e-9);
    EXPECT_NEAR(var[c], 1, 1e-3);  // var / (var + eps)
  }
}

// ---- dropout --------------------------------------------------------------------------------

TEST(Dropout, MasksAreFreshPerStepAndRepeatableForAStep) {
  auto ctx = reference();
  BuiltLayer d = build_layer(Json::parse(R"({"type": "dropout", "rate": 0.3})"), {Shape{1000}});
  d.layer->seed = 99;
  Array x = random_uniform(*ctx, NNRT_DTYPE_F64, Shape{4, 1000}, 1, 1, 2);  // never 0
  vector<double> xs = ops::to_doubles(x);
  vector<double> a = ops::to_doubles(forward(*ctx, *d.layer, {x}, {}, true, 7));
  vector<double> again = ops::to_doubles(forward(*ctx, *d.layer, {x}, {}, true, 7));
  vector<double> next = ops::to_doubles(forward(*ctx, *d.layer, {x}, {}, true, 8));
  EXPECT_EQ(a, again);
  EXPECT_NE(a, next);

  int64_t dropped = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == 0) ++dropped;
    else EXPECT_NEAR(a[i], xs[i] / 0.7, 1e-12);
  }
  EXPECT_NEAR(double(dropped) / double(a.size()), 0.3, 0.03);

  d.layer->seed = 100;  // another layer: another mask
  EXPECT_NE(ops::to_doubles(forward(*ctx, *d.layer, {x}, {}, true, 7)), a);
  EXPECT_EQ(ops::to_doubles(forward(*ctx, *d.layer, {x}, {}, false)), xs);  // inference: identity
}

TEST(Dropout, RefusesARateOutsideZeroToOne) {
  for (const char *config : {R"({"type": "dropout", "rate": 1})", R"({"type": "dropout", "rate": -0.1})",
                             R"({"type": "dropout"})"}) {
    expect_error([&] { build_layer(Json::parse(config), {Shape{3}}); }, NNRT_ERR_INVALID_ARGUMENT, {"rate"});
  }
}

// ---- transposed convolution ------------------------------------------------------------------

TEST(Conv2dTranspose, ScattersEachInputThroughTheKernel) {
  // One input channel, one filter, stride 2: each input value stamps the 2x2 kernel into its own
  // 2x2 block of the 4x4 output (PyTorch's ConvTranspose2d(1, 1, 2, stride=2) without bias).
  auto ctx = reference();
  BuiltLayer l = build_layer(Json::parse(R"({"type": "conv2d_transpose", "filters": 1, "kernel": 2, "stride": 2,
                                             "bias": false})"), {Shape{1, 2, 2}});
  EXPECT_EQ(l.out_shape, (Shape{1, 4, 4}));
  Array x = from_doubles(*ctx, NNRT_DTYPE_F64, Shape{1, 1, 2, 2}, {1, 2, 3, 4});
  Array w = from_doubles(*ctx, NNRT_DTYPE_F64, Shape{1, 1, 2, 2}, {1, 10, 100, 1000});
  vector<double> want = {1, 10, 2, 20, 100, 1000, 200, 2000, 3, 30, 4, 40, 300, 3000, 400, 4000};
  EXPECT_EQ(ops::to_doubles(forward(*ctx, *l.layer, {x}, {w}, false)), want);
}

TEST(Conv2dTranspose, SizesTheOutputAsPyTorchAndRefusesWhatDoesNotFit) {
  // (in - 1) * stride - pads + dilation * (kernel - 1) + 1 + output_padding
  EXPECT_EQ(build_layer(Json::parse(R"({"type": "conv2d_transpose", "filters": 3, "kernel": [3, 2], "stride": [3, 2],
                                        "padding": [1, 0, 2, 1], "output_padding": [2, 1], "dilation": [1, 2]})"),
                        {Shape{2, 4, 5}}).out_shape,
            (Shape{3, 11, 11}));
  expect_error([] { build_layer(Json::parse(R"({"type": "conv2d_transpose", "filters": 2, "kernel": 3,
                                                "output_padding": 1})"), {Shape{2, 4, 4}}); },
               NNRT_ERR_SHAPE, {"conv2d_transpose", "output_padding (1)", "stride (1)"});
  expect_error([] { build_layer(Json::parse(R"({"type": "conv2d_transpose", "filters": 3, "kernel": 3, "groups": 2})"),
                                {Shape{4, 3, 3}}); },
               NNRT_ERR_SHAPE, {"groups (2)", "filters (3)"});
  expect_error([] { build_layer(Json::parse(R"({"type": "conv2d_transpose", "filters": 2, "kernel": 2, "padding": 2})"),
                                {Shape{1, 1, 1}}); },
               NNRT_ERR_SHAPE, {"no output"});
  expect_error([] { build_layer(Json::parse(R"({"type": "conv2d_transpose", "filters": 2, "kernel": 2,
                                                "padding": "same"})"), {Shape{1, 3, 3}}); },
               NNRT_ERR_INVALID_ARGUMENT, {"padding", "\"valid\" or ints"});
}

// ---- pooling, reshape, add, concat ------------------------------------------------------------

TEST(GlobalPool, AveragesAndMaximaPerChannel) {
  auto ctx = reference();
  Array x = random_normal(*ctx, NNRT_DTYPE_F64, Shape{2, 3, 4, 5}, 3);
  vector<double> xs = ops::to_doubles(x), avg(6, 0), max(6, -INFINITY);
  for (int i = 0; i < 120; ++i) {
    avg[i / 20] += xs[i] / 20;
    max[i / 20] = std::max(max[i / 20], xs[i]);
  }
  for (auto [type, want] : {std::pair{"global_avgpool2d", avg}, std::pair{"global_maxpool2d", max}}) {
    BuiltLayer l = build_layer(Json{{"type", type}}, {Shape{3, 4, 5}});
    EXPECT_EQ(l.out_shape, Shape{3});
    Array y = forward(*ctx, *l.layer, {x}, {}, false);
    EXPECT_EQ(y.shape(), (Shape{2, 3}));
    EXPECT_LT(relative_error(ops::to_doubles(y), want), 1e-12) << type;
  }
}

TEST(Reshape, KeepsTheOrderAndRefusesAnotherCount) {
  BuiltLayer r = build_layer(Json::parse(R"({"type": "reshape", "shape": [-1, 4]})"), {Shape{2, 3, 2}});
  EXPECT_EQ(r.out_shape, (Shape{3, 4}));
  expect_error([] { build_layer(Json::parse(R"({"type": "reshape", "shape": [5, -1]})"), {Shape{2, 3}}); },
               NNRT_ERR_SHAPE, {"reshape", "'test'", "[2, 3]", "[5, -1]"});
  expect_error([] { build_layer(Json::parse(R"({"type": "reshape", "shape": [4, 2]})"), {Shape{2, 3}}); },
               NNRT_ERR_SHAPE, {"reshape", "[2, 3]", "[4, 2]"});
  expect_error([] { build_layer(Json::parse(R"({"type": "reshape", "shape": [-1, -1]})"), {Shape{2, 3}}); },
               NNRT_ERR_INVALID_ARGUMENT, {"shape", "-1"});
  expect_error([] { build_layer(Json::parse(R"({"type": "reshape", "shape": [0, 6]})"), {Shape{2, 3}}); },
               NNRT_ERR_INVALID_ARGUMENT, {"shape"});
}

TEST(Add, RefusesShapesThatDiffer) {
  expect_error([] { build_layer(Json{{"type", "add"}}, {Shape{4}, Shape{3}}); }, NNRT_ERR_SHAPE,
               {"add", "'test'", "[4]", "[3]"});
  expect_error([] { build_layer(Json{{"type", "add"}}, {Shape{4}}); }, NNRT_ERR_SHAPE, {"two or more"});
}

TEST(Concat, JoinsAlongTheAxisAndRefusesOtherDimsThatDiffer) {
  EXPECT_EQ(build_layer(Json{{"type", "concat"}, {"axis", -2}}, {Shape{2, 3, 4}, Shape{2, 5, 4}}).out_shape,
            (Shape{2, 8, 4}));
  expect_error([] { build_layer(Json{{"type", "concat"}}, {Shape{2, 3, 4}, Shape{2, 3, 5}}); }, NNRT_ERR_SHAPE,
               {"concat", "[2, 3, 4]", "[2, 3, 5]"});
  expect_error([] { build_layer(Json{{"type", "concat"}, {"axis", 3}}, {Shape{2, 3, 4}, Shape{2, 3, 4}}); },
               NNRT_ERR_SHAPE, {"axis 3"});

  auto ctx = reference();
  BuiltLayer l = build_layer(Json{{"type", "concat"}, {"axis", 1}}, {Shape{2, 1}, Shape{2, 2}});
  Array a = from_doubles(*ctx, NNRT_DTYPE_F64, Shape{1, 2, 1}, {1, 2});
  Array b = from_doubles(*ctx, NNRT_DTYPE_F64, Shape{1, 2, 2}, {3, 4, 5, 6});
  EXPECT_EQ(ops::to_doubles(forward(*ctx, *l.layer, {a, b}, {}, false)), (vector<double>{1, 3, 4, 2, 5, 6}));
}

// ---- embedding ------------------------------------------------------------------------------

TEST(Embedding, LooksUpRowsFromIntegerOrFloatIndices) {
  auto ctx = reference();
  BuiltLayer e = build_layer(Json::parse(R"({"type": "embedding", "vocab": 5, "units": 2})"), {Shape{3}});
  EXPECT_EQ(e.out_shape, (Shape{3, 2}));
  vector<Array> params = make_params(*ctx, *e.layer, NNRT_DTYPE_F64, 1);
  vector<double> table = ops::to_doubles(params[0]);
  vector<double> idx = {4, 0, 2, 2, 1, 4};
  vector<double> want;
  for (double i : idx) want.insert(want.end(), {table[2 * int(i)], table[2 * int(i) + 1]});
  for (nnrt_dtype dtype : {NNRT_DTYPE_I64, NNRT_DTYPE_I32, NNRT_DTYPE_F64, NNRT_DTYPE_F32}) {
    Array y = forward(*ctx, *e.layer, {from_doubles(*ctx, dtype, Shape{2, 3}, idx)}, params, false);
    EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
    EXPECT_EQ(ops::to_doubles(y), want) << "indices as dtype " << dtype;
  }
}

TEST(Embedding, RefusesAnIndexOutsideTheVocabularyNamingIt) {
  auto ctx = reference();
  BuiltLayer e = build_layer(Json::parse(R"({"type": "embedding", "vocab": 5, "units": 2})"), {Shape{3}});
  vector<Array> params = make_params(*ctx, *e.layer, NNRT_DTYPE_F64, 1);
  for (double bad : {5.0, 17.0, -1.0}) {
    Array idx = from_doubles(*ctx, NNRT_DTYPE_F64, Shape{1, 3}, {0, bad, 1});
    std::string value = std::to_string(static_cast<int>(bad));
    expect_error([&] { forward(*ctx, *e.layer, {idx}, params, false); }, NNRT_ERR_INVALID_ARGUMENT,
                 {"embedding", "'test'", value, "5"});
  }
}

// ---- lstm -----------------------------------------------------------------------------------

// PyTorch's nn.LSTM (one layer, batch_first, zero initial state) on the host.
vector<double> lstm_on_host(const vector<double> &x, int64_t n, int64_t steps, int64_t features, int64_t h,
                            const vector<vector<double>> &p, bool sequences) {
  const vector<double> &w_ih = p[0], &w_hh = p[1], &b_ih = p[2], &b_hh = p[3];
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  vector<double> out;
  for (int64_t i = 0; i < n; ++i) {
    vector<double> hs(h, 0), cs(h, 0);
    for (int64_t t = 0; t < steps; ++t) {
      vector<double> z(4 * h);
      for (int64_t r = 0; r < 4 * h; ++r) {
        z[r] = b_ih[r] + b_hh[r];
        for (int64_t f = 0; f < features; ++f) z[r] += w_ih[r * features + f] * x[(i * steps + t) * features + f];
        for (int64_t j = 0; j < h; ++j) z[r] += w_hh[r * h + j] * hs[j];
      }
      for (int64_t j = 0; j < h; ++j) {
        double in = sigmoid(z[j]), forget = sigmoid(z[h + j]), cell = std::tanh(z[2 * h + j]),
               o = sigmoid(z[3 * h + j]);
        cs[j] = forget * cs[j] + in * cell;
        hs[j] = o * std::tanh(cs[j]);
      }
      if (sequences || t == steps - 1) out.insert(out.end(), hs.begin(), hs.end());
    }
  }
  return out;
}

TEST(Lstm, FollowsPyTorchsEquationsAndLayout) {
  auto ctx = reference();
  for (bool sequences : {false, true}) {
    Json config = {{"type", "lstm"}, {"units", 3}, {"return_sequences", sequences}};
    BuiltLayer l = build_layer(config, {Shape{4, 2}});
    EXPECT_EQ(l.out_shape, sequences ? (Shape{4, 3}) : (Shape{3}));
    vector<ParamSpec> specs = l.layer->param_specs();
    ASSERT_EQ(specs.size(), 4u);
    EXPECT_EQ(specs[0].suffix, "weight_ih_l0");
    EXPECT_EQ(specs[0].shape, (Shape{12, 2}));
    EXPECT_EQ(specs[1].suffix, "weight_hh_l0");
    EXPECT_EQ(specs[1].shape, (Shape{12, 3}));
    EXPECT_EQ(specs[2].suffix, "bias_ih_l0");
    EXPECT_EQ(specs[3].suffix, "bias_hh_l0");
    for (const ParamSpec &s : specs) {  // PyTorch's default: uniform in +-1/sqrt(units)
      EXPECT_EQ(s.init.kind, Init::kUniform);
      EXPECT_DOUBLE_EQ(s.init.b, 1 / std::sqrt(3.0));
    }

    vector<Array> params = make_params(*ctx, *l.layer, NNRT_DTYPE_F64, 3);
    Array x = random_normal(*ctx, NNRT_DTYPE_F64, Shape{2, 4, 2}, 4);
    vector<vector<double>> p;
    for (const Array &a : params) p.push_back(ops::to_doubles(a));
    vector<double> want = lstm_on_host(ops::to_doubles(x), 2, 4, 2, 3, p, sequences);
    Array y = forward(*ctx, *l.layer, {x}, params, false);
    EXPECT_EQ(y.shape(), with_batch(2, l.out_shape));
    EXPECT_LT(relative_error(ops::to_doubles(y), want), 1e-12);
  }
}

TEST(Lstm, InitSetsTheWeightsOnly) {
  BuiltLayer l = build_layer(Json::parse(R"({"type": "lstm", "units": 4, "init": "zeros"})"), {Shape{2, 3}});
  vector<ParamSpec> specs = l.layer->param_specs();
  EXPECT_EQ(specs[0].init.kind, Init::kZeros);
  EXPECT_EQ(specs[1].init.kind, Init::kZeros);
  EXPECT_EQ(specs[2].init.kind, Init::kUniform);
  expect_error([] { build_layer(Json{{"type", "lstm"}, {"units", 2}}, {Shape{3}}); }, NNRT_ERR_SHAPE,
               {"lstm", "[time, features]", "[3]"});
}

}  // namespace
}  // namespace nnrt::model::testing
