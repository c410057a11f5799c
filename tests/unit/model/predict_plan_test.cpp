// Prediction plans (src/model/predict_plan.h): Model::predict replays a plan recorded from the
// ordinary pass; its results must be bit-identical to Model::predict_unplanned (same backend, same
// threads) for LeNet, an MLP and a graph model, across input shapes, after set_param, training
// steps and a checkpoint load, and from several threads at once. Runs on the reference backend and
// on oneDNN where its plugin is built. Also: the weights' versions the host gives the oneDNN plugin.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "backend/ops.h"
#include "backend_fixture.h"
#include "layer_check.h"
#include "lenet_example.h"
#include "model/model.h"
#include "train/trainer.h"

namespace nnrt::model::testing {
namespace {

const char *const kMlp = R"({"input": [1, 28, 28], "seed": 5, "layers": [
  {"type": "flatten"},
  {"type": "dense", "units": 64, "activation": "relu"},
  {"type": "dense", "units": 32, "activation": "tanh"},
  {"type": "output", "units": 10, "activation": "softmax", "loss": "nll"}]})";

// A residual add, a concatenation, a node read by two others, batchnorm and a separate activation.
const char *const kGraph = R"({"input": [3, 8, 8], "seed": 9, "nodes": [
  {"name": "c1", "type": "conv2d", "inputs": ["input"], "filters": 4, "kernel": 3, "padding": "same"},
  {"name": "bn", "type": "batchnorm", "inputs": ["c1"]},
  {"name": "act", "type": "activation", "inputs": ["bn"], "activation": "relu"},
  {"name": "c2", "type": "conv2d", "inputs": ["act"], "filters": 4, "kernel": 3, "padding": "same", "activation": "relu"},
  {"name": "sum", "type": "add", "inputs": ["act", "c2"]},
  {"name": "cat", "type": "concat", "inputs": ["sum", "act"]},
  {"name": "pool", "type": "avgpool2d", "inputs": ["cat"], "kernel": 2},
  {"name": "flat", "type": "flatten", "inputs": ["pool"]},
  {"name": "out", "type": "output", "inputs": ["flat"], "units": 5, "activation": "softmax", "loss": "nll"}]})";

struct ModelCase {
  const char *name, *config;
};

const ModelCase kModels[] = {{"lenet", NNRT_LENET_CONFIG}, {"mlp", kMlp}, {"graph", kGraph}};

Array random_batch(Context &ctx, const Model &m, int64_t n, uint64_t seed) {
  return ops::random(ctx, NNRT_RANDOM_NORMAL, NNRT_DTYPE_F32, with_batch(n, m.input_shapes()[0]), seed, 0, 0, 1);
}

std::vector<uint32_t> bits(const Array &a) {
  std::vector<float> v(static_cast<size_t>(a.numel()));
  a.copy_to_host(v.data(), v.size() * sizeof(float));
  std::vector<uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

// The planned prediction equals the unplanned one bit for bit, and is a fresh row-major array.
void expect_same(Model &m, const Array &x, const std::string &what) {
  Array planned = m.predict(x), again = m.predict(x), unplanned = m.predict_unplanned(x);
  ASSERT_EQ(planned.shape(), unplanned.shape()) << what;
  EXPECT_TRUE(planned.is_contiguous()) << what;
  EXPECT_NE(planned.data(), again.data()) << what << ": two predictions share their output";
  EXPECT_EQ(bits(planned), bits(unplanned)) << what;
  EXPECT_EQ(bits(again), bits(unplanned)) << what;
}

using PredictPlan = PerBackend;

// Two inputs (token ids and a key mask) and two outputs, one of them read by the layer that makes
// the other.
const char *const kTwoInputs = R"({"inputs": [{"name": "ids", "shape": [6]}, {"name": "mask", "shape": [6]}],
  "seed": 4, "nodes": [
  {"name": "emb", "type": "embedding", "inputs": ["ids"], "vocab": 9, "units": 8},
  {"name": "attn", "type": "multi_head_attention", "inputs": ["emb", "mask"], "heads": 2, "mask": "keep"},
  {"name": "norm", "type": "layer_norm", "inputs": ["attn"]},
  {"name": "out", "type": "output", "inputs": ["norm"], "units": 3, "activation": "softmax", "loss": "nll"}],
  "outputs": ["out", "norm"]})";

