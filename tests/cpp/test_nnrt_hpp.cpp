// nnrt.hpp against the public headers only, built with -Wall -Wextra -Wpedantic -Werror: RAII
// handles, move-only semantics, and nnrt::error carrying the exact status and message.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "nnrt/nnrt.hpp"

namespace {

const char *kReference = R"({"backend": "reference", "seed": 7, "deterministic": true})";

// A classifier of 4 features into 3 classes.
const char *kModel = R"({"input": [4], "seed": 3, "layers": [
  {"type": "dense", "units": 8, "activation": "relu", "name": "hidden"},
  {"type": "output", "units": 3, "loss": "nll", "name": "out"}]})";

// Runs `call`, which must throw nnrt::error with `status` and a message containing `text`.
template <class Call>
void expect_error(Call &&call, nnrt_status status, const std::string &text) {
  try {
    call();
    ADD_FAILURE() << "no nnrt::error thrown; expected " << nnrt::status_name(status);
  } catch (const nnrt::error &e) {
    EXPECT_EQ(e.status(), status) << nnrt::status_name(e.status()) << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what() << " lacks " << text;
  }
}

// 60 examples of 4 features; the class is which of the first three features is largest.
struct Toy {
  std::vector<float> x;
  std::vector<int64_t> y;
  Toy() {
    for (int i = 0; i < 60; ++i) {
      int label = i % 3;
      for (int f = 0; f < 4; ++f) x.push_back(f == label ? 1.0f + 0.01f * i : 0.1f * ((i + f) % 5) - 0.2f);
      y.push_back(label);
    }
  }
  nnrt::dataset make(const nnrt::context &ctx) const {
    nnrt::array features = nnrt::array::from_host(ctx, NNRT_DTYPE_F32, {60, 4}, x.data(), x.size() * sizeof(float));
    nnrt::array labels = nnrt::array::from_host(ctx, NNRT_DTYPE_I64, {60}, y.data(), y.size() * sizeof(int64_t));
    return nnrt::dataset::from_arrays(ctx, features, labels);
  }
};

// A temporary folder, removed with its files.
struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/nnrt_hpp_XXXXXX";
    if (!mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~TempDir() {
    std::string command = "rm -rf '" + path + "'";
    if (system(command.c_str()) != 0) ADD_FAILURE() << "could not remove " << path;
  }
};

static_assert(!std::is_copy_constructible<nnrt::array>::value, "handles are move-only");
static_assert(!std::is_copy_assignable<nnrt::model>::value, "handles are move-only");
static_assert(std::is_nothrow_move_constructible<nnrt::context>::value, "moves do not throw");
static_assert(std::is_nothrow_move_assignable<nnrt::dataset>::value, "moves do not throw");
static_assert(std::is_move_constructible<nnrt::trainer>::value, "trainers move");

TEST(NnrtHpp, VersionMatchesTheHeader) {
  EXPECT_EQ(nnrt::abi_version(), static_cast<uint32_t>(NNRT_ABI_VERSION));
  EXPECT_EQ(std::string(nnrt::version_string()), std::to_string(NNRT_VERSION_MAJOR) + "." +
                                                     std::to_string(NNRT_VERSION_MINOR) + "." +
                                                     std::to_string(NNRT_VERSION_PATCH));
  EXPECT_EQ(nnrt::dtype_size(NNRT_DTYPE_BF16), 2u);
}

TEST(NnrtHpp, ContextErrorsThrowWithStatusAndMessage) {
  expect_error([] { nnrt::context bad(R"({"threadz": 2})"); }, NNRT_ERR_INVALID_ARGUMENT, "threadz");
  expect_error([] { nnrt::context bad(R"({"backend": "no-such-backend"})"); }, NNRT_ERR_INVALID_ARGUMENT,
               "no-such-backend");
  nnrt::context ctx(kReference);
  std::string describe = ctx.describe();
  EXPECT_NE(describe.find("\"backend\":\"reference\""), std::string::npos) << describe;
}

TEST(NnrtHpp, HandlesMoveAndRelease) {
  nnrt::context ctx(kReference);
  nnrt::array a(ctx, NNRT_DTYPE_F32, {2, 3});
  nnrt_array *raw = a.get();
  ASSERT_NE(raw, nullptr);
  nnrt::array b(std::move(a));
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): a moved-from handle is empty
  EXPECT_EQ(b.get(), raw);
  nnrt::array c;
  c = std::move(b);
  EXPECT_EQ(c.get(), raw);
  c = nnrt::array(ctx, NNRT_DTYPE_I32, {4});  // releases the first array
  EXPECT_EQ(c.dtype(), NNRT_DTYPE_I32);
  nnrt_array *kept = c.release();
  EXPECT_FALSE(c);
  nnrt::array adopted(kept);  // owned again, released at the end of the scope
  EXPECT_EQ(adopted.shape(), std::vector<int64_t>({4}));
}

