#include "model/decoder.h"

#include <algorithm>

#include "core/error.h"
#include "model/layers/output.h"

namespace nnrt::model {

TokenModel TokenModel::of(const Model &m) {
  const Shape &input = m.input_shapes().front();
  if (m.input_shapes().size() != 1 || input.rank != 1) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "the model is not a token model: its input must be a window of token ids [T], it is ",
         to_string(input));
  }
  TokenModel t;
  t.window = input[0];
  const Node &out = m.nodes()[m.output_node()];
  if (out.out_shape.rank != 2 || out.out_shape[0] != t.window) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "the model is not a token model: its output (", out.layer->where(),
         ") must give scores over the vocabulary at each of the ", t.window, " positions, [", t.window,
         ", V], but it gives ", to_string(out.out_shape));
  }
  t.vocab = out.out_shape[1];
  for (const Node &node : m.nodes()) {
    for (int32_t d : node.inputs) {
      if (d >= 0) continue;
      if (node.layer->type != "embedding") {
        fail(NNRT_ERR_INVALID_ARGUMENT, "the model is not a token model: only embedding layers may read its token ids, but ",
             node.layer->where(), " does");
      }
      const int64_t rows = node.layer->attributes.value("vocab", int64_t{0});
      if (rows < t.vocab) {
        fail(NNRT_ERR_INVALID_ARGUMENT, "the model is not a token model: ", node.layer->where(), " has ", rows,
             " rows, fewer than the ", t.vocab, " tokens its output scores, so a generated token could not be read back");
      }
    }
  }
  // Sampling wants logits: under a softmax (the usual nll output), the layer's pre-activation.
  if (const auto *o = dynamic_cast<const OutputLayer *>(out.layer.get())) {
    const std::string &a = o->activation.name;
    if (a != "softmax" && a != "log_softmax" && a != "identity") {
      fail(NNRT_ERR_INVALID_ARGUMENT, "the model is not a token model: its output layer's activation \"", a,
           "\" does not give scores over tokens (expected softmax, log_softmax or identity)");
    }
    t.pre_activation = true;
  }
  return t;
}

Decoder::Decoder(const Model &m, bool cached)
    : model_(m), info_(TokenModel::of(m)), cached_(cached), dtype_(m.ctx().options().default_dtype),
      params_(m.params_as(dtype_)), states_(m.nodes().size()) {
  for (const Node &node : m.nodes()) {
    StepSupport s = node.layer->step_support();
    kinds_.push_back(s.kind);
    if (!cached) continue;
    const char *instead = "; with \"cache\": false generation recomputes the whole window for every token instead";
    if (s.kind == StepKind::kRefused) {
      fail(NNRT_ERR_UNSUPPORTED, node.layer->where(), " cannot run one position at a time (key/value cache): ", s.why,
           instead);
    }
    if (node.out_shape.rank < 1 || node.out_shape[0] != info_.window) {
      fail(NNRT_ERR_UNSUPPORTED, node.layer->where(), " gives ", to_string(node.out_shape), ", not one row per position of the ",
           info_.window, " tokens, so it cannot run one position at a time (key/value cache)", instead);
    }
  }
}

void Decoder::reset() {
  tokens_.clear();
  for (StepState &s : states_) s.arrays.clear();
}

std::vector<double> Decoder::append(const int64_t *tokens, int64_t n) {
  const int64_t start = length();
  if (n < 1 || start + n > info_.window) {
    fail(NNRT_ERR_INTERNAL, "decoder: appending ", n, " tokens to ", start, " in a window of ", info_.window);
  }
  Context &ctx = model_.ctx();
  std::vector<double> scores;
  if (cached_) {
    scores = run(ops::from_host(ctx, NNRT_DTYPE_I64, Shape{1, n}, tokens, static_cast<size_t>(n) * sizeof(int64_t)), start,
                 true, n - 1);
  } else {
    // Positions after the sequence hold token 0; the causal layers' outputs before them do not
    // read them.
    std::vector<int64_t> window(static_cast<size_t>(info_.window), 0);
    std::copy(tokens_.begin(), tokens_.end(), window.begin());
    std::copy(tokens, tokens + n, window.begin() + start);
    Array x = ops::from_host(ctx, NNRT_DTYPE_I64, Shape{1, info_.window}, window.data(), window.size() * sizeof(int64_t));
    scores = run(x, 0, false, start + n - 1);
  }
  tokens_.insert(tokens_.end(), tokens, tokens + n);
  return scores;
}

std::vector<double> Decoder::run(const Array &x, int64_t start, bool stepped, int64_t row) {
  const std::vector<Node> &nodes = model_.nodes();
  const int32_t out = model_.output_node();
  Pass pass{model_.ctx(), false, 0, dtype_, {}};
  std::vector<Array> inputs = {x}, outs(nodes.size());
  std::vector<int32_t> remaining(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) remaining[i] = nodes[i].consumers;
  Saved out_saved;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node &node = nodes[i];
    std::vector<Array> in = model_.gather_inputs(node, inputs, outs), params = model_.node_params(node, params_);
    Saved saved;
    outs[i] = stepped && kinds_[i] == StepKind::kCached ? node.layer->forward_step(pass, in, params, states_[i], start)
                                                        : node.layer->forward(pass, in, params, saved);
    if (static_cast<int32_t>(i) == out) out_saved = std::move(saved);
    for (int32_t d : node.inputs)
      if (d >= 0 && --remaining[d] == 0) outs[d] = Array();
  }
  // An output layer keeps its pre-activation as rows [positions, V] (output.h); another last
  // layer's output is [1, positions, V].
  Array scores = info_.pre_activation ? out_saved.arrays.at(1).slice(0, row, 1) : outs[out].slice(1, row, 1);
  return ops::to_doubles(ops::cast(model_.ctx(), scores, NNRT_DTYPE_F64));
}

}  // namespace nnrt::model
