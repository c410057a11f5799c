// Models through the public C API: parameter names and layouts as nnrt.h gives them, the errors
// nnrt_model_create reports for configs that do not fit, and predict from many threads at once.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "lenet_example.h"
#include "nnrt/nnrt.h"

namespace {

using Json = nlohmann::json;

// The LeNet of examples/lenet.json, embedded by the build.
const char *kLeNet = NNRT_LENET_CONFIG;

class ModelApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(nnrt_context_create(R"({"backend": "reference"})", &ctx), NNRT_OK) << nnrt_last_error();
  }
  void TearDown() override { nnrt_context_release(ctx); }

  // Creates a model, expecting success.
  nnrt_model *create(const char *config) {
    nnrt_model *m = nullptr;
    EXPECT_EQ(nnrt_model_create(ctx, config, &m), NNRT_OK) << nnrt_last_error();
    return m;
  }

  // Expects nnrt_model_create to fail with `status` and a message holding every one of `parts`.
  void expect_refused(const std::string &config, nnrt_status status, const std::vector<std::string> &parts) {
    nnrt_model *m = nullptr;
    EXPECT_EQ(nnrt_model_create(ctx, config.c_str(), &m), status) << config;
    EXPECT_EQ(m, nullptr);
    std::string message = nnrt_last_error();
    for (const std::string &p : parts) EXPECT_NE(message.find(p), std::string::npos) << message;
  }

  std::vector<int64_t> param_shape(nnrt_model *m, const char *name) {
    nnrt_array *a = nullptr;
    if (nnrt_model_get_param(m, name, &a) != NNRT_OK) {
      ADD_FAILURE() << name << ": " << nnrt_last_error();
      return {};
    }
    int32_t ndim = 0;
    int64_t shape[NNRT_MAX_DIMS];
    EXPECT_EQ(nnrt_array_info(a, nullptr, &ndim, shape), NNRT_OK);
    nnrt_array_release(a);
    return std::vector<int64_t>(shape, shape + ndim);
  }

  Json summary(nnrt_model *m) {
    size_t len = 0;
    EXPECT_EQ(nnrt_model_summary(m, nullptr, 0, &len), NNRT_OK);
    std::string s(len + 1, '\0');
    EXPECT_EQ(nnrt_model_summary(m, s.data(), s.size(), &len), NNRT_OK);
    s.resize(len);
    return Json::parse(s);
  }

  nnrt_context *ctx = nullptr;
};

TEST_F(ModelApi, LeNetParametersHavePyTorchsNamesAndLayouts) {
  nnrt_model *m = create(kLeNet);
  ASSERT_NE(m, nullptr);
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(param_shape(m, "conv1.weight"), (Shape{20, 1, 5, 5}));
  EXPECT_EQ(param_shape(m, "conv1.bias"), (Shape{20}));
  EXPECT_EQ(param_shape(m, "conv2.weight"), (Shape{50, 20, 5, 5}));
  EXPECT_EQ(param_shape(m, "conv2.bias"), (Shape{50}));
  EXPECT_EQ(param_shape(m, "fc1.weight"), (Shape{200, 200}));  // 50 x 2 x 2 features in
  EXPECT_EQ(param_shape(m, "fc1.bias"), (Shape{200}));
  EXPECT_EQ(param_shape(m, "out.weight"), (Shape{10, 200}));
  EXPECT_EQ(param_shape(m, "out.bias"), (Shape{10}));
  int64_t count = 0;
  EXPECT_EQ(nnrt_model_param_count(m, &count), NNRT_OK);
  EXPECT_EQ(count, 520 + 25050 + 40200 + 2010);

  Json s = summary(m);
  EXPECT_EQ(s["total_params"], count);
  EXPECT_EQ(s["layers"][3]["output_shape"], Json({50, 2, 2}));
  EXPECT_EQ(s["layers"][5]["output_shape"], Json({10}));
  nnrt_array *missing = nullptr;
  EXPECT_EQ(nnrt_model_get_param(m, "pool1.weight", &missing), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nnrt_last_error()).find("conv1.weight"), std::string::npos);  // lists the names
  nnrt_model_release(m);
}

