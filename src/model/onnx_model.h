// ONNX import and export of models, through the converter plugin (io/onnx_converter_plugin.h):
// the plugin maps ONNX onto a graph config and parameter values, and the model is built here from
// them like any model; for export the model is described to the plugin, which writes the ONNX.
#pragma once

#include <memory>
#include <string>

#include "nnrt/onnx_converter.h"
#include "model/model.h"

namespace nnrt::model {

// Imports a .onnx file (external data beside it) or buffer; `options` is the import options object
// of nnrt_model_import_onnx. Throws NNRT_ERR_IO, NNRT_ERR_CORRUPT, NNRT_ERR_UNSUPPORTED (also when
// the converter plugin is missing), NNRT_ERR_SHAPE, NNRT_ERR_INVALID_ARGUMENT (options).
std::shared_ptr<Model> import_onnx_file(std::shared_ptr<Context> ctx, const std::string &path, const Json &options);
std::shared_ptr<Model> import_onnx_memory(std::shared_ptr<Context> ctx, const void *data, size_t nbytes,
                                          const Json &options);

// import_onnx_memory through a given converter table rather than the plugin: for the ONNX fuzzer,
// which compiles the converter into itself (with coverage) instead of loading it.
std::shared_ptr<Model> import_onnx_memory_with(const nnrt_onnx_converter &converter, std::shared_ptr<Context> ctx,
                                               const void *data, size_t nbytes, const Json &options);

// Writes the model as ONNX to `path` atomically. Throws NNRT_ERR_UNSUPPORTED (a layer with no ONNX
// form, or no converter plugin), NNRT_ERR_IO.
void export_onnx(const Model &m, const std::string &path);

}  // namespace nnrt::model
