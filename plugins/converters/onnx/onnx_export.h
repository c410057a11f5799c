// ONNX export: an nnrt model written as a standard ONNX graph (opset 17), each layer as the ONNX
// op(s) that compute the same thing at inference, parameters as float initializers, a symbolic
// batch dim. The model arrives as the core's description (nnrt/onnx_converter.h).
#pragma once

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

}  // namespace nnrt::io::onnx_format
