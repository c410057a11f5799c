// ONNX elementwise arithmetic, activations, Softmax/LogSoftmax, Clip, ReduceMean/ReduceSum, Gemm
// and MatMul onto nnrt's binary (also batched matmul), activation, softmax, clip, reduce and dense
// layers.
#include <cstring>

#include "onnx_import.h"

namespace nnrt::io::onnx_format {

namespace {


void binary(Importer &im, const char *op) {
  im.check_attrs({});
  im.check_outputs(1);
  const Value &a = im.input(0), &b = im.input(1);
  const std::string &out = im.node().output(0);
  if (a.constant && b.constant) {
    fold_binary(im, op);
    return;
  }
  if (!a.constant && !b.constant) {
    // Two values with the batch in the same ONNX dim line up the same in nnrt (as a time-major
    // transformer's residual adds).
    bool same_layout = a.batch_axis == b.batch_axis && a.shape.rank == b.shape.rank && std::strcmp(op, "matmul") != 0;
    if (same_layout) im.accept_moved_batch();
    int32_t batch_axis = a.batch_axis;
    im.emit("binary", {{"op", op}}, {im.node().input(0), im.node().input(1)}, {}, out);
    if (same_layout) im.move_batch(out, batch_axis);
    return;
  }
  bool first = a.constant;
  const Value &x = first ? b : a;
  HostTensor c = im.take_constant(first ? 0 : 1, "the constant operand");
  int32_t rank = im.onnx_rank(x);
  if (static_cast<int32_t>(c.dims.size()) > rank) {
    im.unsupported("the constant ", to_string(Shape::of(c.dims)), " has more dims than the computed operand (", rank, ")");
  }
  if (std::strcmp(op, "add") == 0 && im.fuse_bias_into_dense(im.node().input(first ? 1 : 0), c)) return;
  // With the batch moved to ONNX dim k (nnrt holds it first, the other dims in order), a constant
  // over the dims after k broadcasts the same; so does a matrix on the right of a matmul, which
  // acts on each row alone (when the batch is not the contracted last dim).
  bool row_matmul = std::strcmp(op, "matmul") == 0 && !first && c.dims.size() <= 2 && x.batch_axis < rank - 1;
  if (x.batch_axis != 0 && (row_matmul || static_cast<int32_t>(c.dims.size()) < rank - x.batch_axis)) {
    im.accept_moved_batch();
  }
  if (im.batch() && static_cast<int32_t>(c.dims.size()) == rank) {
    if (c.dims[0] != 1) im.unsupported("the constant ", to_string(Shape::of(c.dims)), " varies along the batch dim");
    c.dims.erase(c.dims.begin());
  }
  for (int64_t d : c.dims)
    if (d == 0) im.unsupported("an empty constant");
  int32_t batch_axis = x.batch_axis;
  im.emit("binary", {{"op", op}, {"constant", c.dims}, {"constant_first", first}}, {im.node().input(first ? 1 : 0)},
          {{"constant", c}}, out);
  im.move_batch(out, batch_axis);
}

// An elementwise activation node: "alpha" (and "beta") attributes when it has defaults for them.
void activation(Importer &im, const char *name, double alpha_default, double beta_default = 0) {
  bool alpha = alpha_default != 0, beta = beta_default != 0;
  if (beta) im.check_attrs({"alpha", "beta"});
  else if (alpha) im.check_attrs({"alpha"});
  else im.check_attrs({"consumed_inputs"});
  im.check_outputs(1);
  im.accept_moved_batch();  // elementwise: wherever the batch is
  const Value &x = im.runtime_input(0);
  Json attrs = {{"activation", name}};
  if (alpha) attrs["alpha"] = im.attr_float("alpha", alpha_default);
  if (beta) attrs["beta"] = im.attr_float("beta", beta_default);
  if (im.fuse_activation(attrs)) return;
  im.emit("activation", attrs, {im.node().input(0)}, {}, im.node().output(0));
  im.move_batch(im.node().output(0), x.batch_axis);
}

void softmax(Importer &im, bool log) {
  im.check_attrs({"axis"});
  im.check_outputs(1);
  const Value &x = im.runtime_input(0);
  int32_t rank = im.onnx_rank(x);
  bool legacy = im.opset() < 13;  // before 13: over all dims from axis on, as one
  int64_t axis = im.attr_int("axis", legacy ? 1 : -1);
  int32_t dim = im.example_axis(axis, rank);
  bool flatten = legacy && dim != x.shape.rank - 1;
  im.emit("softmax", {{"axis", dim}, {"log", log}, {"flatten", flatten}}, {im.node().input(0)}, {}, im.node().output(0));
}

// LayerNormalization (opset 17) as layer_norm over the dims from axis on: Scale becomes the weight
// and B, when given, the bias. Only Y may be read (Mean and InvStdDev are training outputs).
void layer_normalization(Importer &im) {
  im.check_attrs({"axis", "epsilon", "stash_type"});
  im.check_outputs(1);
  const int64_t stash_type = im.attr_int("stash_type", onnx::TensorProto::FLOAT);
  if (stash_type != onnx::TensorProto::FLOAT)
    im.unsupported("stash_type ", stash_type, " is not supported (nnrt computes the statistics in float: stash_type 1)");
  im.accept_moved_batch();  // refused below when the batch is among the normalized dims
  const Value &x = im.runtime_input(0);
  const int32_t rank = im.onnx_rank(x);
  const int64_t axis = im.attr_int("axis", -1);
  const int64_t first = axis < 0 ? axis + rank : axis;
  if (im.batch() && first >= 0 && first <= x.batch_axis)
    im.unsupported("axis ", axis, " normalizes over the batch dim; import with {\"batch\": false} if dim 0 is not a batch");
  const int32_t dim = im.example_axis(x, axis);
  const Shape normalized = Shape::of(x.shape.dims.data() + dim, x.shape.rank - dim);
  const double eps = im.attr_float("epsilon", 1e-5);
  if (!(eps >= 0)) im.corrupt("epsilon ", eps, " must not be negative");
  std::vector<std::pair<std::string, HostTensor>> params;
  const char *names[] = {"weight", "bias"};
  const char *what[] = {"the scale", "the bias"};
  const bool has_bias = im.has_input(2);
  for (int i = 0; i < (has_bias ? 2 : 1); ++i) {
    HostTensor t = im.take_constant(i + 1, what[i]);
    if (t.numel() != normalized.numel())
      im.unsupported(what[i], " has shape ", to_string(Shape::of(t.dims)), "; nnrt takes one value per normalized element ",
                     to_string(normalized));
    t.dims = normalized.vec();
    params.emplace_back(names[i], std::move(t));
  }
  const int32_t batch_axis = x.batch_axis;
  im.emit("layer_norm", {{"normalized_dims", x.shape.rank - dim}, {"eps", eps}, {"bias", has_bias}}, {im.node().input(0)},
          std::move(params), im.node().output(0));
  im.move_batch(im.node().output(0), batch_axis);
}

double scalar(Importer &im, int i, const char *what) {
  const HostTensor &t = im.constant_input(i, what);
  if (t.numel() != 1) im.corrupt(what, " must be a scalar, got ", to_string(Shape::of(t.dims)));
  return t.floats()[0];
}

void clip(Importer &im) {
  im.check_outputs(1);
  im.runtime_input(0);
  Json attrs = Json::object();
  if (im.opset() < 11) {
    im.check_attrs({"min", "max"});
    if (im.has_attr("min")) attrs["min"] = im.attr_float("min", 0);
    if (im.has_attr("max")) attrs["max"] = im.attr_float("max", 0);
  } else {
    im.check_attrs({});
    if (im.has_input(1)) attrs["min"] = scalar(im, 1, "min");
    if (im.has_input(2)) attrs["max"] = scalar(im, 2, "max");
  }
  if (attrs.value("min", -1.0) == 0 && attrs.value("max", -1.0) == 6 && im.fuse_activation({{"activation", "relu6"}})) return;
  im.emit("clip", attrs, {im.node().input(0)}, {}, im.node().output(0));
}

void reduce(Importer &im, const char *op) {
  bool axes_input = std::string(op) == "sum" && im.opset() >= 13;
  if (axes_input) im.check_attrs({"keepdims", "noop_with_empty_axes"});
  else im.check_attrs({"axes", "keepdims"});
  im.check_outputs(1);
  const Value &x = im.runtime_input(0);
  std::vector<int64_t> axes = im.attr_ints("axes", {});
  if (axes_input && im.has_input(1)) axes = im.constant_input(1, "axes").ints();
  if (axes.empty() && im.attr_int("noop_with_empty_axes", 0)) {
    im.alias(im.node().output(0), im.node().input(0));
    return;
  }
  int32_t rank = im.onnx_rank(x);
  if (axes.empty())
    for (int32_t i = 0; i < rank; ++i) axes.push_back(i);
  std::vector<int64_t> dims;
  for (int64_t a : axes) dims.push_back(im.example_axis(a, rank));
  bool keepdims = im.attr_int("keepdims", 1) != 0;
  im.emit("reduce", {{"op", op}, {"axes", dims}, {"keepdims", keepdims}}, {im.node().input(0)}, {}, im.node().output(0));
}

// [rows, cols] float values transposed, times `scale`.
std::vector<float> transposed(const std::vector<float> &v, int64_t rows, int64_t cols, float scale) {
  std::vector<float> t(v.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c] * scale;
  return t;
}

// A dense layer x W^T + b for x [N, K] (ONNX rank 2 with the batch first), or with `rows` for x
// [N, ..., K] (each row of K alone, as MatMul with a constant [K, M] does: "flatten": false).
void dense(Importer &im, HostTensor b, bool trans_b, double alpha, const HostTensor *c, double beta, bool rows = false) {
  const Value &x = im.runtime_input(0);
  if (!im.batch()) im.unsupported("it needs the batch in dim 0 (import without {\"batch\": false})");
  if (!rows && x.shape.rank != 1) im.unsupported("nnrt runs it on [N, K] inputs; the input has rank ", x.shape.rank + 1);
  if (b.dims.size() != 2) im.unsupported("the weight must have 2 dims, got ", to_string(Shape::of(b.dims)));
  int64_t k = trans_b ? b.dims[1] : b.dims[0], n = trans_b ? b.dims[0] : b.dims[1];
  const int64_t features = x.shape[x.shape.rank - 1];
  if (k != features) im.shape_mismatch("the weight ", to_string(Shape::of(b.dims)), " does not fit inputs of ", features, " features");
  std::vector<std::pair<std::string, HostTensor>> params;
  Json attrs = {{"units", n}, {"bias", c != nullptr}, {"init", "zeros"}};
  if (rows) attrs["flatten"] = false;
  std::string input = im.node().input(0);
  if (std::optional<Int8Layer> int8 = int8_layer(im, 0, 1, trans_b ? 0 : 1, n)) {
    input = int8->input;
    // A QDQ Gemm or MatMul (onnx_import_quantize.cpp): nnrt's int8 dense with its integer weights.
    attrs["int8"] = int8->config;
    std::vector<float> w = trans_b ? int8->weight : transposed(int8->weight, k, n, 1);
    for (float &s : int8->scales) s *= static_cast<float>(alpha);
    params.emplace_back("weight", float_values(b.name, {n, k}, w));
    params.emplace_back("weight_scale", float_values(b.name + ".scale", {n}, int8->scales));
  } else if (trans_b && alpha == 1 && b.elem_type == onnx::TensorProto::FLOAT) {
    b.dims = {n, k};
    params.emplace_back("weight", std::move(b));  // already nnrt's [units, inputs] layout
  } else {
    std::vector<float> w = b.floats();
    std::string().swap(b.bytes);
    if (!trans_b) w = transposed(w, k, n, static_cast<float>(alpha));
    else
      for (float &v : w) v *= static_cast<float>(alpha);
    params.emplace_back("weight", float_values(b.name, {n, k}, w));
  }
  if (c) {
    // The bias must be the same for every example: [], [1], [N] or [1, N] (maybe [1, 1]).
    bool per_unit = c->numel() == n && (c->dims.size() == 1 || (c->dims.size() == 2 && c->dims[0] == 1));
    bool single = c->numel() == 1;
    if (!per_unit && !single) im.unsupported("the bias ", to_string(Shape::of(c->dims)), " varies along the batch dim");
    std::vector<float> bias = c->floats();
    if (single) bias.assign(static_cast<size_t>(n), bias[0]);
    for (float &v : bias) v *= static_cast<float>(beta);
    params.push_back({"bias", float_values(c->name, {n}, bias)});
  }
  im.emit("dense", attrs, {input}, std::move(params), im.node().output(0));
}

void gemm(Importer &im) {
  im.check_attrs({"alpha", "beta", "transA", "transB", "broadcast"});
  im.check_outputs(1);
  if (im.attr_int("transA", 0)) im.unsupported("transA = 1 is not supported (the batch is dim 0 of A)");
  HostTensor b = im.take_constant(1, "B");
  const HostTensor *c = im.has_input(2) ? &im.constant_input(2, "C") : nullptr;
  dense(im, std::move(b), im.attr_int("transB", 0) != 0, im.attr_float("alpha", 1), c, im.attr_float("beta", 1));
}

// MatMul: a dense layer for [N, K] x constant [K, M] (so that it trains); otherwise numpy's
// batched matmul (nnrt binary "matmul") of operands with at least 2 dims besides the batch (1-D
// operands, and the rows of a [N, K] operand, would mix examples).
void matmul(Importer &im) {
  im.check_attrs({});
  im.check_outputs(1);
  const Value &a = im.input(0), &b = im.input(1);
  if (!a.constant && b.constant && a.shape.rank == 1 && im.batch()) {
    dense(im, im.take_constant(1, "B"), false, 1, nullptr, 0);
    return;
  }
  // [N, ..., K] x constant [K, M] (a transformer's projections): a dense layer on the last dim,
  // whose weight is laid out once at import, not read through a broadcast matmul at every call.
  // With the batch moved (a time-major model), the rows are the same.
  const int32_t rank = im.onnx_rank(a);
  if (!a.constant && b.constant && b.tensor.dims.size() == 2 && a.shape.rank >= 2 && im.batch() && a.batch_axis < rank - 1 &&
      (b.tensor.elem_type == onnx::TensorProto::FLOAT || b.tensor.elem_type == onnx::TensorProto::DOUBLE ||
       b.tensor.elem_type == onnx::TensorProto::FLOAT16)) {
    const int32_t batch_axis = a.batch_axis;
    if (batch_axis != 0) im.accept_moved_batch();
    dense(im, im.take_constant(1, "B"), false, 1, nullptr, 0, true);
    im.move_batch(im.node().output(0), batch_axis);
    return;
  }
  for (const Value *v : {&a, &b}) {
    int32_t rank = v->constant ? static_cast<int32_t>(v->tensor.dims.size()) : v->shape.rank;
    if (rank < 2) {
      im.unsupported("nnrt multiplies operands of at least 2 dims", im.batch() ? " besides the batch" : "", ", got ",
                     v->constant ? "a constant " + to_string(Shape::of(v->tensor.dims)) : "examples " + to_string(v->shape));
    }
  }
  binary(im, "matmul");
}

}  // namespace

void register_math_ops(std::map<std::string, Importer::Translator> &t) {
  t["Add"] = [](Importer &im) { binary(im, "add"); };
  t["Sub"] = [](Importer &im) { binary(im, "sub"); };
  t["Mul"] = [](Importer &im) { binary(im, "mul"); };
  t["Div"] = [](Importer &im) { binary(im, "div"); };
  t["Relu"] = [](Importer &im) { activation(im, "relu", 0); };
  t["Sigmoid"] = [](Importer &im) { activation(im, "sigmoid", 0); };
  t["Tanh"] = [](Importer &im) { activation(im, "tanh", 0); };
  t["LeakyRelu"] = [](Importer &im) { activation(im, "leaky_relu", 0.01); };
  t["Elu"] = [](Importer &im) { activation(im, "elu", 1.0); };
  t["HardSigmoid"] = [](Importer &im) { activation(im, "hardsigmoid", 0.2, 0.5); };  // ONNX's defaults
  t["HardSwish"] = [](Importer &im) { activation(im, "hardswish", 0); };
  t["Softplus"] = [](Importer &im) { activation(im, "softplus", 0); };
  t["Erf"] = [](Importer &im) { activation(im, "erf", 0); };
  t["Softmax"] = [](Importer &im) { softmax(im, false); };
  t["LogSoftmax"] = [](Importer &im) { softmax(im, true); };
  t["LayerNormalization"] = layer_normalization;
  t["Clip"] = clip;
  t["ReduceMean"] = [](Importer &im) { reduce(im, "mean"); };
  t["ReduceSum"] = [](Importer &im) { reduce(im, "sum"); };
  t["Gemm"] = gemm;
  t["MatMul"] = matmul;
}

}  // namespace nnrt::io::onnx_format
