// ONNX export of dense layers, activations, softmax, elementwise ops and reductions (their import:
// onnx_import_math.cpp).
#include <cmath>

#include "converter_base.h"
#include "onnx_export.h"
#include "nnrt/nnrt.h"

namespace nnrt::io::onnx_format {

void write_activation(Exporter &ex, const std::string &act, const std::string &x, const std::string &out) {
  const Json &a = ex.attrs();
  double alpha = a.contains("alpha") ? a["alpha"].get<double>()
                 : act == "elu" || act == "swish" || act == "silu" ? 1.0
                 : act == "hardsigmoid" || act == "hard_sigmoid" ? 1.0 / 6
                                                                 : 0.01;
  double beta = a.contains("beta") ? a["beta"].get<double>() : 0.5;  // hardsigmoid's
  if (act == "identity" || act == "linear" || act == "none") ex.add("Identity", {x}, out);
  else if (act == "relu") ex.add("Relu", {x}, out);
  else if (act == "relu6") ex.add("Clip", {x, ex.scalar(out + "/min", 0.0f), ex.scalar(out + "/max", 6.0f)}, out);
  else if (act == "sigmoid") ex.add("Sigmoid", {x}, out);
  else if (act == "tanh") ex.add("Tanh", {x}, out);
  else if (act == "leaky_relu" || act == "leakyrelu") Exporter::set_float(ex.add("LeakyRelu", {x}, out), "alpha", alpha);
  else if (act == "elu") Exporter::set_float(ex.add("Elu", {x}, out), "alpha", alpha);
  else if (act == "softmax") Exporter::set_int(ex.add("Softmax", {x}, out), "axis", 1);
  else if (act == "log_softmax") Exporter::set_int(ex.add("LogSoftmax", {x}, out), "axis", 1);
  else if (act == "hardswish" || act == "hard_swish") ex.add("HardSwish", {x}, out);
  else if (act == "hardsigmoid" || act == "hard_sigmoid") {
    onnx::NodeProto &n = ex.add("HardSigmoid", {x}, out);
    Exporter::set_float(n, "alpha", alpha);
    Exporter::set_float(n, "beta", beta);
  } else if (act == "softplus") ex.add("Softplus", {x}, out);
  else if (act == "erf") ex.add("Erf", {x}, out);
  else if (act == "silu" || act == "swish") {
    // Opset 17 has no Swish: x * sigmoid(alpha x), as torch.onnx.export writes nn.SiLU.
    std::string scaled = x;
    if (alpha != 1.0) ex.add("Mul", {x, ex.scalar(out + "/alpha", static_cast<float>(alpha))}, scaled = out + "/scaled");
    ex.add("Sigmoid", {scaled}, out + "/sigmoid");
    ex.add("Mul", {x, out + "/sigmoid"}, out);
  } else if (act == "gelu_tanh") {
    // As torch.onnx.export writes GELU(approximate="tanh"): x * 0.5 * (1 + tanh(sqrt(2 / pi) *
    // (x + 0.044715 x^3))).
    ex.add("Mul", {x, x}, out + "/square");
    ex.add("Mul", {x, out + "/square"}, out + "/cube");
    ex.add("Mul", {out + "/cube", ex.scalar(out + "/kappa", 0.044715f)}, out + "/cubic");
    ex.add("Add", {x, out + "/cubic"}, out + "/inner");
    ex.add("Mul", {out + "/inner", ex.scalar(out + "/beta", static_cast<float>(std::sqrt(2.0 / M_PI)))},
           out + "/scaled");
    ex.add("Tanh", {out + "/scaled"}, out + "/tanh");
    ex.add("Add", {out + "/tanh", ex.scalar(out + "/one", 1.0f)}, out + "/plus1");
    ex.add("Mul", {x, out + "/plus1"}, out + "/prod");
    ex.add("Mul", {out + "/prod", ex.scalar(out + "/half", 0.5f)}, out);
  } else if (act == "gelu") {
    // Opset 17 has no Gelu: x * 0.5 * (1 + erf(x / sqrt(2))).
    ex.add("Div", {x, ex.scalar(out + "/sqrt2", static_cast<float>(std::sqrt(2.0)))}, out + "/scaled");
    ex.add("Erf", {out + "/scaled"}, out + "/erf");
    ex.add("Add", {out + "/erf", ex.scalar(out + "/one", 1.0f)}, out + "/plus1");
    ex.add("Mul", {x, out + "/plus1"}, out + "/prod");
    ex.add("Mul", {out + "/prod", ex.scalar(out + "/half", 0.5f)}, out);
  } else {
    fail(NNRT_ERR_UNSUPPORTED, "ONNX export: activation \"", act, "\" has no ONNX form here");
  }
}

namespace {

// dense and output as Gemm (flattening a multi-dim example first), then the fused activation; a
// dense with "flatten": false as MatMul and Add over the example's last dim.
void dense(Exporter &ex, const char *default_activation) {
  const Json &a = ex.attrs();
  const std::string &name = ex.name(), &out = ex.output();
  std::string x = ex.inputs()[0];
  std::string act = a.value("activation", default_activation);
  if (!a.value("flatten", true) && ex.in_shape().rank > 1) {
    // Applied to the last dim of a multi-dim example: MatMul by W^T (Gemm takes 2-D inputs only),
    // and a softmax over that dim (each position's units).
    const bool bias = a.value("bias", true);
    std::string z = act == "identity" || act == "linear" ? out : name + "/linear";
    ex.add("MatMul", {x, ex.param_transposed(name + ".weight")}, bias ? name + "/matmul" : z);
    if (bias) ex.add("Add", {name + "/matmul", ex.param(name + ".bias")}, z);
    if (act == "softmax" || act == "log_softmax") {
      Exporter::set_int(ex.add(act == "softmax" ? "Softmax" : "LogSoftmax", {z}, out), "axis", -1);
    } else if (z != out) {
      write_activation(ex, act, z, out);
    }
    return;
  }
  if (ex.in_shape().rank != 1) {
    Exporter::set_int(ex.add("Flatten", {x}, name + "/flat"), "axis", 1);
    x = name + "/flat";
  }
  std::vector<std::string> gi = {x, ex.param(name + ".weight")};
  if (a.value("bias", true)) gi.push_back(ex.param(name + ".bias"));
  std::string z = act == "identity" || act == "linear" ? out : name + "/gemm";
  Exporter::set_int(ex.add("Gemm", gi, z), "transB", 1);
  if (z != out) write_activation(ex, act, z, out);
}

void activation(Exporter &ex) { write_activation(ex, ex.attrs().value("activation", "identity"), ex.inputs()[0], ex.output()); }

// softmax over one example axis; with "flatten", over all the axes from it on (Flatten, Softmax
// over the flattened axis, Reshape back).
void softmax(Exporter &ex) {
  const Json &a = ex.attrs();
  const std::string &name = ex.name();
  int64_t axis = a.value("axis", -1);
  if (axis < 0) axis += ex.in_shape().rank;
  const char *op = a.value("log", false) ? "LogSoftmax" : "Softmax";
  if (!a.value("flatten", false)) {
    Exporter::set_int(ex.add(op, {ex.inputs()[0]}, ex.output()), "axis", axis + 1);
    return;
  }
  Exporter::set_int(ex.add("Flatten", {ex.inputs()[0]}, name + "/flat"), "axis", axis + 1);
  Exporter::set_int(ex.add(op, {name + "/flat"}, name + "/soft"), "axis", 1);
  ex.add("Reshape", {name + "/soft", ex.out_shape_with_batch()}, ex.output());
}

// layer_norm as LayerNormalization over the last normalized_dims axes (an absent weight as ones).
// rms_norm, which ONNX has only from opset 23, as its formula: x / sqrt(mean(x^2) + eps) * weight
// + bias, with ReduceMean over those axes.
void norm(Exporter &ex, bool rms) {
  const Json &a = ex.attrs();
  const std::string &name = ex.name();
  const int64_t dims = a.value("normalized_dims", 1);
  const double eps = a.value("eps", 1e-5);
  const bool affine = a.value("affine", true), bias = affine && a.value("bias", !rms);
  const Shape &in = ex.in_shape();
  std::vector<int64_t> normalized(in.dims.begin() + (in.rank - dims), in.dims.begin() + in.rank);
  const std::string x = ex.inputs()[0];
  if (!rms) {
    int64_t count = 1;
    for (int64_t d : normalized) count *= d;
    std::string scale = affine ? ex.param(name + ".weight") : ex.tensor(name + "/ones", normalized, std::vector<float>(count, 1.0f));
    std::vector<std::string> inputs{x, scale};
    if (bias) inputs.push_back(ex.param(name + ".bias"));
    onnx::NodeProto &n = ex.add("LayerNormalization", inputs, ex.output());
    Exporter::set_int(n, "axis", -dims);
    Exporter::set_float(n, "epsilon", eps);
    return;
  }
  std::vector<int64_t> axes;
  for (int64_t k = dims; k >= 1; --k) axes.push_back(-k);
  ex.add("Mul", {x, x}, name + "/square");
  onnx::NodeProto &mean = ex.add("ReduceMean", {name + "/square"}, name + "/mean_square");
  Exporter::set_ints(mean, "axes", axes);
  Exporter::set_int(mean, "keepdims", 1);
  ex.add("Add", {name + "/mean_square", ex.scalar(name + "/eps", static_cast<float>(eps))}, name + "/shifted");
  ex.add("Sqrt", {name + "/shifted"}, name + "/rms");
  std::string y = affine ? name + "/normalized" : ex.output();
  ex.add("Div", {x, name + "/rms"}, y);
  if (!affine) return;
  std::string scaled = bias ? name + "/scaled" : ex.output();
  ex.add("Mul", {y, ex.param(name + ".weight")}, scaled);
  if (bias) ex.add("Add", {scaled, ex.param(name + ".bias")}, ex.output());
}

// add of n inputs as a chain of n - 1 Adds.
void add(Exporter &ex) {
  const std::vector<std::string> &in = ex.inputs();
  std::string sum = in[0];
  for (size_t k = 1; k < in.size(); ++k) {
    std::string o = k + 1 == in.size() ? ex.output() : cat(ex.name(), "/sum", k);
    ex.add("Add", {sum, in[k]}, o);
    sum = o;
  }
}

// binary: its op on the inputs, one of which may be the layer's constant (a parameter).
void binary(Exporter &ex) {
  static const std::map<std::string, std::string> ops = {
      {"add", "Add"}, {"sub", "Sub"}, {"mul", "Mul"}, {"div", "Div"}, {"matmul", "MatMul"}};
  const Json &a = ex.attrs();
  std::vector<std::string> bi = ex.inputs();
  if (a.contains("constant")) {
    std::string c = ex.param(ex.name() + ".constant");
    bi.insert(a.value("constant_first", false) ? bi.begin() : bi.end(), c);
  }
  ex.add(ops.at(a.value("op", "add")), bi, ex.output());
}

void clip(Exporter &ex) {
  const Json &a = ex.attrs();
  const std::string &name = ex.name();
  std::vector<std::string> ci = {ex.inputs()[0], a.contains("min") ? ex.scalar(name + "/min", a["min"].get<float>()) : ""};
  if (a.contains("max")) ci.push_back(ex.scalar(name + "/max", a["max"].get<float>()));
  ex.add("Clip", ci, ex.output());
}

// reduce as ReduceMean (axes an attribute in opset 17) or ReduceSum (axes an input); no axes: all.
void reduce(Exporter &ex) {
  const Json &a = ex.attrs();
  const Shape &in_shape = ex.in_shape();
  std::vector<int64_t> axes;
  for (int64_t x : a.value("axes", std::vector<int64_t>{})) axes.push_back((x < 0 ? x + in_shape.rank : x) + 1);
  if (axes.empty())
    for (int32_t i = 0; i < in_shape.rank; ++i) axes.push_back(i + 1);
  bool mean = a.value("op", "sum") == "mean";
  const std::string &x = ex.inputs()[0], &out = ex.output();
  onnx::NodeProto &r = mean ? ex.add("ReduceMean", {x}, out) : ex.add("ReduceSum", {x, ex.ints(ex.name() + "/axes", axes)}, out);
  if (mean) Exporter::set_ints(r, "axes", axes);
  Exporter::set_int(r, "keepdims", a.value("keepdims", true) ? 1 : 0);
}

}  // namespace

void register_math_layers(std::map<std::string, Exporter::LayerWriter> &t) {
  t["dense"] = [](Exporter &ex) { dense(ex, "identity"); };
  t["output"] = [](Exporter &ex) { dense(ex, "softmax"); };
  t["activation"] = activation;
  t["softmax"] = softmax;
  t["layer_norm"] = [](Exporter &ex) { norm(ex, false); };
  t["rms_norm"] = [](Exporter &ex) { norm(ex, true); };
  t["add"] = add;
  t["binary"] = binary;
  t["clip"] = clip;
  t["reduce"] = reduce;
}

}  // namespace nnrt::io::onnx_format
