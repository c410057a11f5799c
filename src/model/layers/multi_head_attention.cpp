// multi_head_attention: self-attention over the tokens of each example [T, E], as PyTorch's
// nn.MultiheadAttention(E, heads, batch_first=True) called with (x, x, x): q, k and v are x
// projected by the rows of in_proj_weight [3E, E] (and in_proj_bias [3E]), split into `heads`
// heads of E / heads features; each head computes softmax(q k^T / sqrt(E / heads) + mask) v, where
// the mask is -inf above the diagonal with "causal" (a token sees itself and the tokens before it)
// and 0 otherwise; the heads are joined and projected by out_proj.weight [E, E] (and out_proj.bias).
// The parameter names are PyTorch's, so a state dict loads as it is.
//
// A second input, one value per token of each example ([T]), masks keys: with "mask": "padding"
// a nonzero value marks a padding token that no query attends to (PyTorch's key_padding_mask),
// with "keep" a zero does (Hugging Face's attention_mask), with "additive" the values are added to
// the scores as they are. Masked keys get the dtype's lowest finite score, not -inf, so a query
// whose keys are all masked averages them (as Hugging Face's models do) instead of giving NaN. The
// mask gets no gradient.
//
// The attention itself is one op (NNRT_OP_ATTENTION, ops::attention): it reads q, k and v as head
// views of the projections, keeps scores for a block of rows at a time, never a [T, T] matrix per
// head, and its backward pass computes the probabilities again instead of keeping them, so a
// training step holds no [T, T] array either. A device that does not take the op (cuDNN; oneDNN
// for bf16 and f16) runs the same math as batched matmul and softmax (attention_ops.cpp).
//
// Generation (model/decoder.h): a causal layer keeps the keys and values of the positions seen so
// far (its key/value cache, [1, heads, T, d] each), so a new position costs its own projections and
// one row of scores against the cache, not the whole prefix again.
#include <cmath>

#include "model/layer.h"

namespace nnrt::model {
namespace {

class MultiHeadAttentionLayer : public Layer {
 public:
  int64_t heads = 1, tokens = 0, width = 0;
  bool causal = false, bias = true;
  std::string mask;  // how the second input masks keys: "padding", "keep", "additive"; empty: no mask
  Init init;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1 + !mask.empty()) {
      shape_error(mask.empty() ? "takes one input (self-attention) without \"mask\", got "
                               : "takes two inputs with \"mask\" (the tokens, then the key mask), got ",
                  inputs.size());
    }
    const Shape &x = inputs[0];
    if (x.rank != 2) shape_error("expects examples shaped [tokens, features], got ", to_string(x));
    tokens = x[0];
    width = x[1];
    if (width % heads != 0) shape_error("features ", width, " do not split into ", heads, " heads");
    if (!mask.empty() && !(inputs[1].rank == 1 && inputs[1][0] == tokens)) {
      shape_error("expects a key mask of one value per token, [", tokens, "], got ", to_string(inputs[1]));
    }
    return x;
  }

  std::vector<ParamSpec> param_specs() const override {
    std::vector<ParamSpec> p = {{"in_proj_weight", Shape{3 * width, width}, init, width, width}};
    if (bias) p.push_back({"in_proj_bias", Shape{3 * width}, Init{}, width, width});
    p.push_back({"out_proj.weight", Shape{width, width}, init, width, width});
    if (bias) p.push_back({"out_proj.bias", Shape{width}, Init{}, width, width});
    return p;
  }

  // The saved arrays of a forward pass.
  enum SavedIndex { kX, kQ, kK, kV, kO, kMask };

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override {
    Context &ctx = pass.ctx;
    const Array &x = in[0];
    const int64_t n = x.dim(0);
    // q, k and v as [N, heads, T, d] views of [N, T, E] products.
    Array q = head_view(project(ctx, x, params, 0), n), k = head_view(project(ctx, x, params, 1), n),
          v = head_view(project(ctx, x, params, 2), n);
    Array additive = mask.empty() ? Array() : key_mask(ctx, in[1], x.dtype());
    Array o = join_heads(ctx, ops::attention(ctx, q, k, v, additive.defined() ? &additive : nullptr, attention_params()),
                         n);  // [N, T, E]
    saved.arrays = {x, q, k, v, o, additive};
    const Array *out_bias = bias ? &params[3] : nullptr;
    return ops::matmul(ctx, o, ops::transpose(params[bias ? 2 : 1], {1, 0}), out_bias);
  }

