// Graphs through the internal Model API: residual adds, concatenation, a node read by several
// others (whose gradients must be summed), sequence and normalisation layers in a model, and the
// ordering of nodes given out of order. Gradients are checked against central differences of
// L = sum(out * R) through Model::forward and Model::backward, in F64 on the reference backend.
#include <gtest/gtest.h>

#include <iostream>

#include "backend/ops.h"
#include "core/error.h"
#include "layer_check.h"
#include "model/model.h"

namespace nnrt::model::testing {
namespace {

std::shared_ptr<Model> make_model(const std::shared_ptr<Context> &ctx, const char *config) {
  return Model::create(ctx, Json::parse(config));
}

const Node &node_named(const Model &m, const std::string &name) {
  for (const Node &n : m.nodes())
    if (n.layer->name == name) return n;
  throw std::runtime_error("no node " + name);
}

// Checks every trainable parameter's gradient from Model::backward against central differences.
GradientReport check_model_gradients(Model &m, const Array &x) {
  Context &ctx = m.ctx();
  Pass pass{ctx, true, 1, NNRT_DTYPE_F64, {}};
  std::vector<Array> params = m.params_as(NNRT_DTYPE_F64);
  int32_t out_node = m.output_node();
  Shape out_shape = with_batch(x.dim(0), m.nodes()[out_node].out_shape);
  Objective objective = random_projection(ctx, out_shape, NNRT_DTYPE_F64, 77);
  auto value_at = [&](const std::vector<Array> &p) {
    Activations acts = m.forward(pass, {x}, p);
    return objective.value(pass, acts.out[out_node], acts.saved[out_node]);
  };

  Activations acts = m.forward(pass, {x}, params);
  Array r = objective.dout(pass, acts.out[out_node], acts.saved[out_node]);
  std::vector<Array> grads = m.backward(pass, acts, params, out_node, r);

  GradientReport report;
  for (size_t j = 0; j < params.size(); ++j) {
    const Param &p = m.params()[j];
    if (!p.spec.trainable) {
      EXPECT_FALSE(grads[j].defined()) << p.name;
      continue;
    }
    if (!grads[j].defined()) {
      ADD_FAILURE() << "no gradient for " << p.name;
      continue;
    }
    // F32 holds batchnorm's gamma and beta: a step that moves them exactly (see layer_check.h).
    const double h = params[j].dtype() == NNRT_DTYPE_F64 ? GradientCheckOptions{}.step_size
                                                         : GradientCheckOptions{}.step_size_f32;
    std::vector<double> base = ops::to_doubles(params[j]), analytic = ops::to_doubles(grads[j]), numeric;
    for (size_t i = 0; i < base.size(); ++i) {
      std::vector<Array> moved = params;
      std::vector<double> v = base;
      v[i] = base[i] + h;
      moved[j] = from_doubles(ctx, params[j].dtype(), params[j].shape(), v);
      double hi = ops::to_doubles(moved[j])[i], f_hi = value_at(moved);
      v[i] = base[i] - h;
      moved[j] = from_doubles(ctx, params[j].dtype(), params[j].shape(), v);
      double lo = ops::to_doubles(moved[j])[i], f_lo = value_at(moved);
      numeric.push_back((f_hi - f_lo) / (hi - lo));
    }
    double e = relative_error(analytic, numeric);
    EXPECT_LT(e, 1e-6) << p.name;
    report.errors.emplace_back(p.name, e);
    report.worst = std::max(report.worst, e);
  }
  return report;
}

void print(const char *what, const GradientReport &r) {
  std::cout << "[gradcheck] graph " << what << ": worst " << r.worst << " (" << r.describe() << ")\n";
}

class Graph : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx = make_context("reference");
    ASSERT_NE(ctx, nullptr);
  }
  std::shared_ptr<Context> ctx;
};

TEST_F(Graph, ResidualAddSumsTheGradientsOfANodeReadTwice) {
  auto m = make_model(ctx, R"({"input": [4], "seed": 1, "nodes": [
      {"name": "a", "type": "dense", "units": 4, "activation": "tanh", "inputs": ["input"]},
      {"name": "b", "type": "dense", "units": 4, "activation": "gelu", "inputs": ["a"]},
      {"name": "sum", "type": "add", "inputs": ["a", "b"]},
      {"name": "head", "type": "dense", "units": 2, "inputs": ["sum"]}], "outputs": ["head"]})");
  EXPECT_EQ(node_named(*m, "a").consumers, 2);
  print("residual add", check_model_gradients(*m, random_normal(*ctx, NNRT_DTYPE_F64, Shape{3, 4}, 5)));
}

TEST_F(Graph, TheSameNodeTwiceIntoOneAdd) {
  auto m = make_model(ctx, R"({"input": [3], "seed": 2, "nodes": [
      {"name": "a", "type": "dense", "units": 3, "inputs": ["input"]},
      {"name": "twice", "type": "add", "inputs": ["a", "a"]},
      {"name": "head", "type": "dense", "units": 2, "inputs": ["twice"]}]})");
  print("add(a, a)", check_model_gradients(*m, random_normal(*ctx, NNRT_DTYPE_F64, Shape{2, 3}, 6)));
}