TEST_F(ModelApi, StateAndSequenceParametersAreNamedAsInPyTorch) {
  nnrt_model *m = create(R"({"input": [6], "nodes": [
      {"name": "emb", "type": "embedding", "vocab": 10, "units": 4, "inputs": ["input"]},
      {"name": "rnn", "type": "lstm", "units": 3, "inputs": ["emb"]},
      {"name": "bn", "type": "batchnorm", "inputs": ["rnn"]},
      {"name": "out", "type": "output", "units": 2, "loss": "nll", "inputs": ["bn"]}]})");
  ASSERT_NE(m, nullptr);
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(param_shape(m, "emb.weight"), (Shape{10, 4}));
  EXPECT_EQ(param_shape(m, "rnn.weight_ih_l0"), (Shape{12, 4}));
  EXPECT_EQ(param_shape(m, "rnn.weight_hh_l0"), (Shape{12, 3}));
  EXPECT_EQ(param_shape(m, "rnn.bias_ih_l0"), (Shape{12}));
  EXPECT_EQ(param_shape(m, "rnn.bias_hh_l0"), (Shape{12}));
  for (const char *name : {"bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"})
    EXPECT_EQ(param_shape(m, name), (Shape{3})) << name;
  Json s = summary(m);
  int64_t trainable = s["trainable_params"], total = s["total_params"];
  EXPECT_EQ(total - trainable, 6);  // the running statistics
  nnrt_model_release(m);
}

TEST_F(ModelApi, ShapeMismatchNamesTheLayerAndBothShapes) {
  expect_refused(R"({"input": [5], "nodes": [
      {"name": "left", "type": "dense", "units": 3, "inputs": ["input"]},
      {"name": "right", "type": "dense", "units": 4, "inputs": ["input"]},
      {"name": "sum", "type": "add", "inputs": ["left", "right"]}]})",
                 NNRT_ERR_SHAPE, {"add", "sum", "[3]", "[4]"});
  expect_refused(R"({"input": [2, 3], "layers": [{"type": "reshape", "name": "r", "shape": [4, -1]}]})",
                 NNRT_ERR_SHAPE, {"reshape", "'r'", "[2, 3]", "[4, -1]"});
  expect_refused(R"({"input": [1, 4, 4], "nodes": [
      {"name": "a", "type": "conv2d", "filters": 2, "kernel": 3, "inputs": ["input"]},
      {"name": "b", "type": "conv2d", "filters": 2, "kernel": 1, "inputs": ["input"]},
      {"name": "cat", "type": "concat", "inputs": ["a", "b"]}]})",
                 NNRT_ERR_SHAPE, {"concat", "cat", "[2, 2, 2]", "[2, 4, 4]"});
  expect_refused(R"({"input": [8], "layers": [{"type": "lstm", "units": 2}]})", NNRT_ERR_SHAPE,
                 {"lstm", "[8]"});
}

TEST_F(ModelApi, UnknownTypesAndKeysAreNamed) {
  expect_refused(R"({"input": [3], "layers": [{"type": "dens", "units": 2}]})", NNRT_ERR_INVALID_ARGUMENT, {"dens"});
  expect_refused(R"({"input": [3], "layers": [{"type": "dense", "units": 2, "activaton": "relu"}]})",
                 NNRT_ERR_INVALID_ARGUMENT, {"activaton"});
  expect_refused(R"({"input": [3, 2], "layers": [{"type": "lstm", "units": 2, "return_sequence": true}]})",
                 NNRT_ERR_INVALID_ARGUMENT, {"return_sequence"});
  expect_refused(R"({"input": [3], "layers": [{"type": "dropout", "rate": 0.5, "p": 0.5}]})",
                 NNRT_ERR_INVALID_ARGUMENT, {"p"});
  expect_refused(R"({"input": [3], "layers": [{"type": "batchnorm", "momentum": "fast"}]})",
                 NNRT_ERR_INVALID_ARGUMENT, {"momentum"});
  expect_refused(R"({"input": [3], "layers": [{"type": "embedding", "units": 2}]})", NNRT_ERR_INVALID_ARGUMENT,
                 {"vocab"});
}