  StepSupport step_support() const override {
    if (!causal) return {StepKind::kRefused, "without \"causal\": true each token attends to the tokens after it, which change as tokens are added"};
    if (!mask.empty()) return {StepKind::kRefused, "its key mask is an input of the whole sequence, which a step does not have"};
    return {StepKind::kCached, ""};
  }

  // state.arrays: the key and value cache, [1, heads, T, d] each, filled up to `start`.
  Array forward_step(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, StepState &state,
                     int64_t start) const override {
    Context &ctx = pass.ctx;
    const Array &x = in[0];  // [1, n, E]
    const int64_t n = x.dim(1), d = width / heads, length = start + n;
    if (x.dim(0) != 1 || length > tokens) fail(NNRT_ERR_INTERNAL, where(), ": step over positions ", start, "..", length, " of ", tokens);
    if (state.arrays.empty()) {
      for (int i = 0; i < 2; ++i) state.arrays.push_back(ops::empty(ctx, x.dtype(), Shape{1, heads, tokens, d}));
    }
    Array q = head_view(project(ctx, x, params, 0), 1);
    for (int i = 0; i < 2; ++i) ops::copy_into(ctx, head_view(project(ctx, x, params, i + 1), 1), state.arrays[i].slice(2, start, n));
    Array k = state.arrays[0].slice(2, 0, length), v = state.arrays[1].slice(2, 0, length);
    // The n new positions are the last n of `length`: a causal op lets each see the cached ones and
    // the new ones before it.
    Array o = join_heads(ctx, ops::attention(ctx, q, k, v, nullptr, attention_params()), 1);
    return ops::matmul(ctx, o, ops::transpose(params[bias ? 2 : 1], {1, 0}), bias ? &params[3] : nullptr);
  }

  void backward(Pass &pass, const std::vector<Array> &, const std::vector<Array> &params, const Array &,
                const Saved &saved, const Array &dout, std::vector<Array> &din, std::vector<Array> &dparams) const override {
    Context &ctx = pass.ctx;
    const Array &x = saved.arrays[kX], &q = saved.arrays[kQ], &k = saved.arrays[kK], &v = saved.arrays[kV],
                &o = saved.arrays[kO];
    const int64_t n = x.dim(0);
    const Array &w_out = params[bias ? 2 : 1];
    // y = o Wo^T + bo
    Array dy2 = rows(ctx, dout), o2 = rows(ctx, o);
    dparams[bias ? 2 : 1] = ops::matmul(ctx, ops::transpose(dy2, {1, 0}), o2);
    if (bias) dparams[3] = ops::reduce(ctx, NNRT_REDUCE_SUM, dy2, 1u, false);
    Array d_heads = head_view(ops::matmul(ctx, dout, w_out), n);  // d(o) as [N, heads, T, d]
    const Array &additive = saved.arrays[kMask];
    ops::AttentionGrads g =
        ops::attention_backward(ctx, q, k, v, d_heads, additive.defined() ? &additive : nullptr, attention_params());
    // q|k|v = x W_i^T + b_i for the three row blocks i of in_proj_weight.
    Array x2 = rows(ctx, x);
    std::vector<Array> dw, db;
    Array dx;
    int i = 0;
    for (const Array *grad : {&g.dq, &g.dk, &g.dv}) {
      Array g2 = rows(ctx, join_heads(ctx, *grad, n));
      dw.push_back(ops::matmul(ctx, ops::transpose(g2, {1, 0}), x2));
      if (bias) db.push_back(ops::reduce(ctx, NNRT_REDUCE_SUM, g2, 1u, false));
      if (pass.needs_input_grad(0)) {
        Array part = ops::matmul(ctx, g2, params[0].slice(0, i * width, width));
        dx = dx.defined() ? ops::add(ctx, dx, part) : part;
      }
      ++i;
    }
    dparams[0] = ops::concat(ctx, dw, 0);
    if (bias) dparams[1] = ops::concat(ctx, db, 0);
    if (pass.needs_input_grad(0)) din[0] = ops::reshape(ctx, dx, x.shape().vec());
  }

