#include "onnx_export.h"

#include <cmath>

#include "converter_base.h"
#include "onnx_tensor.h"
#include "nnrt/nnrt.h"

namespace nnrt::io::onnx_format {

namespace {

using onnx::AttributeProto;
using onnx::NodeProto;

// An int or [a, b] config value as two ints.
std::vector<int64_t> pair_of(const Json &attrs, const char *key, std::vector<int64_t> fallback) {
  if (!attrs.contains(key)) return fallback;
  const Json &v = attrs[key];
  if (v.is_number_integer()) return {v.get<int64_t>(), v.get<int64_t>()};
  return v.get<std::vector<int64_t>>();
}

// A conv2d's or pool's "padding" as ONNX pads [top, left, bottom, right].
std::vector<int64_t> pads_of(const Json &attrs, const Shape &in, const std::vector<int64_t> &kernel,
                             const std::vector<int64_t> &stride, const std::vector<int64_t> &dilation) {
  if (!attrs.contains("padding")) return {0, 0, 0, 0};
  const Json &p = attrs["padding"];
  if (p.is_string()) {
    if (p.get<std::string>() == "valid") return {0, 0, 0, 0};
    std::vector<int64_t> pads(4);  // "same": as the conv2d layer computes it, the odd one at the end
    for (int i = 0; i < 2; ++i) {
      int64_t n = in[1 + i], out = (n + stride[i] - 1) / stride[i];
      int64_t span = dilation[i] * (kernel[i] - 1) + 1;
      int64_t total = std::max<int64_t>((out - 1) * stride[i] + span - n, 0);
      pads[i] = total / 2;
      pads[i + 2] = total - total / 2;
    }
    return pads;
  }
  if (p.is_array() && p.size() == 4) return p.get<std::vector<int64_t>>();
  std::vector<int64_t> hw = pair_of(attrs, "padding", {0, 0});
  return {hw[0], hw[1], hw[0], hw[1]};
}

Shape shape_of(const Json &dims) { return Shape::of(dims.get<std::vector<int64_t>>()); }

ExportModel read_description(const Json &d) {
  ExportModel m;
  m.input = shape_of(d.at("input"));
  m.output = d.at("output").get<int32_t>();
  for (const Json &n : d.at("nodes")) {
    ExportNode node;
    node.type = n.at("type").get<std::string>();
    node.name = n.at("name").get<std::string>();
    node.where = n.at("where").get<std::string>();
    node.attributes = n.at("attributes");
    node.inputs = n.at("inputs").get<std::vector<int32_t>>();
    node.out_shape = shape_of(n.at("out_shape"));
    m.nodes.push_back(std::move(node));
  }
  for (const auto &[name, dims] : d.at("params").items()) m.params[name] = shape_of(dims);
  return m;
}

class Writer {
 public:
  Writer(const ExportModel &m, const nnrt_onnx_host &host) : m_(m), host_(host) {}

  onnx::ModelProto run();

