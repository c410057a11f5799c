// ONNX export: an nnrt model written as a standard ONNX graph (opset 17), each layer as the ONNX
// op(s) that compute the same thing at inference, parameters as float initializers, a symbolic
// batch dim. The model arrives as the core's description (nnrt/onnx_converter.h).
//
// Each layer type has a writer, found by type in a table; the writers live by family, beside the
// importers of the same ops: onnx_export_conv.cpp (convolutions, pooling, batchnorm),
// onnx_export_math.cpp (dense, activations, softmax, elementwise, reductions),
// onnx_export_shape.cpp (flatten, reshape, concat, transpose, slice, embedding, dropout),
// onnx_export_attention.cpp (multi_head_attention, position_embedding) and onnx_export_lstm.cpp. A new layer's ONNX form is one writer and one line in its file's
// register_*_layers.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "converter_base.h"
#include "nnrt/onnx_converter.h"
#include "onnx.pb.h"

namespace nnrt::io::onnx_format {

inline constexpr int64_t kExportOpset = 17;

// One node of the model as the description gives it.
struct ExportNode {
  std::string type, name;
  std::string where;  // "layer 3 (conv2d 'conv2')", for messages
  Json attributes;
  std::vector<int32_t> inputs;  // node indices; -1: the model input
  Shape out_shape;              // per example
};

struct ExportModel {
  Shape input;  // per example
  int32_t output = -1;
  std::vector<ExportNode> nodes;
  std::map<std::string, Shape> params;
};

// The serialised ModelProto of the described model. Throws NNRT_ERR_UNSUPPORTED for a layer kind
// with no ONNX form here.
std::string export_model(const nnrt_onnx_host &host, const std::string &description);

// The state of one export; the per-layer writers (onnx_export_*.cpp) work through it.
class Exporter {
 public:
  Exporter(const ExportModel &m, const nnrt_onnx_host &host) : m_(m), host_(host) {}
  onnx::ModelProto run();

  // ---- for the writers: the layer being written ----
  const ExportNode &node() const { return *node_; }
  const std::string &name() const { return node_->name; }
  const Json &attrs() const { return node_->attributes; }
  // The ONNX names of its inputs, and of the value it must make.
  const std::vector<std::string> &inputs() const { return inputs_; }
  const std::string &output() const { return output_; }
  // The per-example shape of its first input.
  const Shape &in_shape() const { return in_shape_; }

  // ---- the graph ----
  // Appends the ONNX node `op` reading `inputs` and making `output` (also its name).
  onnx::NodeProto &add(const std::string &op, const std::vector<std::string> &inputs, const std::string &output);
  static void set_int(onnx::NodeProto &n, const char *name, int64_t v);
  static void set_float(onnx::NodeProto &n, const char *name, double v);
  static void set_ints(onnx::NodeProto &n, const char *name, const std::vector<int64_t> &v);
  // A parameter's current value, read through the host.
  std::vector<float> values_of(const std::string &name);
  // Initializers; each returns its name, to be read by a node. param: a parameter's current
  // value; scalar: one float; ints: int64 values; tensor: float values of the given dims.
  std::string param(const std::string &name);
  // A 2-D parameter [rows, cols] transposed ("<name>_t", [cols, rows]): the right operand of a
  // MatMul computing x W^T.
  std::string param_transposed(const std::string &name);
  std::string scalar(const std::string &name, float v);
  std::string ints(const std::string &name, const std::vector<int64_t> &v);
  std::string tensor(const std::string &name, const std::vector<int64_t> &dims, const std::vector<float> &values);
  // An int64 initializer `<layer>/shape` for Reshape: the layer's output shape, with 0 (the batch
  // as it is) in front.
  std::string out_shape_with_batch();

  // A layer type's writer: emits the ONNX node(s) that compute output() from inputs().
  using LayerWriter = std::function<void(Exporter &)>;

 private:
  // Writes `node` with its type's writer, reading `inputs` and making `output` (ONNX names).
  void write_layer(const ExportNode &node, std::vector<std::string> inputs, const std::string &output);

  const ExportModel &m_;
  const nnrt_onnx_host &host_;
  onnx::GraphProto *graph_ = nullptr;
  const ExportNode *node_ = nullptr;
  std::vector<std::string> inputs_;
  std::string output_;
  Shape in_shape_;
};

// The writers, one registry per file: layer type -> writer.
void register_conv_layers(std::map<std::string, Exporter::LayerWriter> &table);
void register_math_layers(std::map<std::string, Exporter::LayerWriter> &table);
void register_shape_layers(std::map<std::string, Exporter::LayerWriter> &table);
void register_recurrent_layers(std::map<std::string, Exporter::LayerWriter> &table);
void register_attention_layers(std::map<std::string, Exporter::LayerWriter> &table);

// A layer's activation `act` (its "alpha" read from the layer's attributes) on x, making `out`
// (onnx_export_math.cpp): for the activation layer and the activations fused into dense and conv2d.
void write_activation(Exporter &ex, const std::string &act, const std::string &x, const std::string &out);

}  // namespace nnrt::io::onnx_format
