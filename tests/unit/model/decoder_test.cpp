// Generation (model/decoder.h, sampler.h, generate.h): the key/value-cached path against the full
// forward pass at every step, greedy generation against the argmax of Model::predict, sampling's
// seeds and top-k, and the models the cached path must refuse. On the reference backend and on
// oneDNN where its plugin is built (one that is built but does not open fails).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "backend/ops.h"
#include "backend_fixture.h"
#include "layer_check.h"
#include "model/decoder.h"
#include "model/generate.h"
#include "model/sampler.h"

namespace nnrt::model::testing {
namespace {

// examples/gpt.json's shape, small: T 12, V 20, two pre-norm blocks.
std::string gpt(const std::string &position = "{}", const std::string &norm = "rms_norm", const std::string &attention = R"("causal": true)") {
  return R"({"input": [12], "seed": 3, "nodes": [
    {"name": "emb", "type": "embedding", "inputs": ["input"], "vocab": 20, "units": 16},
    {"name": "pos", "type": "position_embedding", "inputs": ["emb"])" + (position == "{}" ? "" : ", " + position) + R"(},
    {"name": "n1", "type": ")" + norm + R"(", "inputs": ["pos"]},
    {"name": "att1", "type": "multi_head_attention", "inputs": ["n1"], "heads": 2, )" + attention + R"(},
    {"name": "r1", "type": "add", "inputs": ["pos", "att1"]},
    {"name": "n2", "type": ")" + norm + R"(", "inputs": ["r1"]},
    {"name": "up", "type": "dense", "inputs": ["n2"], "units": 32, "flatten": false, "activation": "gelu"},
    {"name": "drop", "type": "dropout", "inputs": ["up"], "rate": 0.1},
    {"name": "down", "type": "dense", "inputs": ["drop"], "units": 16, "flatten": false},
    {"name": "r2", "type": "add", "inputs": ["r1", "down"]},
    {"name": "att2", "type": "multi_head_attention", "inputs": ["r2"], "heads": 4, )" + attention + R"(},
    {"name": "r3", "type": "add", "inputs": ["r2", "att2"]},
    {"name": "act", "type": "activation", "inputs": ["r3"], "activation": "tanh"},
    {"name": "out", "type": "output", "inputs": ["act"], "units": 20, "loss": "nll", "flatten": false}],
    "outputs": ["out"]})";
}

std::shared_ptr<Model> build(const std::shared_ptr<Context> &ctx, const std::string &config) {
  auto m = Model::create(ctx, Json::parse(config));
  // Larger weights than the initialisers give, so that the scores differ clearly between tokens
  // and positions (near-uniform scores would make greedy choices ties of rounding). Written under
  // the model's lock, as every write to parameters is: its release tells the backends' kept copies
  // of the weights (the build ran a prediction) that they changed.
  auto writing = m->lock_for_writing();
  for (Param &p : m->params()) {
    if (p.spec.suffix == "weight" && p.value.rank() == 2) {
      ops::copy_into(*ctx, ops::scale(*ctx, p.value, 3.0), p.value);
    }
  }
  writing.unlock();
  return m;
}

// |a - b| <= 5e-5 of the largest |b|: relative to the scores' scale. A step and the full pass
// give the attention op different numbers of query rows (1 against the window), and oneDNN's GEMM
// sums those shapes in different orders; the tripled weights make that rounding reach the scores
// at about 1.1e-5 of their scale (seen on oneDNN 2.6, AVX2).
void expect_close(const std::vector<double> &a, const std::vector<double> &b, const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  double scale = 0;
  for (double v : b) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 5e-5 * scale) << what << ", token " << i;
}

using DecoderTest = PerBackend;