TEST_P(PredictPlan, SeveralInputsAndOutputs) {
  auto m = Model::create(ctx_, Json::parse(kTwoInputs));
  for (int64_t n : {2, 5, 2}) {
    Array ids = ops::cast(*ctx_, ops::scale(*ctx_, ops::random(*ctx_, NNRT_RANDOM_UNIFORM, NNRT_DTYPE_F32, Shape{n, 6}, n, 0, 0, 1), 8.99), NNRT_DTYPE_I64);
    Array mask = ops::cast(*ctx_, ops::scale(*ctx_, ops::random(*ctx_, NNRT_RANDOM_UNIFORM, NNRT_DTYPE_F32, Shape{n, 6}, 50 + n, 0, 0, 1), 1.99), NNRT_DTYPE_I64);
    std::vector<Array> planned = m->predict({ids, mask}), again = m->predict({ids, mask}),
                       unplanned = m->predict_unplanned(std::vector<Array>{ids, mask});
    ASSERT_EQ(planned.size(), 2u);
    for (size_t j = 0; j < 2; ++j) {
      EXPECT_EQ(planned[j].shape(), unplanned[j].shape()) << "batch " << n << " output " << j;
      EXPECT_EQ(bits(planned[j]), bits(unplanned[j])) << "batch " << n << " output " << j;
      EXPECT_EQ(bits(again[j]), bits(unplanned[j])) << "batch " << n << " output " << j;
    }
    EXPECT_NE(planned[0].data(), again[0].data());
  }
  // Building the model predicted one example of f32 zeros: a third layout.
  EXPECT_EQ(m->plan_count(), 3u) << "one plan per layout, each replayable";
  // The mask matters: all kept differs from this one.
  Array ids = ops::zeros(*ctx_, NNRT_DTYPE_F32, Shape{1, 6});
  Array some = ops::from_host(*ctx_, NNRT_DTYPE_F32, Shape{1, 6}, std::vector<float>{1, 1, 0, 1, 0, 1}.data(), 24);
  Array all = ops::full(*ctx_, NNRT_DTYPE_F32, Shape{1, 6}, 1);
  EXPECT_NE(bits(m->predict({ids, some})[0]), bits(m->predict({ids, all})[0]));
}

TEST_P(PredictPlan, MatchesTheUnplannedPassAcrossShapes) {
  for (const ModelCase &c : kModels) {
    auto m = Model::create(ctx_, Json::parse(c.config));
    for (int64_t n : {1, 3, 1, 17, 3}) expect_same(*m, random_batch(*ctx_, *m, n, 100 + n), cat(c.name, " batch ", n));
    EXPECT_EQ(m->plan_count(), 3u) << c.name << ": one plan per batch size, each replayable";
    // A slice of a larger batch has batch 3's layout at another offset: batch 3's plan serves it.
    Array big = random_batch(*ctx_, *m, 6, 7);
    expect_same(*m, big.slice(0, 2, 3), cat(c.name, " slice"));
    Shape s = m->input_shapes()[0];
    if (s.rank == 3) {
      std::vector<int64_t> perm = {0, 1, 3, 2};
      Array t = ops::transpose(random_batch(*ctx_, *m, 2, 8).reshaped_view(Shape{2, s[0], s[2], s[1]}), perm);
      expect_same(*m, t, cat(c.name, " transposed"));
    }
    // Input dtypes other than the compute dtype are converted inside the plan.
    Array x64 = ops::cast(*ctx_, random_batch(*ctx_, *m, 2, 9), NNRT_DTYPE_F64);
    expect_same(*m, x64, cat(c.name, " f64 input"));
    EXPECT_EQ(m->plan_count(), 5u) << c.name << ": batches 1, 3, 17, the transposed and the f64 input";
  }
}

