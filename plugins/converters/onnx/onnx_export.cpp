#include "onnx_export.h"

#include <cmath>

#include "converter_base.h"
#include "onnx_tensor.h"
#include "nnrt/nnrt.h"

namespace nnrt::io::onnx_format {

namespace {

using onnx::AttributeProto;
using onnx::NodeProto;

const std::map<std::string, Exporter::LayerWriter> &layer_writers() {
  static const std::map<std::string, Exporter::LayerWriter> table = [] {
    std::map<std::string, Exporter::LayerWriter> t;
    register_conv_layers(t);
    register_math_layers(t);
    register_shape_layers(t);
    register_recurrent_layers(t);
    register_attention_layers(t);
    return t;
  }();
  return table;
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

void set_type(onnx::ValueInfoProto &v, const std::string &name, const Shape &example) {
  v.set_name(name);
  auto &t = *v.mutable_type()->mutable_tensor_type();
  t.set_elem_type(onnx::TensorProto::FLOAT);
  auto &s = *t.mutable_shape();
  s.add_dim()->set_dim_param("N");
  for (int32_t i = 0; i < example.rank; ++i) s.add_dim()->set_dim_value(example[i]);
}

}  // namespace

NodeProto &Exporter::add(const std::string &op, const std::vector<std::string> &inputs, const std::string &output) {
  NodeProto &n = *graph_->add_node();
  n.set_op_type(op);
  n.set_name(output);
  for (const std::string &i : inputs) n.add_input(i);
  n.add_output(output);
  return n;
}

void Exporter::set_int(NodeProto &n, const char *name, int64_t v) {
  AttributeProto &a = *n.add_attribute();
  a.set_name(name);
  a.set_type(AttributeProto::INT);
  a.set_i(v);
}

void Exporter::set_float(NodeProto &n, const char *name, double v) {
  AttributeProto &a = *n.add_attribute();
  a.set_name(name);
  a.set_type(AttributeProto::FLOAT);
  a.set_f(static_cast<float>(v));
}

void Exporter::set_ints(NodeProto &n, const char *name, const std::vector<int64_t> &v) {
  AttributeProto &a = *n.add_attribute();
  a.set_name(name);
  a.set_type(AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
}

std::vector<float> Exporter::values_of(const std::string &name) {
  auto it = m_.params.find(name);
  if (it == m_.params.end()) fail(NNRT_ERR_INTERNAL, "ONNX export: the model has no parameter ", name);
  std::vector<float> values(static_cast<size_t>(it->second.numel()));
  char message[NNRT_ONNX_MESSAGE_SIZE] = "";
  nnrt_status st = host_.read_param(host_.self, name.c_str(), values.data(), values.size(), message, sizeof message);
  if (st != NNRT_OK) fail(st, "ONNX export: ", message);
  return values;
}

std::string Exporter::tensor(const std::string &name, const std::vector<int64_t> &dims, const std::vector<float> &values) {
  write_tensor(*graph_->add_initializer(), name, dims, values);
  return name;
}

std::string Exporter::param(const std::string &name) { return tensor(name, m_.params.at(name).vec(), values_of(name)); }

std::string Exporter::param_transposed(const std::string &name) {
  const Shape &shape = m_.params.at(name);
  if (shape.rank != 2) fail(NNRT_ERR_INTERNAL, "ONNX export: ", name, " is not a matrix: ", to_string(shape));
  const int64_t rows = shape[0], cols = shape[1];
  std::vector<float> w = values_of(name), t(w.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = w[r * cols + c];
  return tensor(name + "_t", {cols, rows}, t);
}

std::string Exporter::scalar(const std::string &name, float v) { return tensor(name, {}, {v}); }

std::string Exporter::ints(const std::string &name, const std::vector<int64_t> &v) {
  write_int64_tensor(*graph_->add_initializer(), name, v);
  return name;
}

std::string Exporter::out_shape_with_batch() {
  std::vector<int64_t> shape = node_->out_shape.vec();
  shape.insert(shape.begin(), 0);  // 0: the batch dim as it is
  return ints(node_->name + "/shape", shape);
}

void Exporter::write_layer(const ExportNode &node, std::vector<std::string> inputs, const std::string &output) {
  const auto &table = layer_writers();
  auto it = table.find(node.type);
  if (it == table.end()) fail(NNRT_ERR_UNSUPPORTED, "ONNX export: ", node.where, " has no ONNX form here");
  node_ = &node;
  inputs_ = std::move(inputs);
  output_ = output;
  in_shape_ = node.inputs[0] < 0 ? m_.input : m_.nodes[node.inputs[0]].out_shape;
  it->second(*this);
  node_ = nullptr;
}

onnx::ModelProto Exporter::run() {
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
    write_layer(nodes[i], std::move(in), names[i]);
  }
  set_type(*graph_->add_output(), "output", nodes[out_node].out_shape);
  graph_ = nullptr;
  return proto;
}

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
  onnx::ModelProto proto = Exporter(m, host).run();
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) fail(NNRT_ERR_INTERNAL, "ONNX export: the model could not be serialised");
  return bytes;
}

}  // namespace nnrt::io::onnx_format
