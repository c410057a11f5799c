// Multi-head self-attention recognized at import and mapped onto nnrt's multi_head_attention layer,
// in the two forms exporters write:
// - PyTorch's (nn.MultiheadAttention as nn.TransformerEncoderLayer calls it, torch 1.13, opsets
//   14-17): time-major x [T, N, E] (a batch_first module transposes into it first); P = x W + b
//   split into q, k and v by Slice; heads as Reshape [T, N*H, d] and Transpose to [N*H, T, d]
//   ([N*H, d, T] for k); q / sqrt(d); Softmax(q k^T (* 1) (+ mask)) v; Transpose back, Reshape
//   [T*N, E], Gemm with the output projection, Reshape [T, N, E].
// - Batch-first 4-D heads (nnrt's own export, and hand-written graphs): x [N, T, E]; heads as
//   Reshape [N, T, H, d] and Transpose [0, 2, 1, 3] ([0, 2, 3, 1] for k); the output Transposed
//   back, Reshaped to [N, T, E] and projected by MatMul and Add.
// The time-major form merges the batch with the heads ([N*H, T, d]), which nnrt's per-example
// layers cannot express node by node: recognizing it is what makes PyTorch's transformers import.
// Everything is checked: the slices are the three E-wide blocks of P in the order q, k, v, every
// reshape's target (evaluated symbolically: T and N stay symbols), every permutation, the scale
// (1/sqrt(d) in all), and the mask: none; the causal one (a constant: 0 on and below the diagonal,
// -inf or <= -1e9 above); or a key padding mask computed from a graph input [N, T] of zeros and
// ones, as PyTorch writes key_padding_mask: Where(mask, -inf, 0) (or Where(mask, 0, -inf) for a
// mask of the tokens to keep), maybe times 1, of the input reshaped and expanded to [N*H, 1, T]
// (time-major) or [N, 1 or H, 1, T], every step's shape checked; Where(mask, -inf, causal) is both
// masks. That input becomes the layer's second input. A mask of another kind is refused with that
// reason.
#include <cmath>

#include "onnx_import_pattern.h"