 private:
  // The key mask [N, T] as scores to add, [N, 1, 1, T] in the pass's dtype.
  Array key_mask(Context &ctx, const Array &m, nnrt_dtype dtype) const {
    Array values = m.dtype() == dtype ? m : ops::cast(ctx, m, dtype);
    if (mask != "additive") {
      const double lowest = lowest_finite(dtype);
      Array nonzero = ops::unary(ctx, NNRT_UNARY_ABS, ops::unary(ctx, NNRT_UNARY_SIGN, values));  // 1 or 0
      values = mask == "padding" ? ops::scale(ctx, nonzero, lowest) : ops::scale(ctx, nonzero, -lowest, lowest);
    }
    return ops::reshape(ctx, values, {m.dim(0), 1, 1, tokens});
  }

  static double lowest_finite(nnrt_dtype dtype) {
    switch (dtype) {
      case NNRT_DTYPE_F16: return -65504.0;
      case NNRT_DTYPE_BF16: return -3.3895313892515355e38;
      case NNRT_DTYPE_F64: return -1.7976931348623157e308;
      default: return -3.4028234663852886e38;
    }
  }

  ops::AttentionParams attention_params() const {
    ops::AttentionParams p;
    p.causal = causal;
    p.scale = 1.0 / std::sqrt(static_cast<double>(width / heads));
    return p;
  }

  // Block i (0 q, 1 k, 2 v) of the input projection: x [N, T, E] -> [N, T, E].
  Array project(Context &ctx, const Array &x, const std::vector<Array> &params, int i) const {
    Array w = ops::transpose(params[0].slice(0, i * width, width), {1, 0});
    Array b = bias ? ops::contiguous(ctx, params[1].slice(0, i * width, width)) : Array();
    return ops::matmul(ctx, x, w, bias ? &b : nullptr);
  }

  // [N, T, E] -> a [N, heads, T, d] view (T: all tokens, or the new ones of a step).
  Array head_view(const Array &t, int64_t n) const {
    Array split = t.reshaped_view(Shape{n, t.dim(1), heads, width / heads});
    return ops::transpose(split, {0, 2, 1, 3});
  }

  // [N, heads, T, d] -> [N, T, E], contiguous.
  Array join_heads(Context &ctx, const Array &t, int64_t n) const {
    return ops::reshape(ctx, ops::contiguous(ctx, ops::transpose(t, {0, 2, 1, 3})), {n, t.dim(2), width});
  }

  // [N, T, E] -> [N * T, E].
  Array rows(Context &ctx, const Array &t) const { return ops::reshape(ctx, ops::contiguous(ctx, t), {-1, width}); }
};

}  // namespace

std::unique_ptr<Layer> make_multi_head_attention(JsonReader &config) {
  auto l = std::make_unique<MultiHeadAttentionLayer>();
  l->heads = config.require_int("heads", 1);
  l->causal = config.get_bool("causal", false);
  l->bias = config.get_bool("bias", true);
  l->init = read_init(config, "init", Init{Init::kXavierUniform});
  l->mask = config.get_string("mask", "");
  if (!l->mask.empty() && l->mask != "padding" && l->mask != "keep" && l->mask != "additive") {
    fail(NNRT_ERR_INVALID_ARGUMENT, config.name("mask"), ": expected \"padding\" (nonzero marks a padding token), "
         "\"keep\" (zero does) or \"additive\" (added to the scores), got \"", l->mask, "\"");
  }
  return l;
}

}  // namespace nnrt::model