TEST_F(Graph, ConcatOfTwoBranches) {
  auto m = make_model(ctx, R"({"input": [1, 4, 4], "seed": 3, "nodes": [
      {"name": "wide", "type": "conv2d", "filters": 2, "kernel": 3, "padding": 1, "activation": "relu", "inputs": ["input"]},
      {"name": "narrow", "type": "conv2d", "filters": 3, "kernel": 1, "inputs": ["input"]},
      {"name": "both", "type": "concat", "inputs": ["wide", "narrow"]},
      {"name": "pool", "type": "global_avgpool2d", "inputs": ["both"]},
      {"name": "head", "type": "dense", "units": 2, "inputs": ["pool"]}]})");
  EXPECT_EQ(node_named(*m, "both").out_shape, (Shape{5, 4, 4}));
  print("concat", check_model_gradients(*m, random_normal(*ctx, NNRT_DTYPE_F64, Shape{2, 1, 4, 4}, 7)));
}

TEST_F(Graph, EmbeddingIntoLstm) {
  auto m = make_model(ctx, R"({"input": [5], "seed": 4, "layers": [
      {"type": "embedding", "vocab": 6, "units": 3},
      {"type": "lstm", "units": 4, "return_sequences": true},
      {"type": "lstm", "units": 2},
      {"type": "dense", "units": 2}]})");
  print("embedding -> lstm -> lstm", check_model_gradients(*m, random_indices(*ctx, NNRT_DTYPE_F64, Shape{2, 5}, 6, 8)));
}

TEST_F(Graph, NormalisationAndRegularisationLayers) {
  auto m = make_model(ctx, R"({"input": [2, 3, 3], "seed": 5, "layers": [
      {"type": "conv2d", "filters": 3, "kernel": 2, "bias": false},
      {"type": "batchnorm"},
      {"type": "activation", "activation": "elu"},
      {"type": "flatten"},
      {"type": "reshape", "shape": [3, 2, 2]},
      {"type": "global_maxpool2d"},
      {"type": "dropout", "rate": 0.25},
      {"type": "dense", "units": 2}]})");
  // (No conv bias: batchnorm cancels it, so its gradient is zero and has no relative error.)
  Array x = random_normal(*ctx, NNRT_DTYPE_F64, Shape{4, 2, 3, 3}, 9);
  print("conv -> batchnorm -> pool -> dropout", check_model_gradients(*m, x));
  // Inference: dropout off, batchnorm on its running statistics, so predict repeats itself.
  Array batch = random_normal(*ctx, NNRT_DTYPE_F32, Shape{2, 2, 3, 3}, 10);
  EXPECT_EQ(ops::to_doubles(m->predict(batch)), ops::to_doubles(m->predict(batch)));
}

TEST_F(Graph, NodesGivenOutOfOrderAreSortedAndComputeTheSame) {
  const char *in_order = R"({"input": [3], "seed": 9, "nodes": [
      {"name": "a", "type": "dense", "units": 4, "inputs": ["input"]},
      {"name": "b", "type": "dense", "units": 4, "activation": "relu", "inputs": ["a"]},
      {"name": "c", "type": "add", "inputs": ["a", "b"]},
      {"name": "d", "type": "dense", "units": 2, "inputs": ["c"]}], "outputs": ["d"]})";
  const char *shuffled = R"({"input": [3], "seed": 9, "nodes": [
      {"name": "d", "type": "dense", "units": 2, "inputs": ["c"]},
      {"name": "c", "type": "add", "inputs": ["a", "b"]},
      {"name": "b", "type": "dense", "units": 4, "activation": "relu", "inputs": ["a"]},
      {"name": "a", "type": "dense", "units": 4, "inputs": ["input"]}], "outputs": ["d"]})";
  auto m1 = make_model(ctx, in_order), m2 = make_model(ctx, shuffled);
  std::vector<std::string> order;
  for (const Node &n : m2->nodes()) order.push_back(n.layer->name);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c", "d"}));
  for (size_t i = 0; i < m2->nodes().size(); ++i)
    for (int32_t d : m2->nodes()[i].inputs) EXPECT_LT(d, static_cast<int32_t>(i));
  Array x = random_normal(*ctx, NNRT_DTYPE_F32, Shape{5, 3}, 11);
  EXPECT_EQ(ops::to_doubles(m1->predict(x)), ops::to_doubles(m2->predict(x)));
}

TEST_F(Graph, RefusesCycles) {
  for (const char *config : {
           R"({"input": [2], "nodes": [{"name": "a", "type": "dense", "units": 2, "inputs": ["b"]},
                                       {"name": "b", "type": "dense", "units": 2, "inputs": ["a"]}]})",
           R"({"input": [2], "nodes": [{"name": "a", "type": "add", "inputs": ["input", "a"]}]})"}) {
    try {
      make_model(ctx, config);
      ADD_FAILURE() << "a cycle was accepted";
    } catch (const Error &e) {
      EXPECT_EQ(e.status(), NNRT_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace nnrt::model::testing
