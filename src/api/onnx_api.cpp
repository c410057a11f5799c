// nnrt_model_import_onnx, nnrt_model_import_onnx_memory, nnrt_model_export_onnx.
#include "api/handles.h"
#include "model/onnx_model.h"

using namespace nnrt;
using namespace nnrt::api;

namespace {

Json import_options(const char *options_json) {
  return options_json ? parse_json_object(options_json, "options") : Json::object();
}

}  // namespace

extern "C" {

nnrt_status nnrt_model_import_onnx(nnrt_context *ctx, const char *path, const char *options_json, nnrt_model **out) {
  return nnrt_model_import_onnx_ex(ctx, path, options_json, nullptr, out);
}

nnrt_status nnrt_model_import_onnx_ex(nnrt_context *ctx, const char *path, const char *options_json,
                                      const nnrt_run_options *run_options, nnrt_model **out) {
  return guard(run_options ? "nnrt_model_import_onnx_ex" : "nnrt_model_import_onnx", [&] {
    check_handle(ctx, "ctx");
    require(path != nullptr && *path != '\0', "path is NULL or empty; expected the path of a .onnx file");
    require(out != nullptr, "out is NULL; expected a pointer to receive the model");
    auto options = import_options(options_json);
    RunScope run(run_control(run_options, "run_options"));
    auto h = std::make_unique<nnrt_model>();
    h->impl = model::import_onnx_file(ctx->impl, path, options);
    *out = h.release();
  });
}

nnrt_status nnrt_model_import_onnx_memory(nnrt_context *ctx, const void *data, size_t nbytes, const char *options_json,
                                          nnrt_model **out) {
  return guard("nnrt_model_import_onnx_memory", [&] {
    check_handle(ctx, "ctx");
    require(data != nullptr || nbytes == 0, "data is NULL; expected the bytes of a .onnx file");
    require(out != nullptr, "out is NULL; expected a pointer to receive the model");
    auto options = import_options(options_json);
    auto h = std::make_unique<nnrt_model>();
    h->impl = model::import_onnx_memory(ctx->impl, data, nbytes, options);
    *out = h.release();
  });
}

nnrt_status nnrt_model_export_onnx(const nnrt_model *m, const char *path) {
  return guard("nnrt_model_export_onnx", [&] {
    check_handle(m, "m");
    require(path != nullptr && *path != '\0', "path is NULL or empty; expected the path of the .onnx file to write");
    model::export_onnx(*m->impl, path);
  });
}

}  // extern "C"