TEST_F(ModelApi, SetParamChangesWhatPredictComputes) {
  nnrt_model *m = create(R"({"input": [2], "layers": [{"type": "dense", "units": 1}]})");
  ASSERT_NE(m, nullptr);
  int64_t wshape[2] = {1, 2}, bshape[1] = {1}, xshape[2] = {1, 2};
  float w[2] = {2, -1}, b[1] = {0.5f}, x[2] = {3, 4};
  nnrt_array *wa = nullptr, *ba = nullptr, *xa = nullptr, *y = nullptr;
  ASSERT_EQ(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, wshape, w, sizeof w, &wa), NNRT_OK);
  ASSERT_EQ(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, bshape, b, sizeof b, &ba), NNRT_OK);
  ASSERT_EQ(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xshape, x, sizeof x, &xa), NNRT_OK);
  EXPECT_EQ(nnrt_model_set_param(m, "layer0.weight", wa), NNRT_OK) << nnrt_last_error();
  EXPECT_EQ(nnrt_model_set_param(m, "layer0.bias", ba), NNRT_OK) << nnrt_last_error();
  ASSERT_EQ(nnrt_model_predict(m, xa, &y), NNRT_OK) << nnrt_last_error();
  float got = 0;
  EXPECT_EQ(nnrt_array_to_host(y, &got, sizeof got), NNRT_OK);
  EXPECT_FLOAT_EQ(got, 2 * 3 - 4 + 0.5f);
  EXPECT_EQ(nnrt_model_set_param(m, "layer0.weight", ba), NNRT_ERR_SHAPE);  // [1] into [1, 2]
  for (nnrt_array *a : {wa, ba, xa, y}) nnrt_array_release(a);
  nnrt_model_release(m);
}