 private:
  NodeProto &add(const std::string &op, std::vector<std::string> inputs, const std::string &output) {
    NodeProto &n = *graph_->add_node();
    n.set_op_type(op);
    n.set_name(output);
    for (const std::string &i : inputs) n.add_input(i);
    n.add_output(output);
    return n;
  }
  static void set_int(NodeProto &n, const char *name, int64_t v) {
    AttributeProto &a = *n.add_attribute();
    a.set_name(name);
    a.set_type(AttributeProto::INT);
    a.set_i(v);
  }
  static void set_float(NodeProto &n, const char *name, double v) {
    AttributeProto &a = *n.add_attribute();
    a.set_name(name);
    a.set_type(AttributeProto::FLOAT);
    a.set_f(static_cast<float>(v));
  }
  static void set_ints(NodeProto &n, const char *name, const std::vector<int64_t> &v) {
    AttributeProto &a = *n.add_attribute();
    a.set_name(name);
    a.set_type(AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
  }
  // A parameter's current value.
  std::vector<float> values_of(const std::string &name) {
    auto it = m_.params.find(name);
    if (it == m_.params.end()) fail(NNRT_ERR_INTERNAL, "ONNX export: the model has no parameter ", name);
    std::vector<float> values(static_cast<size_t>(it->second.numel()));
    char message[NNRT_ONNX_MESSAGE_SIZE] = "";
    nnrt_status st = host_.read_param(host_.self, name.c_str(), values.data(), values.size(), message, sizeof message);
    if (st != NNRT_OK) fail(st, "ONNX export: ", message);
    return values;
  }
  // A float initializer holding a parameter's current value.
  std::string param(const std::string &name) {
    write_tensor(*graph_->add_initializer(), name, m_.params.at(name).vec(), values_of(name));
    return name;
  }
  std::string scalar(const std::string &name, float v) {
    write_tensor(*graph_->add_initializer(), name, {}, {v});
    return name;
  }
  std::string ints(const std::string &name, const std::vector<int64_t> &v) {
    write_int64_tensor(*graph_->add_initializer(), name, v);
    return name;
  }

  // An lstm as an ONNX LSTM (time-major, between Transposes), and a slice as a Slice.
  void lstm(const ExportNode &node, const Shape &in_shape, const std::string &x, const std::string &out);
  void slice(const ExportNode &node, const std::string &x, const std::string &out);
  // Emits the activation `name` (with alpha) on x; returns the output's name.
  std::string activation(const std::string &name, double alpha, const std::string &x, const std::string &out);
  void layer(const ExportNode &node, const std::vector<std::string> &in, const std::string &out);

  const ExportModel &m_;
  const nnrt_onnx_host &host_;
  onnx::GraphProto *graph_ = nullptr;
};

std::string Writer::activation(const std::string &name, double alpha, const std::string &x, const std::string &out) {
  if (name == "identity" || name == "linear" || name == "none") add("Identity", {x}, out);
  else if (name == "relu") add("Relu", {x}, out);
  else if (name == "sigmoid") add("Sigmoid", {x}, out);
  else if (name == "tanh") add("Tanh", {x}, out);
  else if (name == "leaky_relu" || name == "leakyrelu") set_float(add("LeakyRelu", {x}, out), "alpha", alpha);
  else if (name == "elu") set_float(add("Elu", {x}, out), "alpha", alpha);
  else if (name == "softmax") set_int(add("Softmax", {x}, out), "axis", 1);
  else if (name == "log_softmax") set_int(add("LogSoftmax", {x}, out), "axis", 1);
  else if (name == "gelu") {
    // Opset 17 has no Gelu: x * 0.5 * (1 + erf(x / sqrt(2))).
    add("Div", {x, scalar(out + "/sqrt2", static_cast<float>(std::sqrt(2.0)))}, out + "/scaled");
    add("Erf", {out + "/scaled"}, out + "/erf");
    add("Add", {out + "/erf", scalar(out + "/one", 1.0f)}, out + "/plus1");
    add("Mul", {x, out + "/plus1"}, out + "/prod");
    add("Mul", {out + "/prod", scalar(out + "/half", 0.5f)}, out);
  } else {
    fail(NNRT_ERR_UNSUPPORTED, "ONNX export: activation \"", name, "\" has no ONNX form here");
  }
  return out;
}

void Writer::layer(const ExportNode &node, const std::vector<std::string> &in, const std::string &out) {
  const Json &a = node.attributes;
  const std::string &name = node.name;
  const std::string &type = node.type;
  auto act_alpha = [&](const std::string &act) {
    double fallback = act == "elu" ? 1.0 : 0.01;
    return a.contains("alpha") ? a["alpha"].get<double>() : fallback;
  };
  Shape in_shape = node.inputs[0] < 0 ? m_.input : m_.nodes[node.inputs[0]].out_shape;

  if (type == "dense" || type == "output") {
    std::string x = in[0];
    if (in_shape.rank != 1) {
      set_int(add("Flatten", {x}, name + "/flat"), "axis", 1);
      x = name + "/flat";
    }
    std::vector<std::string> gi = {x, param(name + ".weight")};
    if (a.value("bias", true)) gi.push_back(param(name + ".bias"));
    std::string act = a.value("activation", type == "output" ? "softmax" : "identity");
    std::string z = act == "identity" || act == "linear" ? out : name + "/gemm";
    set_int(add("Gemm", gi, z), "transB", 1);
    if (z != out) activation(act, act_alpha(act), z, out);
  } else if (type == "conv2d" || type == "conv2d_transpose") {
    // Both weights are in ONNX's layouts already (Conv [M, C / group, kh, kw], ConvTranspose
    // [C, M / group, kh, kw]); a transposed convolution's padding is always explicit.
    bool transposed = type == "conv2d_transpose";
    std::vector<int64_t> k = pair_of(a, "kernel", {}), s = pair_of(a, "stride", {1, 1}), d = pair_of(a, "dilation", {1, 1});
    std::vector<std::string> ci = {in[0], param(name + ".weight")};
    if (a.value("bias", true)) ci.push_back(param(name + ".bias"));
    std::string act = a.value("activation", "identity");
    std::string z = act == "identity" || act == "linear" ? out : name + "/conv";
    NodeProto &c = add(transposed ? "ConvTranspose" : "Conv", ci, z);
    set_ints(c, "kernel_shape", k);
    set_ints(c, "strides", s);
    set_ints(c, "dilations", d);
    set_ints(c, "pads", pads_of(a, in_shape, k, s, d));
    set_int(c, "group", a.value("groups", 1));
    if (transposed) set_ints(c, "output_padding", pair_of(a, "output_padding", {0, 0}));
    if (z != out) activation(act, act_alpha(act), z, out);
  } else if (type == "maxpool2d" || type == "avgpool2d") {
    std::vector<int64_t> k = pair_of(a, "kernel", {}), s = pair_of(a, "stride", k);
    NodeProto &p = add(type == "maxpool2d" ? "MaxPool" : "AveragePool", {in[0]}, out);
    set_ints(p, "kernel_shape", k);
    set_ints(p, "strides", s);
    set_ints(p, "pads", pads_of(a, in_shape, k, s, {1, 1}));
    if (type == "avgpool2d") set_int(p, "count_include_pad", a.value("count_include_pad", true) ? 1 : 0);
  } else if (type == "global_avgpool2d" || type == "global_maxpool2d") {
    add(type == "global_avgpool2d" ? "GlobalAveragePool" : "GlobalMaxPool", {in[0]}, name + "/pool");
    set_int(add("Flatten", {name + "/pool"}, out), "axis", 1);  // nnrt gives [N, C]
  } else if (type == "batchnorm") {
    NodeProto &b = add("BatchNormalization", {in[0], param(name + ".weight"), param(name + ".bias"),
                                              param(name + ".running_mean"), param(name + ".running_var")}, out);
    set_float(b, "epsilon", a.value("eps", 1e-5));
    set_float(b, "momentum", 1.0 - a.value("momentum", 0.1));
  } else if (type == "dropout") {
    add("Dropout", {in[0], scalar(name + "/ratio", a.value("rate", 0.5f))}, out);
  } else if (type == "activation") {
    std::string act = a.value("activation", "identity");
    activation(act, act_alpha(act), in[0], out);
  } else if (type == "flatten") {
    set_int(add("Flatten", {in[0]}, out), "axis", 1);
  } else if (type == "reshape" || (type == "softmax" && a.value("flatten", false))) {
    std::vector<int64_t> shape = node.out_shape.vec();
    shape.insert(shape.begin(), 0);  // 0: the batch dim as it is
    if (type == "reshape") {
      add("Reshape", {in[0], ints(name + "/shape", shape)}, out);
    } else {
      int64_t axis = a.value("axis", -1);
      if (axis < 0) axis += in_shape.rank;
      set_int(add("Flatten", {in[0]}, name + "/flat"), "axis", axis + 1);
      set_int(add(a.value("log", false) ? "LogSoftmax" : "Softmax", {name + "/flat"}, name + "/soft"), "axis", 1);
      add("Reshape", {name + "/soft", ints(name + "/shape", shape)}, out);
    }
  } else if (type == "softmax") {
    int64_t axis = a.value("axis", -1);
    if (axis < 0) axis += in_shape.rank;
    set_int(add(a.value("log", false) ? "LogSoftmax" : "Softmax", {in[0]}, out), "axis", axis + 1);
  } else if (type == "add") {
    std::string sum = in[0];
    for (size_t k = 1; k < in.size(); ++k) {
      std::string o = k + 1 == in.size() ? out : cat(name, "/sum", k);
      add("Add", {sum, in[k]}, o);
      sum = o;
    }
  } else if (type == "concat") {
    int64_t axis = a.value("axis", 0);
    if (axis < 0) axis += in_shape.rank;
    set_int(add("Concat", in, out), "axis", axis + 1);
  } else if (type == "embedding") {
    set_int(add("Cast", {in[0]}, name + "/indices"), "to", onnx::TensorProto::INT64);
    add("Gather", {param(name + ".weight"), name + "/indices"}, out);
  } else if (type == "binary") {
    static const std::map<std::string, std::string> ops = {
        {"add", "Add"}, {"sub", "Sub"}, {"mul", "Mul"}, {"div", "Div"}, {"matmul", "MatMul"}};
    std::vector<std::string> bi = in;
    if (a.contains("constant")) {
      std::string c = param(name + ".constant");
      bi.insert(a.value("constant_first", false) ? bi.begin() : bi.end(), c);
    }
    add(ops.at(a.value("op", "add")), bi, out);
  } else if (type == "clip") {
    std::vector<std::string> ci = {in[0], a.contains("min") ? scalar(name + "/min", a["min"].get<float>()) : ""};
    if (a.contains("max")) ci.push_back(scalar(name + "/max", a["max"].get<float>()));
    add("Clip", ci, out);
  } else if (type == "reduce") {
    std::vector<int64_t> axes;
    for (int64_t x : a.value("axes", std::vector<int64_t>{})) axes.push_back((x < 0 ? x + in_shape.rank : x) + 1);
    if (axes.empty())
      for (int32_t i = 0; i < in_shape.rank; ++i) axes.push_back(i + 1);
    bool mean = a.value("op", "sum") == "mean";
    NodeProto &r = mean ? add("ReduceMean", {in[0]}, out) : add("ReduceSum", {in[0], ints(name + "/axes", axes)}, out);
    if (mean) set_ints(r, "axes", axes);
    set_int(r, "keepdims", a.value("keepdims", true) ? 1 : 0);
  } else if (type == "lstm") {
    lstm(node, in_shape, in[0], out);
  } else if (type == "slice") {
    slice(node, in[0], out);
  } else if (type == "transpose") {
    std::vector<int64_t> perm = {0};
    for (int64_t p : a["perm"].get<std::vector<int64_t>>()) perm.push_back(p + 1);
    set_ints(add("Transpose", {in[0]}, out), "perm", perm);
  } else {
    fail(NNRT_ERR_UNSUPPORTED, "ONNX export: ", node.where, " has no ONNX form here");
  }
}

// ONNX orders an LSTM's gate blocks i, o, f, c; nnrt, as PyTorch, i, f, c, o: ONNX's block k is
// nnrt's block kNnrtBlock[k].
constexpr int kNnrtBlock[4] = {0, 3, 1, 2};

// The gate blocks of `values` ([4 * block] in nnrt's order) appended to `out` in ONNX's order.
void append_in_onnx_order(const std::vector<float> &values, std::vector<float> &out) {
  size_t block = values.size() / 4;
  for (int k : kNnrtBlock) out.insert(out.end(), values.begin() + k * block, values.begin() + (k + 1) * block);
}

void Writer::lstm(const ExportNode &node, const Shape &in_shape, const std::string &x, const std::string &out) {
  const std::string &name = node.name;
  if (in_shape.rank != 2) {
    fail(NNRT_ERR_UNSUPPORTED, "ONNX export: ", node.where, ": an lstm over examples ", to_string(in_shape),
         " has no ONNX form here (only [time, features])");
  }
  int64_t hidden = node.attributes.value("units", int64_t(0)), steps = in_shape[0], features = in_shape[1];
  bool sequences = node.attributes.value("return_sequences", false);
  std::vector<float> w, r, b;
  append_in_onnx_order(values_of(name + ".weight_ih_l0"), w);
  append_in_onnx_order(values_of(name + ".weight_hh_l0"), r);
  append_in_onnx_order(values_of(name + ".bias_ih_l0"), b);
  append_in_onnx_order(values_of(name + ".bias_hh_l0"), b);
  write_tensor(*graph_->add_initializer(), name + "/W", {1, 4 * hidden, features}, w);
  write_tensor(*graph_->add_initializer(), name + "/R", {1, 4 * hidden, hidden}, r);
  write_tensor(*graph_->add_initializer(), name + "/B", {1, 8 * hidden}, b);
  // Layout 0 (time-major) between Transposes, as torch.onnx.export writes it: ONNX Runtime's LSTM
  // kernels refuse layout 1 ("batchwise recurrent operations are not supported").
  set_ints(add("Transpose", {x}, name + "/time_major"), "perm", {1, 0, 2});
  std::string y = name + (sequences ? "/Y" : "/Y_h");
  NodeProto &n = add("LSTM", {name + "/time_major", name + "/W", name + "/R", name + "/B"}, y);
  if (!sequences) {
    n.clear_output();
    n.add_output("");
    n.add_output(y);
  }
  set_int(n, "hidden_size", hidden);
  if (sequences) {
    // Y [T, 1, N, H] -> [N, T, 1, H] -> [N, T, H]
    set_ints(add("Transpose", {y}, name + "/batch_first"), "perm", {2, 0, 1, 3});
    add("Reshape", {name + "/batch_first", ints(name + "/shape", {0, steps, hidden})}, out);
  } else {
    add("Squeeze", {y, ints(name + "/axes", {0})}, out);  // Y_h [1, N, H] -> [N, H]
  }
}

void Writer::slice(const ExportNode &node, const std::string &x, const std::string &out) {
  const Json &a = node.attributes;
  int64_t start = a.value("start", int64_t(0)), length = a.value("length", int64_t(1));
  add("Slice", {x, ints(node.name + "/starts", {start}), ints(node.name + "/ends", {start + length}),
                ints(node.name + "/axes", {a.value("axis", int64_t(0)) + 1})}, out);
}

void set_type(onnx::ValueInfoProto &v, const std::string &name, const Shape &example) {
  v.set_name(name);
  auto &t = *v.mutable_type()->mutable_tensor_type();
  t.set_elem_type(onnx::TensorProto::FLOAT);
  auto &s = *t.mutable_shape();
  s.add_dim()->set_dim_param("N");
  for (int32_t i = 0; i < example.rank; ++i) s.add_dim()->set_dim_value(example[i]);
}

onnx::ModelProto Writer::run() {
  onnx::ModelProto proto;
  proto.set_ir_version(8);
  proto.set_producer_name("nnrt");
  proto.set_producer_version(nnrt::kVersionString);
  auto *opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(kExportOpset);
  graph_ = proto.mutable_graph();
  graph_->set_name("nnrt");
  set_type(*graph_->add_input(), "input", m_.input);

  const auto &nodes = m_.nodes;
  int32_t out_node = m_.output;
  if (out_node < 0 || static_cast<size_t>(out_node) >= nodes.size()) fail(NNRT_ERR_INTERNAL, "ONNX export: no output node");
  std::vector<std::string> names(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) names[i] = static_cast<int32_t>(i) == out_node ? "output" : nodes[i].name;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<std::string> in;
    for (int32_t d : nodes[i].inputs) in.push_back(d < 0 ? "input" : names[d]);
    layer(nodes[i], in, names[i]);
  }
  set_type(*graph_->add_output(), "output", nodes[out_node].out_shape);
  return proto;
}

}  // namespace

std::string export_model(const nnrt_onnx_host &host, const std::string &description) {
  Json d;
  try {
    d = Json::parse(description);
  } catch (const std::exception &e) {
    fail(NNRT_ERR_INTERNAL, "ONNX export: the model description is not JSON: ", e.what());
  }
  ExportModel m;
  try {
    m = read_description(d);
  } catch (const Json::exception &e) {
    fail(NNRT_ERR_INTERNAL, "ONNX export: the model description lacks a field: ", e.what());
  }
  onnx::ModelProto proto = Writer(m, host).run();
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) fail(NNRT_ERR_INTERNAL, "ONNX export: the model could not be serialised");
  return bytes;
}

}  // namespace nnrt::io::onnx_format
