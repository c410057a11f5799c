// nnrt_context_*: create, describe, release.
#include "api/handles.h"
#include "io/onnx_converter_plugin.h"
#include "backend/registry.h"

using namespace nnrt;
using namespace nnrt::api;

extern "C" {

nnrt_status nnrt_context_create(const char *options_json, nnrt_context **out) {
  return guard("nnrt_context_create", [&] {
    require(out != nullptr, "out is NULL; expected a pointer to receive the context");
    ContextOptions options = ContextOptions::parse(options_json);
    auto h = std::make_unique<nnrt_context>();
    h->impl = Context::create(options);
    *out = h.release();
  });
}

void nnrt_context_release(nnrt_context *ctx) { release_handle(ctx, "nnrt_context_release"); }

nnrt_status nnrt_context_describe(nnrt_context *ctx, char *buf, size_t cap, size_t *len) {
  return guard("nnrt_context_describe", [&] {
    check_handle(ctx, "ctx");
    // The context's own description, plus the ONNX converter plugin (an io-layer matter).
    Json d = Json::parse(ctx->impl->describe());
    d["onnx"] = io::onnx_converter_info();
    write_string(d.dump(), buf, cap, len);
  });
}

nnrt_status nnrt_register_backend(nnrt_backend_entry_fn entry) {
  return guard("nnrt_register_backend", [&] { backend::Registry::instance().register_static(entry); });
}

}  // extern "C"