TEST_P(PredictPlan, FollowsSetParamTrainingAndLoad) {
  for (const ModelCase &c : kModels) {
    auto m = Model::create(ctx_, Json::parse(c.config));
    Array x = random_batch(*ctx_, *m, 4, 11);
    expect_same(*m, x, cat(c.name, " before"));
    Array before = m->predict(x);

    // set_param writes the parameter in place.
    Param &p = m->params().front();
    {
      std::unique_lock<WriterPreferringSharedMutex> write(m->lock());
      ops::copy_into(*ctx_, ops::scale(*ctx_, p.value, 0.5), p.value);
    }
    expect_same(*m, x, cat(c.name, " after set_param"));
    EXPECT_NE(bits(m->predict(x)), bits(before)) << c.name << ": the plan kept the old weights";

    // A parameter replaced by an array of another layout (as a checkpoint restore may): replayed
    // plans must notice and record again.
    {
      std::unique_lock<WriterPreferringSharedMutex> write(m->lock());
      Array w = p.value;
      Array t = ops::contiguous(*ctx_, ops::transpose(w, {}));
      std::vector<int64_t> rev;
      for (int32_t i = w.rank() - 1; i >= 0; --i) rev.push_back(i);
      p.value = ops::transpose(t, rev);  // same values, reversed strides
      ASSERT_FALSE(p.value.is_contiguous() && w.rank() > 1);
    }
    expect_same(*m, x, cat(c.name, " after a parameter changed layout"));
    {
      std::unique_lock<WriterPreferringSharedMutex> write(m->lock());
      p.value = ops::contiguous(*ctx_, p.value);  // a new storage, the recorded layout again
    }
    expect_same(*m, x, cat(c.name, " after a parameter was replaced"));

    // Training steps update the parameters (and batchnorm statistics) in place.
    train::Trainer trainer(m, train::TrainerOptions::parse(R"({"optimizer": {"type": "adam", "learning_rate": 0.01}})", *ctx_));
    Array labels = ops::from_host(*ctx_, NNRT_DTYPE_I64, Shape{4}, std::vector<int64_t>{1, 0, 3, 2}.data(), 4 * sizeof(int64_t));
    Array planned_before = m->predict(x);
    for (int step = 0; step < 3; ++step) {
      trainer.step(x, labels);
      expect_same(*m, x, cat(c.name, " after training step ", step));
    }
    EXPECT_NE(bits(m->predict(x)), bits(planned_before)) << c.name << ": training did not change the prediction";

    // A saved and loaded model predicts exactly as the one saved.
    std::string path = ::testing::TempDir() + "predict_plan_" + c.name + ".safetensors";
    m->save(path);
    auto loaded = Model::load(ctx_, path);
    expect_same(*loaded, x, cat(c.name, " loaded"));
    EXPECT_EQ(bits(loaded->predict(x)), bits(m->predict(x))) << c.name << ": load";
  }
}

TEST_P(PredictPlan, ConcurrentPredictionsShareThePlan) {
  for (const ModelCase &c : kModels) {
    auto m = Model::create(ctx_, Json::parse(c.config));
    std::vector<Array> inputs;
    std::vector<std::vector<uint32_t>> expected;
    for (int64_t n : {1, 2, 5, 1}) {
      inputs.push_back(random_batch(*ctx_, *m, n, 40 + inputs.size()));
      expected.push_back(bits(m->predict_unplanned(inputs.back())));
    }
    std::vector<int> wrong(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 40; ++i) {
          size_t k = static_cast<size_t>(t + i) % inputs.size();
          if (bits(m->predict(inputs[k])) != expected[k]) ++wrong[t];
        }
      });
    }
    for (std::thread &th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(wrong[t], 0) << c.name << " thread " << t;
  }
}

// x's values in another context.
Array copy_to(Context &ctx, const Array &x) {
  std::vector<float> v(static_cast<size_t>(x.numel()));
  x.copy_to_host(v.data(), v.size() * sizeof(float));
  return ops::from_host(ctx, NNRT_DTYPE_F32, x.shape(), v.data(), v.size() * sizeof(float));
}

// Models of the same shapes share the backend's ops (one per descriptor), and a backend may keep
// what it derives from weights from call to call (oneDNN keeps its convolutions' weights
// reordered): each model must still predict with its own weights, and a weight written in place
// (a NaN too) must count at the next call. The oracle is the same model in a fresh context, whose
// ops have kept nothing.
TEST_P(PredictPlan, ModelsSharingOpsPredictWithTheirOwnWeights) {
  auto a = Model::create(ctx_, Json::parse(NNRT_LENET_CONFIG));
  auto b = Model::create(ctx_, Json::parse(NNRT_LENET_CONFIG));
  {
    std::unique_lock<WriterPreferringSharedMutex> write(b->lock());
    for (Param &p : b->params()) ops::copy_into(*ctx_, ops::scale(*ctx_, p.value, -0.75), p.value);
  }
  Array x = random_batch(*ctx_, *a, 2, 21);
  const std::string path = ::testing::TempDir() + "predict_plan_shared_ops.safetensors";
  auto fresh = [&](const Model &m) {
    m.save(path);
    std::shared_ptr<Context> ctx = make_context(GetParam());
    return bits(Model::load(ctx, path)->predict(copy_to(*ctx, x)));
  };
  const std::vector<uint32_t> want_a = fresh(*a), want_b = fresh(*b);
  ASSERT_NE(want_a, want_b);
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(bits(a->predict(x)), want_a) << "round " << round;
    EXPECT_EQ(bits(b->predict(x)), want_b) << "round " << round;
  }

  // A NaN written in place into the second convolution's weights.
  Param *w = nullptr;
  for (Param &p : b->params())
    if (p.name == "conv2.weight") w = &p;
  ASSERT_NE(w, nullptr);
  {
    std::unique_lock<WriterPreferringSharedMutex> write(b->lock());
    std::vector<float> v(static_cast<size_t>(w->value.numel()));
    w->value.copy_to_host(v.data(), v.size() * sizeof(float));
    v[7] = std::nanf("");
    w->value.copy_from_host(v.data(), v.size() * sizeof(float));
  }
  const std::vector<uint32_t> want_nan = fresh(*b);
  EXPECT_EQ(bits(b->predict(x)), want_nan);
  EXPECT_NE(bits(b->predict(x)), want_b) << "the prediction kept the weights before the NaN";
  EXPECT_EQ(bits(a->predict(x)), want_a);
}

