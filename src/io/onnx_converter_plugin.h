// Finds and loads the ONNX converter plugin (libnnrt-onnx.so, nnrt/onnx_converter.h) in the backend
// plugin folders on first use, and keeps it loaded.
#pragma once

#include "core/json_options.h"
#include "nnrt/onnx_converter.h"

namespace nnrt::io {

// The converter's table. Throws NNRT_ERR_UNSUPPORTED when there is no usable converter: the
// message names the folders searched, or why the file found did not load.
const nnrt_onnx_converter &onnx_converter();

// For nnrt_context_describe: {"path", "loaded", "version" or "error"}. Loads the converter if it
// is not loaded yet; never throws for a missing one.
Json onnx_converter_info();

}  // namespace nnrt::io