// A weight matrix with rows of 1 KB ([64, 256] F32) is stored with padded rows on a host-memory
// backend (model/param_storage.h). Nothing outside may see it: set_param, get_param, predict,
// nnrt_model_save / nnrt_model_load and ONNX export / import all give and take dense row-major values.
TEST_F(ModelApi, WideWeightMatrixReadsAndWritesAsDense) {
  const int64_t units = 64, in = 256, n = 3;
  nnrt_model *m = create(R"({"input": [256], "layers": [{"type": "dense", "units": 64}]})");
  ASSERT_NE(m, nullptr);
  std::vector<float> w(units * in), b(units), x(n * in);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) / 64.0f;
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 11) % 23) / 11.0f - 1.0f;
  int64_t wshape[2] = {units, in}, bshape[1] = {units}, xshape[2] = {n, in};
  nnrt_array *wa = nullptr, *ba = nullptr, *xa = nullptr;
  ASSERT_EQ(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, wshape, w.data(), w.size() * 4, &wa), NNRT_OK);
  ASSERT_EQ(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, bshape, b.data(), b.size() * 4, &ba), NNRT_OK);
  ASSERT_EQ(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xshape, x.data(), x.size() * 4, &xa), NNRT_OK);
  ASSERT_EQ(nnrt_model_set_param(m, "layer0.weight", wa), NNRT_OK) << nnrt_last_error();
  ASSERT_EQ(nnrt_model_set_param(m, "layer0.bias", ba), NNRT_OK) << nnrt_last_error();

  // `count` values of an array a call made (status st), which this releases; zeros if it failed.
  auto taken = [](nnrt_status st, nnrt_array *a, size_t count) {
    std::vector<float> got(count);
    EXPECT_EQ(st, NNRT_OK) << nnrt_last_error();
    if (a) {
      EXPECT_EQ(nnrt_array_to_host(a, got.data(), got.size() * 4), NNRT_OK);
    }
    nnrt_array_release(a);
    return got;
  };
  auto weights_of = [&](nnrt_model *model, const char *name = "layer0.weight") {
    nnrt_array *a = nullptr;
    const nnrt_status st = nnrt_model_get_param(model, name, &a);
    return taken(st, a, w.size());
  };
  auto predict = [&](nnrt_model *model) {
    nnrt_array *y = nullptr;
    const nnrt_status st = nnrt_model_predict(model, xa, &y);
    return taken(st, y, static_cast<size_t>(n * units));
  };
  EXPECT_EQ(weights_of(m), w);
  const std::vector<float> y = predict(m);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t u = 0; u < units; ++u) {
      double want = b[u];
      for (int64_t k = 0; k < in; ++k) want += static_cast<double>(x[r * in + k]) * w[u * in + k];
      EXPECT_NEAR(y[r * units + u], want, 1e-4 * (1 + std::fabs(want))) << "row " << r << " unit " << u;
    }

  const std::string path = ::testing::TempDir() + "model_api_wide_weights.safetensors";
  ASSERT_EQ(nnrt_model_save(m, path.c_str()), NNRT_OK) << nnrt_last_error();
  nnrt_model *loaded = nullptr;
  ASSERT_EQ(nnrt_model_load(ctx, path.c_str(), &loaded), NNRT_OK) << nnrt_last_error();
  EXPECT_EQ(weights_of(loaded), w);
  EXPECT_EQ(predict(loaded), y);
  nnrt_model_release(loaded);

  const std::string onnx = ::testing::TempDir() + "model_api_wide_weights.onnx";
  const nnrt_status exported = nnrt_model_export_onnx(m, onnx.c_str());
  if (exported == NNRT_OK) {
    nnrt_model *imported = nullptr;
    ASSERT_EQ(nnrt_model_import_onnx(ctx, onnx.c_str(), nullptr, &imported), NNRT_OK) << nnrt_last_error();
    EXPECT_EQ(weights_of(imported, "output.weight"), w);  // the importer names the last dense "output"
    nnrt_model_release(imported);
  } else {  // no ONNX converter in this build, and for no other reason: the checkpoint round trip above stands
    EXPECT_EQ(exported, NNRT_ERR_UNSUPPORTED) << nnrt_last_error();
  }
  for (nnrt_array *a : {wa, ba, xa}) nnrt_array_release(a);
  nnrt_model_release(m);
}

TEST_F(ModelApi, PredictFromEightThreadsGivesIdenticalResults) {
  nnrt_model *m = create(R"({"input": [1, 12, 12], "seed": 7, "layers": [
      {"type": "conv2d", "filters": 4, "kernel": 3, "activation": "relu"},
      {"type": "batchnorm"},
      {"type": "maxpool2d", "kernel": 2},
      {"type": "dropout", "rate": 0.5},
      {"type": "dense", "units": 16, "activation": "tanh"},
      {"type": "output", "units": 10, "loss": "nll"}]})");
  ASSERT_NE(m, nullptr);
  const int64_t n = 4;
  int64_t shape[4] = {n, 1, 12, 12};
  std::vector<float> x(n * 144);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  nnrt_array *input = nullptr;
  ASSERT_EQ(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 4, shape, x.data(), x.size() * 4, &input), NNRT_OK);

  auto predict = [&](std::vector<float> &out) {
    nnrt_array *y = nullptr;
    if (nnrt_model_predict(m, input, &y) != NNRT_OK) return false;
    out.assign(n * 10, 0);
    bool ok = nnrt_array_to_host(y, out.data(), out.size() * 4) == NNRT_OK;
    nnrt_array_release(y);
    return ok;
  };
  std::vector<float> want;
  ASSERT_TRUE(predict(want)) << nnrt_last_error();

  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        std::vector<float> got;
        if (!predict(got) || got != want) ++mismatches[t];
      }
    });
  }
  for (std::thread &t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(8, 0));
  nnrt_array_release(input);
  nnrt_model_release(m);
}

}  // namespace