namespace nnrt::io::onnx_format {

namespace {

enum class Layout { kTimeMajor, kBatchFirst };

// y = x W^T + b with PyTorch's weight layout [out, in].
struct Projection {
  std::string x;
  HostTensor weight;
  std::optional<HostTensor> bias;
};

struct Attention {
  std::string entry, result;
  Layout layout = Layout::kTimeMajor;
  int64_t width = 0, heads = 0;
  Projection in, out;
  bool causal = false;
  int64_t mask_tokens = 0;
  std::string key_mask, key_mask_kind;  // the graph input of a key padding mask, and "padding" or "keep"
  std::string mask_problem;  // non-empty: a mask nnrt cannot express, and why
};

HostTensor transposed_matrix(const HostTensor &w) {
  std::vector<float> v = w.floats(), t(v.size());
  const int64_t rows = w.dims[0], cols = w.dims[1];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
  return float_values("", {cols, rows}, t);
}

// The index of the constant operand of a two-input node, or -1.
int constant_operand(const GraphPattern &g, const onnx::NodeProto &n) {
  if (n.input_size() != 2) return -1;
  if (g.is_constant(n.input(1))) return 1;
  return g.is_constant(n.input(0)) ? 0 : -1;
}

// y = MatMul(x, W) (+ b, either side of the Add), or Gemm(x, W, b) with transB = 1.
std::optional<Projection> projection(const GraphPattern &g, const std::string &y) {
  Projection p;
  std::string product = y;
  if (const onnx::NodeProto *add = g.producer(y, "Add")) {
    int c = constant_operand(g, *add);
    if (c < 0) return std::nullopt;
    p.bias = g.constant(add->input(c));
    product = add->input(1 - c);
  }
  if (const onnx::NodeProto *mm = g.producer(product, "MatMul")) {
    std::optional<HostTensor> w = g.constant(mm->input(1));
    if (!w || w->dims.size() != 2 || g.is_constant(mm->input(0))) return std::nullopt;
    p.x = mm->input(0);
    p.weight = transposed_matrix(*w);
  } else if (const onnx::NodeProto *gemm = g.producer(product, "Gemm")) {
    if (p.bias || gemm->input_size() < 2 || GraphPattern::attr_int(*gemm, "transA", 0) != 0 ||
        GraphPattern::attr_int(*gemm, "transB", 0) != 1 || GraphPattern::attr_float(*gemm, "alpha", 1) != 1 ||
        GraphPattern::attr_float(*gemm, "beta", 1) != 1) {
      return std::nullopt;
    }
    std::optional<HostTensor> w = g.constant(gemm->input(1));
    if (!w || w->dims.size() != 2) return std::nullopt;
    p.x = gemm->input(0);
    p.weight = float_values("", w->dims, w->floats());
    if (gemm->input_size() > 2 && !gemm->input(2).empty()) {
      p.bias = g.constant(gemm->input(2));
      if (!p.bias) return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  if (p.bias) {
    if (p.bias->dims.size() != 1 || p.bias->dims[0] != p.weight.dims[0]) return std::nullopt;
    p.bias = float_values("", p.bias->dims, p.bias->floats());
  }
  return p;
}

class Matcher {
 public:
  explicit Matcher(const GraphPattern &g) : g_(g) {}
  std::optional<Fusion> at_softmax(int index);

 private:
  // `name` made by a Transpose with `perm`: its input.
  std::optional<std::string> transposed(const std::string &name, const std::vector<int64_t> &perm) const {
    const onnx::NodeProto *t = g_.producer(name, "Transpose");
    if (!t || GraphPattern::attr_ints(*t, "perm") != perm) return std::nullopt;
    return t->input(0);
  }
  // Strips a Mul or Div by a constant scalar off `name`; returns the factor (1 when none).
  double unscale(std::string &name) const {
    const onnx::NodeProto *n = g_.producer(name, "Mul");
    if (!n) n = g_.producer(name, "Div");
    if (!n) return 1;
    int c = constant_operand(g_, *n);
    std::optional<double> s = c < 0 ? std::nullopt : g_.scalar(n->input(c));
    if (!s || (n->op_type() == "Div" && (c != 1 || *s == 0))) return 1;
    name = n->input(1 - c);
    return n->op_type() == "Div" ? 1 / *s : *s;
  }
  // The target of Reshape `r` with its 0s (copy the input's dim) and one -1 (the rest) resolved.
  std::optional<SymShape> reshape_target(const onnx::NodeProto &r) const;
  const onnx::NodeProto *sole_reader(const std::string &name, const char *op_type) const {
    return g_.sole_reader(name, op_type);
  }
  void read_mask(const HostTensor &mask, Attention &a) const;
  bool read_key_mask(std::string m, Attention &a);
  // A constant scalar, or the value a ConstantOfShape fills with.
  std::optional<double> filled_scalar(const std::string &name) const;

  const GraphPattern &g_;
  std::map<std::string, SymShape> shapes_;  // symbolic shapes of the run-time values matched so far
};

std::optional<SymShape> Matcher::reshape_target(const onnx::NodeProto &r) const {
  if (r.input_size() != 2 || GraphPattern::attr_int(r, "allowzero", 0) != 0) return std::nullopt;
  std::optional<SymShape> t = g_.ints(r.input(1), shapes_);
  auto in = shapes_.find(r.input(0));
  if (!t || in == shapes_.end()) return std::nullopt;
  SymInt total = SymInt::constant(1), rest = SymInt::constant(1);
  for (const SymInt &d : in->second) total = total * d;
  int infer = -1;
  for (size_t i = 0; i < t->size(); ++i) {
    SymInt &d = (*t)[i];
    if (d == SymInt::constant(0)) {
      if (i >= in->second.size()) return std::nullopt;
      d = in->second[i];
    }
    if (d == SymInt::constant(-1)) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(i);
    } else {
      rest = rest * d;
    }
  }
  if (infer >= 0) (*t)[infer] = total / rest;
  for (const SymInt &d : *t)
    if (!d.known) return std::nullopt;
  return t;
}

void Matcher::read_mask(const HostTensor &mask, Attention &a) const {
  const std::vector<int64_t> &d = mask.dims;
  bool square = d.size() >= 2 && d[d.size() - 1] == d[d.size() - 2];
  for (size_t i = 0; i + 2 < d.size(); ++i) square = square && d[i] == 1;
  if (!square) {
    a.mask_problem = cat("an attention mask of shape ", to_string(Shape::of(d)), " (a mask [T, T] is read)");
    return;
  }
  const int64_t t = d.back();
  std::vector<float> m = mask.floats();
  bool zero = true, causal = true;
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t j = 0; j < t; ++j) {
      float v = m[i * t + j];
      zero = zero && v == 0;
      causal = causal && (j <= i ? v == 0 : v <= -1e9f);
    }
  }
  if (zero) return;
  if (!causal) {
    a.mask_problem = "an additive attention mask other than the causal one (0 on and below the diagonal, -inf above)";
    return;
  }
  a.causal = true;
  a.mask_tokens = t;
}

std::optional<double> Matcher::filled_scalar(const std::string &name) const {
  if (std::optional<double> v = g_.scalar(name)) return v;
  const onnx::NodeProto *n = g_.producer(name, "ConstantOfShape");
  if (!n) return std::nullopt;
  for (const auto &attr : n->attribute()) {
    if (attr.name() != "value") continue;
    onnx::TensorProto t = attr.t();
    std::vector<float> v = read_tensor(t, "", "ConstantOfShape value").floats();
    if (v.size() != 1) return std::nullopt;
    return v[0];
  }
  return 0.0;  // ONNX's default: float zeros
}

bool Matcher::read_key_mask(std::string m, Attention &a) {
  const bool time_major = a.layout == Layout::kTimeMajor;
  const SymInt T = kSymT, N = kSymN, H = SymInt::constant(a.heads), one = SymInt::constant(1);
  if (const onnx::NodeProto *mul = g_.producer(m, "Mul")) {  // PyTorch's mask * 1
    int c = constant_operand(g_, *mul);
    std::optional<double> factor = c < 0 ? std::nullopt : g_.scalar(mul->input(c));
    if (!factor || *factor != 1) return false;
    m = mul->input(1 - c);
  }
  const onnx::NodeProto *where = g_.producer(m, "Where");
  if (!where || where->input_size() != 3) return false;
  std::optional<double> when_set = filled_scalar(where->input(1)), when_clear = filled_scalar(where->input(2));
  if (when_set && *when_set <= -1e9 && !when_clear) {
    // The padding filled into another mask (PyTorch's src_mask and src_key_padding_mask together):
    // a constant, read as a mask alone is (the causal one, or refused with the reason).
    std::optional<HostTensor> other = g_.constant(where->input(2));
    if (!other) return false;
    read_mask(*other, a);
    when_clear = 0.0;
  }
  if (!when_set || !when_clear) return false;
  if (*when_set <= -1e9 && *when_clear == 0) a.key_mask_kind = "padding";
  else if (*when_set == 0 && *when_clear <= -1e9) a.key_mask_kind = "keep";
  else return false;
  // Back from the condition to the graph input, through reshapes, expansions and a cast to bool.
  std::string v = where->input(0);
  std::vector<const onnx::NodeProto *> chain;
  while (const onnx::NodeProto *n = g_.producer(v)) {
    const std::string &op = n->op_type();
    if (op == "Cast" ? GraphPattern::attr_int(*n, "to", 0) != onnx::TensorProto::BOOL
                     : op != "Reshape" && op != "Expand" && op != "Unsqueeze") {
      return false;
    }
    chain.push_back(n);
    v = n->input(0);
  }
  if (g_.is_constant(v)) return false;
  // Forward again, shapes checked: [N, T] to what broadcasts over the scores.
  shapes_[v] = SymShape{N, T};
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const onnx::NodeProto &n = **it;
    const SymShape in = shapes_.at(n.input(0));
    SymShape out = in;
    if (n.op_type() == "Reshape") {
      std::optional<SymShape> t = reshape_target(n);
      if (!t) return false;
      out = *t;
    } else if (n.op_type() == "Unsqueeze") {
      std::vector<int64_t> axes = GraphPattern::attr_ints(n, "axes");
      if (n.input_size() > 1) {
        std::optional<HostTensor> t = g_.constant(n.input(1));
        if (!t) return false;
        axes = t->ints();
      }
      const auto rank = static_cast<int64_t>(in.size() + axes.size());
      std::vector<bool> unit(static_cast<size_t>(rank), false);
      for (int64_t x : axes) {
        if (x < -rank || x >= rank || unit[x < 0 ? x + rank : x]) return false;
        unit[x < 0 ? x + rank : x] = true;
      }
      out.clear();
      for (int64_t i = 0, k = 0; i < rank; ++i) out.push_back(unit[i] ? one : in[k++]);
    } else if (n.op_type() == "Expand") {
      std::optional<SymShape> t = g_.ints(n.input(1), shapes_);
      if (!t) return false;
      // numpy broadcasting of in and t
      out.assign(std::max(in.size(), t->size()), one);
      for (size_t i = 0; i < out.size(); ++i) {
        size_t from_end = out.size() - 1 - i;
        SymInt x = from_end < in.size() ? in[in.size() - 1 - from_end] : one;
        SymInt y = from_end < t->size() ? (*t)[t->size() - 1 - from_end] : one;
        if (x == one) out[i] = y;
        else if (y == one || x == y) out[i] = x;
        else return false;
        if (!out[i].known) return false;
      }
    }
    shapes_[n.output(0)] = out;
  }
  const SymShape &mask = shapes_.at(where->input(0));
  bool fits = time_major ? mask == SymShape{N * H, one, T}
                         : (mask == SymShape{N, one, one, T} || mask == SymShape{N, H, one, T});
  if (!fits) return false;
  a.key_mask = v;
  return true;
}