// At every step the cached scores equal the recomputed window's, which equal predict's (after its
// softmax) at that position: the prompt in one pass, a second part of a prompt (several new
// positions after cached ones), then one token at a time to the end of the window.
TEST_P(DecoderTest, CachedScoresEqualTheFullPassAtEveryPosition) {
  for (const std::string &config : {gpt(), gpt(R"("sinusoidal": true)", "layer_norm")}) {
    auto m = build(ctx_, config);
    Decoder cached(*m, true), full(*m, false);
    const std::vector<int64_t> sequence = {3, 17, 0, 9, 9, 12, 5, 19, 1, 7, 4, 11};
    std::vector<std::pair<int64_t, int64_t>> feeds = {{0, 4}, {4, 2}};  // (start, count)
    for (int64_t i = 6; i < 12; ++i) feeds.push_back({i, 1});
    for (auto [start, count] : feeds) {
      std::vector<double> a = cached.append(sequence.data() + start, count);
      std::vector<double> b = full.append(sequence.data() + start, count);
      const int64_t pos = start + count - 1;
      expect_close(a, b, "position " + std::to_string(pos));
      // The recomputed scores are predict's logits: their softmax is its output at that position.
      std::vector<int64_t> window(12, 0);
      std::copy(sequence.begin(), sequence.begin() + pos + 1, window.begin());
      Array x = ops::cast(*ctx_, ops::from_host(*ctx_, NNRT_DTYPE_I64, Shape{1, 12}, window.data(), 12 * 8), NNRT_DTYPE_F32);
      std::vector<double> p = ops::to_doubles(ops::contiguous(*ctx_, m->predict(x).slice(1, pos, 1)));
      double top = *std::max_element(b.begin(), b.end()), sum = 0;
      for (double v : b) sum += std::exp(v - top);
      for (size_t k = 0; k < b.size(); ++k) EXPECT_NEAR(std::exp(b[k] - top) / sum, p[k], 1e-5) << "position " << pos;
    }
  }
}

// Greedy generation gives the argmax of predict, recomputed over the whole sequence, at each
// step (within the window), and the same tokens with and without the cache across slides.
TEST_P(DecoderTest, GreedyIsTheArgmaxOfTheFullPass) {
  auto m = build(ctx_, gpt());
  const std::vector<int64_t> prompt = {4, 8, 15};
  GenerateOptions o;
  std::vector<int64_t> tokens = generate(*m, prompt, 9, o, nullptr);
  ASSERT_EQ(tokens.size(), 9u);
  std::vector<int64_t> sequence = prompt;
  for (int64_t token : tokens) {
    std::vector<int64_t> window(12, 0);
    std::copy(sequence.begin(), sequence.end(), window.begin());
    Array x = ops::cast(*ctx_, ops::from_host(*ctx_, NNRT_DTYPE_I64, Shape{1, 12}, window.data(), 12 * 8), NNRT_DTYPE_F32);
    std::vector<double> p =
        ops::to_doubles(ops::contiguous(*ctx_, m->predict(x).slice(1, static_cast<int64_t>(sequence.size()) - 1, 1)));
    EXPECT_EQ(token, std::max_element(p.begin(), p.end()) - p.begin()) << "after " << sequence.size() << " tokens";
    sequence.push_back(token);
  }
  // 30 tokens slide the 12-token window several times; both paths see the same windows.
  std::vector<int64_t> cached = generate(*m, prompt, 30, o, nullptr);
  o.cache = false;
  EXPECT_EQ(cached, generate(*m, prompt, 30, o, nullptr));
  std::set<int64_t> distinct(cached.begin(), cached.end());
  EXPECT_GT(distinct.size(), 1u) << "a constant sequence would not show much";
}

TEST_P(DecoderTest, SamplingFollowsTheSeed) {
  auto m = build(ctx_, gpt());
  const std::vector<int64_t> prompt = {1, 2};
  GenerateOptions o;
  o.temperature = 1.0;
  o.seed = 11;
  std::vector<int64_t> a = generate(*m, prompt, 40, o, nullptr), b = generate(*m, prompt, 40, o, nullptr);
  EXPECT_EQ(a, b);
  o.cache = false;
  EXPECT_EQ(a, generate(*m, prompt, 40, o, nullptr)) << "the recomputed path draws the same tokens";
  o.cache = true;
  o.seed = 12;
  EXPECT_NE(a, generate(*m, prompt, 40, o, nullptr));
  // top_k 1 is greedy whatever the temperature.
  o.top_k = 1;
  GenerateOptions greedy;
  EXPECT_EQ(generate(*m, prompt, 20, o, nullptr), generate(*m, prompt, 20, greedy, nullptr));
}

