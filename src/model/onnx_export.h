// ONNX export: an nnrt model written as a standard ONNX graph (opset 17), each layer as the ONNX
// op(s) that compute the same thing at inference, parameters as float initializers, a symbolic
// batch dim.
#pragma once

#include <string>

#include "model/model.h"
#include "onnx.pb.h"

namespace nnrt::io::onnx_format {

inline constexpr int64_t kExportOpset = 17;

// Builds the ModelProto. Throws NNRT_ERR_UNSUPPORTED for a layer kind with no ONNX form here.
onnx::ModelProto export_model(const model::Model &m);
// export_model written atomically to `path` (NNRT_ERR_IO when it cannot be).
void export_file(const model::Model &m, const std::string &path);

}  // namespace nnrt::io::onnx_format