void emit_attention(Importer &im, const Attention &a) {
  if (!a.mask_problem.empty()) im.unsupported("self-attention with ", a.mask_problem, " is not supported");
  const bool time_major = a.layout == Layout::kTimeMajor;
  const Value &x = im.value(a.entry);
  if (x.constant) im.unsupported("the attention's input \"", a.entry, "\" is a constant");
  if (!im.batch()) im.unsupported("attention in a graph imported without a batch ({\"batch\": false}) is not supported");
  const int32_t batch_axis = time_major ? 1 : 0;
  if (x.batch_axis != batch_axis) {
    im.unsupported("the attention's input \"", a.entry, "\" has the batch in ONNX dim ", x.batch_axis, "; its layout (",
                   time_major ? "[T, N, E]" : "[N, T, E]", ") wants it in dim ", batch_axis);
  }
  if (x.shape.rank != 2 || x.shape[1] != a.width) {
    im.unsupported("the attention expects tokens of ", a.width, " features, [T, ", a.width, "] per example; its input \"",
                   a.entry, "\" is ", to_string(x.shape), " per example");
  }
  if (a.causal && a.mask_tokens != x.shape[0]) {
    im.unsupported("the causal mask is [", a.mask_tokens, ", ", a.mask_tokens, "] for ", x.shape[0], " tokens");
  }
  std::vector<std::string> inputs = {a.entry};
  Json attrs = {{"heads", a.heads}, {"causal", a.causal}, {"bias", a.in.bias.has_value()}};
  if (!a.key_mask.empty()) {
    const Value &m = im.value(a.key_mask);
    if (m.constant || m.batch_axis != 0 || !(m.shape.rank == 1 && m.shape[0] == x.shape[0])) {
      im.unsupported("the attention's key padding mask \"", a.key_mask, "\" is not a model input of one value per token (",
                     x.shape[0], " per example, batch in dim 0)");
    }
    inputs.push_back(a.key_mask);
    attrs["mask"] = a.key_mask_kind;
  }
  std::vector<std::pair<std::string, HostTensor>> params = {{"in_proj_weight", a.in.weight}};
  if (a.in.bias) params.emplace_back("in_proj_bias", *a.in.bias);
  params.emplace_back("out_proj.weight", a.out.weight);
  if (a.out.bias) params.emplace_back("out_proj.bias", *a.out.bias);
  im.accept_moved_batch();  // nnrt holds the batch first: [N, T, E] either way
  im.emit("multi_head_attention", attrs, inputs, std::move(params), a.result);
  im.move_batch(a.result, batch_axis);
}