TEST(NnrtHpp, ArraysAndOps) {
  nnrt::context ctx(kReference);
  std::vector<float> av = {1, 2, 3, 4, 5, 6}, bv = {10, 20, 30};
  nnrt::array a = nnrt::array::from_host(ctx, NNRT_DTYPE_F32, {2, 3}, av.data(), av.size() * sizeof(float));
  nnrt::array b = nnrt::array::from_host(ctx, NNRT_DTYPE_F32, {3}, bv.data(), bv.size() * sizeof(float));
  EXPECT_EQ(a.shape(), std::vector<int64_t>({2, 3}));
  EXPECT_EQ(a.nbytes(), 24u);
  std::vector<nnrt::array> sum = nnrt::op(ctx, "add", {&a, &b});
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_EQ(sum[0].to_vector<float>(), std::vector<float>({11, 22, 33, 14, 25, 36}));
  std::vector<nnrt::array> total = nnrt::op(ctx, "sum", {&sum[0]}, R"({"axes": [1]})");
  EXPECT_EQ(total[0].to_vector<float>(), std::vector<float>({66, 75}));

  expect_error([&] { nnrt::op(ctx, "matmul", {&a, &a}); }, NNRT_ERR_SHAPE, "");
  expect_error([&] { nnrt::op(ctx, "no_such_op", {&a}); }, NNRT_ERR_UNSUPPORTED, "no_such_op");
  expect_error([&] { a.to_vector<double>(); }, NNRT_ERR_DTYPE, "4 bytes");
  expect_error([&] { nnrt::array::from_host(ctx, NNRT_DTYPE_F32, {2, 3}, av.data(), 8); }, NNRT_ERR_INVALID_ARGUMENT,
               "24");
}

TEST(NnrtHpp, ModelPredictSummaryAndParams) {
  nnrt::context ctx(kReference);
  nnrt::model m(ctx, kModel);
  EXPECT_EQ(m.param_count(), 4 * 8 + 8 + 8 * 3 + 3);
  EXPECT_NE(m.summary().find("\"hidden\""), std::string::npos);
  std::vector<float> xv(8, 0.5f);
  nnrt::array x = nnrt::array::from_host(ctx, NNRT_DTYPE_F32, {2, 4}, xv.data(), xv.size() * sizeof(float));
  std::vector<float> p = m.predict(x).to_vector<float>();
  ASSERT_EQ(p.size(), 6u);
  EXPECT_NEAR(p[0] + p[1] + p[2], 1.0, 1e-5);

  nnrt::array bias = m.get_param("out.bias");
  std::vector<float> ones(3, 1.0f);
  m.set_param("out.bias", nnrt::array::from_host(ctx, NNRT_DTYPE_F32, {3}, ones.data(), 12));
  EXPECT_EQ(m.get_param("out.bias").to_vector<float>(), ones);

  expect_error([&] { nnrt::model bad(ctx, R"({"input": [4], "layers": [{"type": "densee"}]})"); },
               NNRT_ERR_INVALID_ARGUMENT, "densee");
  nnrt::array wrong(ctx, NNRT_DTYPE_F32, {2, 5});
  expect_error([&] { m.predict(wrong); }, NNRT_ERR_SHAPE, "");
  expect_error([&] { m.get_param("nope"); }, NNRT_ERR_INVALID_ARGUMENT, "nope");
  expect_error([&] { nnrt::model::load(ctx, "/nonexistent/model.safetensors"); }, NNRT_ERR_IO, "/nonexistent");
}

TEST(NnrtHpp, SeveralInputsAndOutputs) {
  nnrt::context ctx(kReference);
  nnrt::model m(ctx, R"({"inputs": [{"name": "a", "shape": [2]}, {"name": "b", "shape": [2]}], "nodes": [
    {"name": "sum", "type": "add", "inputs": ["a", "b"]},
    {"name": "twice", "type": "add", "inputs": ["sum", "sum"]}], "outputs": ["twice", "sum"]})");
  std::vector<nnrt::model::input_info> inputs = m.inputs();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[1].name, "b");
  EXPECT_EQ(inputs[1].shape, std::vector<int64_t>{2});
  std::vector<float> av = {1, 2}, bv = {10, 20};
  nnrt::array a = nnrt::array::from_host(ctx, NNRT_DTYPE_F32, {1, 2}, av.data(), 8);
  nnrt::array b = nnrt::array::from_host(ctx, NNRT_DTYPE_F32, {1, 2}, bv.data(), 8);
  std::vector<nnrt::array> out = m.predict_many({&a, &b});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{22, 44}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{11, 22}));
  expect_error([&] { m.predict(a); }, NNRT_ERR_INVALID_ARGUMENT, "predict_many");
  expect_error([&] { m.predict_many({&a}); }, NNRT_ERR_INVALID_ARGUMENT, "n_inputs is 1");
}