// While the model's lock is held shared, the host vouches for the parameters' bytes with a version
// (backend/weights_version.h), and the oneDNN plugin, which keeps convolution weights reordered,
// takes them as they were without comparing. Shown by a write the host cannot see (no lock taken):
// the planned and the ordinary pass keep the weights they had. The next writer's unlock draws a new
// version, and the write is seen.
TEST(WeightsVersion, VouchedWeightsAreNotComparedAgain) {
  std::shared_ptr<Context> ctx = make_context("onednn");
  if (!ctx && !kOnednnBuilt) GTEST_SKIP() << "the oneDNN plugin is not built here";
  ASSERT_NE(ctx, nullptr);
  auto m = Model::create(ctx, Json::parse(NNRT_LENET_CONFIG));
  Array x = random_batch(*ctx, *m, 2, 5);
  const std::vector<uint32_t> before = bits(m->predict(x)), before_unplanned = bits(m->predict_unplanned(x));
  Param *w = nullptr;
  for (Param &p : m->params())
    if (p.name == "conv2.weight") w = &p;
  ASSERT_NE(w, nullptr);
  std::vector<float> v(static_cast<size_t>(w->value.numel()));
  w->value.copy_to_host(v.data(), v.size() * sizeof(float));
  for (float &f : v) f *= 3;
  w->value.copy_from_host(v.data(), v.size() * sizeof(float));  // behind the lock's back
  EXPECT_EQ(bits(m->predict(x)), before) << "the planned pass compared the weights";
  EXPECT_EQ(bits(m->predict_unplanned(x)), before_unplanned) << "the ordinary pass compared the weights";
  { std::unique_lock<WriterPreferringSharedMutex> write(m->lock()); }
  EXPECT_NE(bits(m->predict(x)), before) << "a writer's unlock did not change the version";
  EXPECT_NE(bits(m->predict_unplanned(x)), before_unplanned);
}

// A pass whose output is no op's (a flatten is a view of the input) cannot be replayed into a
// fresh array: such layouts keep the ordinary pass, with the same results.
TEST_P(PredictPlan, PassesWithoutOpsStayUnplanned) {
  auto m = Model::create(ctx_, Json::parse(R"({"input": [2, 3], "layers": [{"type": "flatten"}]})"));
  Array x = random_batch(*ctx_, *m, 2, 3);
  EXPECT_EQ(bits(m->predict(x)), bits(m->predict_unplanned(x)));
  EXPECT_EQ(bits(m->predict(x)), bits(x));
  EXPECT_EQ(m->plan_count(), 0u);
}

// An op that refuses its data at a replay (an embedding index out of range) fails as the ordinary
// pass does, naming the layer, and the plan goes on serving good inputs.
TEST_P(PredictPlan, FailingReplaysReportAsTheLayersDo) {
  auto m = Model::create(ctx_, Json::parse(R"({"input": [3], "layers": [
    {"type": "embedding", "name": "words", "vocab": 5, "units": 4}, {"type": "flatten"}]})"));
  auto indices = [&](std::vector<int64_t> v) {
    return ops::from_host(*ctx_, NNRT_DTYPE_I64, Shape{1, 3}, v.data(), v.size() * sizeof(int64_t));
  };
  expect_same(*m, indices({0, 4, 2}), "good indices");
  EXPECT_EQ(m->plan_count(), 2u) << "the model's build predicts on F32 zeros, then I64 indices";
  try {
    m->predict(indices({0, 9, 2}));
    ADD_FAILURE() << "an index out of range was accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), NNRT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("embedding 'words'"), std::string::npos) << e.what();
  }
  expect_same(*m, indices({1, 1, 3}), "good indices after a failure");
}

INSTANTIATE_TEST_SUITE_P(Backends, PredictPlan, ::testing::Values("reference", "onednn"),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

}  // namespace
}  // namespace nnrt::model::testing