std::optional<Fusion> Matcher::at_softmax(int index) {
  const onnx::NodeProto &softmax = g_.node(index);
  if (softmax.input_size() != 1 || softmax.output_size() != 1) return std::nullopt;
  Attention a;

  // Softmax(q k^T * scale + mask) v
  std::string scores = softmax.input(0);
  std::optional<HostTensor> mask;
  std::string key_mask;  // a mask computed at run time, checked once the heads are known
  if (const onnx::NodeProto *add = g_.producer(scores, "Add")) {
    int c = constant_operand(g_, *add);
    if (c >= 0) {
      mask = g_.constant(add->input(c));
      scores = add->input(1 - c);
    } else {
      int side = -1;  // the scores: a MatMul, maybe scaled
      for (int i = 0; i < 2; ++i) {
        std::string name = add->input(i);
        unscale(name);
        if (g_.producer(name, "MatMul")) side = side < 0 ? i : 2;
      }
      if (side < 0 || side > 1) return std::nullopt;
      key_mask = add->input(1 - side);
      scores = add->input(side);
    }
  }
  double scale = unscale(scores);
  const onnx::NodeProto *qk = g_.producer(scores, "MatMul");
  const onnx::NodeProto *pv = sole_reader(softmax.output(0), "MatMul");
  if (!qk || !pv || pv->input(0) != softmax.output(0)) return std::nullopt;
  std::string q = qk->input(0);
  scale *= unscale(q);

  // The heads' layout, from q's Transpose; q may be scaled before it too.
  std::optional<std::string> heads[3];
  if ((heads[0] = transposed(q, {1, 0, 2}))) a.layout = Layout::kTimeMajor;
  else if ((heads[0] = transposed(q, {0, 2, 1, 3}))) a.layout = Layout::kBatchFirst;
  else return std::nullopt;
  const bool time_major = a.layout == Layout::kTimeMajor;
  const int64_t rank = time_major ? 3 : 4;
  scale *= unscale(*heads[0]);
  heads[1] = transposed(qk->input(1), time_major ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{0, 2, 3, 1});
  heads[2] = transposed(pv->input(1), time_major ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 2, 1, 3});
  if (!heads[1] || !heads[2]) return std::nullopt;
  int64_t axis = GraphPattern::attr_int(softmax, "axis", g_.opset() < 13 ? 1 : -1);
  if (axis != -1 && axis != rank - 1) return std::nullopt;

  // q, k and v: Reshape(Slice(P)) of one projection P = x W_in^T + b_in.
  const onnx::NodeProto *reshape[3], *slice[3];
  for (int i = 0; i < 3; ++i) {
    reshape[i] = g_.producer(*heads[i], "Reshape");
    slice[i] = reshape[i] ? g_.producer(reshape[i]->input(0), "Slice") : nullptr;
    if (!slice[i] || slice[i]->input_size() < 4 || slice[i]->input(0) != slice[0]->input(0)) return std::nullopt;
  }
  const std::string &p = slice[0]->input(0);
  std::optional<Projection> in = projection(g_, p);
  if (!in) return std::nullopt;
  a.in = std::move(*in);
  a.entry = a.in.x;
  const int64_t e = a.in.weight.dims[1];
  if (a.in.weight.dims[0] != 3 * e) return std::nullopt;
  a.width = e;
  const SymInt T = kSymT, N = kSymN, E = SymInt::constant(e);
  auto tokens = [&](SymInt last) { return time_major ? SymShape{T, N, last} : SymShape{N, T, last}; };
  shapes_[a.entry] = tokens(E);
  shapes_[p] = tokens(SymInt::constant(3 * e));
  for (int i = 0; i < 3; ++i) {  // the i-th E-wide block of P's last dim
    const onnx::NodeProto &s = *slice[i];
    std::optional<SymShape> starts = g_.ints(s.input(1), shapes_), ends = g_.ints(s.input(2), shapes_),
                            axes = g_.ints(s.input(3), shapes_);
    if (!starts || !ends || !axes || starts->size() != 1 || ends->size() != 1 || axes->size() != 1) return std::nullopt;
    if (!((*axes)[0] == SymInt::constant(-1) || (*axes)[0] == SymInt::constant(2))) return std::nullopt;
    if (s.input_size() > 4 && !s.input(4).empty()) {
      std::optional<SymShape> steps = g_.ints(s.input(4), shapes_);
      if (!steps || steps->size() != 1 || !((*steps)[0] == SymInt::constant(1))) return std::nullopt;
    }
    const SymInt &end = (*ends)[0];
    bool to_end = i == 2 && end.is_constant() && end.c >= 3 * e;
    if (!((*starts)[0] == SymInt::constant(i * e)) || !(end == SymInt::constant((i + 1) * e) || to_end)) return std::nullopt;
    shapes_[s.output(0)] = tokens(E);
  }

  // Heads of d features: [T, N*H, d] or [N, T, H, d].
  std::optional<SymShape> target = reshape_target(*reshape[0]);
  if (!target || target->empty() || !target->back().is_constant()) return std::nullopt;
  const int64_t d = target->back().c;
  if (d <= 0 || e % d != 0) return std::nullopt;
  a.heads = e / d;
  const SymInt H = SymInt::constant(a.heads), D = SymInt::constant(d);
  const SymShape split = time_major ? SymShape{T, N * H, D} : SymShape{N, T, H, D};
  for (int i = 0; i < 3; ++i) {
    std::optional<SymShape> t = i == 0 ? target : reshape_target(*reshape[i]);
    if (!t || *t != split) return std::nullopt;
  }
  if (std::abs(scale * std::sqrt(static_cast<double>(d)) - 1) > 1e-6) return std::nullopt;

  // The heads joined ([T*N, E] or [N, T, E]) and projected.
  const onnx::NodeProto *join = sole_reader(pv->output(0), "Transpose");
  if (!join || GraphPattern::attr_ints(*join, "perm") != (time_major ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 2, 1, 3})) {
    return std::nullopt;
  }
  shapes_[join->output(0)] = split;
  const onnx::NodeProto *merge = sole_reader(join->output(0), "Reshape");
  std::optional<SymShape> merged = merge ? reshape_target(*merge) : std::nullopt;
  if (!merged || *merged != (time_major ? SymShape{T * N, E} : SymShape{N, T, E})) return std::nullopt;
  const onnx::NodeProto *project = sole_reader(merge->output(0), "Gemm");
  if (!project) project = sole_reader(merge->output(0), "MatMul");
  if (!project) return std::nullopt;
  std::string y = project->output(0);
  if (const onnx::NodeProto *add = project->op_type() == "MatMul" ? sole_reader(y, "Add") : nullptr) y = add->output(0);
  std::optional<Projection> out = projection(g_, y);
  if (!out || out->x != merge->output(0) || out->weight.dims != std::vector<int64_t>{e, e}) return std::nullopt;
  if (out->bias.has_value() != a.in.bias.has_value()) return std::nullopt;
  a.out = std::move(*out);
  a.result = y;
  if (time_major) {  // back to [T, N, E]
    shapes_[y] = SymShape{T * N, E};
    const onnx::NodeProto *unmerge = sole_reader(y, "Reshape");
    std::optional<SymShape> back = unmerge ? reshape_target(*unmerge) : std::nullopt;
    if (!back || *back != tokens(E)) return std::nullopt;
    a.result = unmerge->output(0);
  }
  if (mask) read_mask(*mask, a);
  std::vector<std::string> entries = {a.entry};
  if (!key_mask.empty()) {
    // The heads' transposes, which the mask's reshapes may measure.
    for (int i = 0; i < 3; ++i) {
      for (int c : g_.consumers(reshape[i]->output(0))) {
        const onnx::NodeProto &t = g_.node(c);
        std::vector<int64_t> perm = GraphPattern::attr_ints(t, "perm");
        if (t.op_type() != "Transpose" || perm.size() != split.size()) continue;
        SymShape moved;
        for (int64_t k : perm)
          if (k >= 0 && k < static_cast<int64_t>(split.size())) moved.push_back(split[k]);
        if (moved.size() == split.size()) shapes_[t.output(0)] = moved;
      }
    }
    if (!read_key_mask(key_mask, a)) return std::nullopt;
    entries.push_back(a.key_mask);
  }

  return g_.fusion(entries, a.result, [a](Importer &im) { emit_attention(im, a); });
}

}  // namespace

void find_attention(const GraphPattern &g, std::vector<Fusion> &out) {
  for (int i = 0; i < g.graph().node_size(); ++i) {
    if (g.node(i).op_type() != "Softmax") continue;
    Matcher m(g);
    if (std::optional<Fusion> f = m.at_softmax(i)) out.push_back(std::move(*f));
  }
}

}  // namespace nnrt::io::onnx_format