TEST(NnrtHpp, CallerMemoryAndRunOptions) {
  nnrt::context ctx(kReference);
  nnrt::model m(ctx, kModel);
  std::vector<float> xv = {0.5f, -1, 2, 0, 1, 1, -0.5f, 3}, yv(6, 0.0f);
  EXPECT_EQ(m.output_shape(2), (std::vector<int64_t>{2, 3}));
  nnrt::array x = nnrt::array::wrap_host(ctx, NNRT_DTYPE_F32, {2, 4}, xv.data(), xv.size() * sizeof(float));
  nnrt::array y = nnrt::array::wrap_host(ctx, NNRT_DTYPE_F32, {2, 3}, yv.data(), yv.size() * sizeof(float));
  m.predict_into(x, y);
  EXPECT_EQ(yv, m.predict(x).to_vector<float>());
  nnrt::model shared = m.share();
  EXPECT_EQ(yv, shared.predict(x).to_vector<float>());
  expect_error([&] { nnrt::array::wrap_host(ctx, NNRT_DTYPE_F32, {2, 4}, xv.data(), 32, {1}); },
               NNRT_ERR_INVALID_ARGUMENT, "1 strides for 2 dims");

  nnrt::run_options run;
  run.cancel();
  expect_error([&] { m.predict(x, &run); }, NNRT_ERR_CANCELLED, "nnrt_run_options_cancel");
  expect_error([&] { m.predict_into(x, y, &run); }, NNRT_ERR_CANCELLED, "");
  run.reset_cancel();
  EXPECT_EQ(m.predict(x, &run).to_vector<float>(), yv);
  run.set_timeout(1e-9);
  expect_error([&] { m.predict(x, &run); }, NNRT_ERR_DEADLINE_EXCEEDED, "timeout");
}

TEST(NnrtHpp, TrainEvaluateSaveAndRestore) {
  nnrt::context ctx(kReference);
  Toy toy;
  nnrt::dataset data = toy.make(ctx);
  EXPECT_EQ(data.size(), 60);
  std::pair<nnrt::array, nnrt::array> first = data.examples(ctx, 0, 5);
  EXPECT_EQ(first.first.shape(), std::vector<int64_t>({5, 4}));
  EXPECT_EQ(first.second.to_vector<int64_t>(), std::vector<int64_t>({0, 1, 2, 0, 1}));
  expect_error([&] { data.examples(ctx, 50, 20); }, NNRT_ERR_INVALID_ARGUMENT, "60");

  nnrt::model m(ctx, kModel);
  nnrt::trainer t(m, R"({"optimizer": {"type": "adam", "learning_rate": 0.05}, "batch_size": 10})");
  double loss = t.step(first.first, first.second);
  EXPECT_TRUE(std::isfinite(loss));
  int calls = 0;
  t.set_progress([&](const nnrt_progress &p) {
    EXPECT_GE(p.struct_size, sizeof(nnrt_progress));
    ++calls;
    return false;
  });
  nnrt::trainer moved(std::move(t));  // the callback's state survives the move
  moved.fit(data, &data, 20);
  EXPECT_EQ(calls, 20 * (6 + 1));  // 6 batches and one epoch-end call per epoch
  EXPECT_NE(moved.result().find("\"stop_reason\":\"completed\""), std::string::npos) << moved.result();
  nnrt::evaluation e = m.evaluate(data);
  EXPECT_GT(e.accuracy(), 0.9);
  EXPECT_NE(e.report().find("confusion_matrix"), std::string::npos);

  TempDir dir;
  std::string path = dir.path + "/toy.safetensors";
  moved.save(path);
  nnrt::model loaded = nnrt::model::load(ctx, path);
  EXPECT_EQ(loaded.get_param("out.weight").to_vector<float>(), m.get_param("out.weight").to_vector<float>());
  nnrt::trainer again(loaded, R"({"optimizer": {"type": "adam", "learning_rate": 0.05}, "batch_size": 10})");
  again.restore(path);
  nnrt::trainer sgd(loaded, R"({"optimizer": {"type": "sgd"}})");
  expect_error([&] { sgd.restore(path); }, NNRT_ERR_INVALID_ARGUMENT, "optimizer");
}

TEST(NnrtHpp, ProgressStopsCancelsAndRethrows) {
  nnrt::context ctx(kReference);
  Toy toy;
  nnrt::dataset data = toy.make(ctx);
  nnrt::model m(ctx, kModel);
  nnrt::trainer t(m, R"({"batch_size": 10})");

  t.set_progress([](const nnrt_progress &p) { return p.batch == 2; });
  t.fit(data, nullptr, 3);
  EXPECT_NE(t.result().find("\"stop_reason\":\"callback\""), std::string::npos) << t.result();

  struct Boom {};
  t.set_progress([](const nnrt_progress &) -> bool { throw Boom(); });
  EXPECT_THROW(t.fit(data, nullptr, 1), Boom);

  t.set_progress(nullptr);
  t.cancel();
  expect_error([&] { t.fit(data, nullptr, 1); }, NNRT_ERR_CANCELLED, "");
  expect_error([&] { t.fit(data, nullptr, -1); }, NNRT_ERR_INVALID_ARGUMENT, "-1");
  expect_error([&] { nnrt::trainer bad(m, R"({"optimizer": {"type": "adamm"}})"); }, NNRT_ERR_INVALID_ARGUMENT,
               "adamm");
  expect_error([&] { nnrt::dataset::load(ctx, R"({"format": "csv", "path": "/nonexistent.csv"})"); }, NNRT_ERR_IO,
               "/nonexistent.csv");
}

}  // namespace