TEST_P(DecoderTest, StopsOnAStopTokenTheCallbackOrAFullWindow) {
  auto m = build(ctx_, gpt());
  GenerateOptions o;
  std::vector<int64_t> all = generate(*m, {5}, 8, o, nullptr);
  o.stop = {all[3]};
  std::vector<int64_t> stopped = generate(*m, {5}, 8, o, nullptr);
  const size_t first = static_cast<size_t>(std::find(all.begin(), all.end(), all[3]) - all.begin());
  EXPECT_EQ(stopped, std::vector<int64_t>(all.begin(), all.begin() + first + 1));
  o.stop.clear();
  int seen = 0;
  EXPECT_EQ(generate(*m, {5}, 8, o, [&](int64_t) { return ++seen == 2; }).size(), 2u);
  o.when_full = GenerateOptions::WhenFull::kStop;
  // 10 prompt tokens fill 10 of 12 positions: 2 more can be fed, so 3 tokens come out.
  EXPECT_EQ(generate(*m, std::vector<int64_t>(10, 1), 8, o, nullptr).size(), 3u);
  o.when_full = GenerateOptions::WhenFull::kError;
  EXPECT_EQ(generate(*m, std::vector<int64_t>(10, 1), 3, o, nullptr).size(), 3u);
  try {
    generate(*m, std::vector<int64_t>(10, 1), 4, o, nullptr);
    ADD_FAILURE() << "13 positions in a window of 12 were accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), NNRT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("13 positions"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, DecoderTest, ::testing::Values("reference", "onednn"),
                         [](const auto &info) { return info.param; });

// Models the cached path refuses, naming the layer and why; "cache": false runs them.
TEST(DecoderRefusals, LayersWithoutAnIncrementalPathAreNamed) {
  auto ctx = make_context("reference");
  ASSERT_NE(ctx, nullptr);
  // examples/gpt_decoder.json's ending: the last position sliced out and flattened.
  const std::string sliced = R"({"input": [6], "seed": 1, "nodes": [
    {"name": "emb", "type": "embedding", "inputs": ["input"], "vocab": 10, "units": 8},
    {"name": "att", "type": "multi_head_attention", "inputs": ["emb"], "heads": 2, "causal": true},
    {"name": "last", "type": "slice", "inputs": ["att"], "axis": 0, "start": 5},
    {"name": "flat", "type": "flatten", "inputs": ["last"]},
    {"name": "out", "type": "output", "inputs": ["flat"], "units": 10, "loss": "nll"}]})";
  const std::string softmax_layer = R"({"input": [6], "seed": 1, "nodes": [
    {"name": "emb", "type": "embedding", "inputs": ["input"], "vocab": 10, "units": 10},
    {"name": "probs", "type": "activation", "inputs": ["emb"], "activation": "softmax"}]})";
  struct Case {
    std::string config, layer, why;
    nnrt_status cached, full;  // the Decoder's refusal with and without the cache (OK: runs)
  };
  const Case cases[] = {
      {gpt("{}", "rms_norm", R"("causal": false)"), "multi_head_attention 'att1'", "\"causal\": true", NNRT_ERR_UNSUPPORTED,
       NNRT_OK},
      {softmax_layer, "activation 'probs'", "softmax runs across the positions", NNRT_ERR_UNSUPPORTED, NNRT_OK},
      // Not a token model at all: one prediction per window, not scores per position.
      {sliced, "output 'out'", "[6, V]", NNRT_ERR_INVALID_ARGUMENT, NNRT_ERR_INVALID_ARGUMENT},
  };
  for (const Case &c : cases) {
    auto m = build(ctx, c.config);
    for (bool cached : {true, false}) {
      nnrt_status expected = cached ? c.cached : c.full;
      try {
        Decoder d(*m, cached);
        EXPECT_EQ(expected, NNRT_OK) << c.layer << ", cached " << cached << ": accepted";
      } catch (const Error &e) {
        EXPECT_EQ(e.status(), expected) << e.what();
        EXPECT_NE(std::string(e.what()).find(c.layer), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(c.why), std::string::npos) << e.what();
      }
    }
  }
}

// The sampler alone: top-k keeps the k highest, a tiny temperature is greedy, ties go to the lower id.
TEST(TokenSampler, TopKTemperatureAndTies) {
  const std::vector<double> scores = {0.5, 2.0, -1.0, 1.9, 1.8, 0.0};
  TokenSampler top3(1.0, 3, 7);
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) seen.insert(top3.next(scores));
  EXPECT_EQ(seen, (std::set<int64_t>{1, 3, 4}));
  TokenSampler cold(1e-6, 0, 7);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(cold.next(scores), 1);
  TokenSampler greedy(0, 0, 7);
  EXPECT_EQ(greedy.next({1.0, 3.0, 3.0}), 1);
  EXPECT_THROW(greedy.next({1.0, std::nan("")}), Error);
}

}  // namespace
}  // namespace nnrt::model::testing
