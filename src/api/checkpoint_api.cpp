// nnrt_model_load, nnrt_model_save, nnrt_trainer_save, nnrt_trainer_restore: checkpoint files.
#include "api/handles.h"

using namespace nnrt;
using namespace nnrt::api;

namespace {

const char *check_path(const char *path) {
  require(path != nullptr, "path is NULL; expected a file path such as \"model.safetensors\"");
  require(*path != '\0', "path is empty; expected a file path such as \"model.safetensors\"");
  return path;
}

}  // namespace

extern "C" {

nnrt_status nnrt_model_load(nnrt_context *ctx, const char *path, nnrt_model **out) {
  return nnrt_model_load_ex(ctx, path, nullptr, out);
}

nnrt_status nnrt_model_load_ex(nnrt_context *ctx, const char *path, const nnrt_run_options *options,
                               nnrt_model **out) {
  return guard(options ? "nnrt_model_load_ex" : "nnrt_model_load", [&] {
    check_handle(ctx, "ctx");
    check_path(path);
    require(out != nullptr, "out is NULL; expected a pointer to receive the model");
    RunScope run(run_control(options, "options"));
    auto h = std::make_unique<nnrt_model>();
    h->impl = model::Model::load(ctx->impl, path);
    *out = h.release();
  });
}

nnrt_status nnrt_model_save(const nnrt_model *m, const char *path) {
  return guard("nnrt_model_save", [&] {
    check_handle(m, "m");
    m->impl->save(check_path(path));
  });
}

nnrt_status nnrt_trainer_save(const nnrt_trainer *t, const char *path) {
  return guard("nnrt_trainer_save", [&] {
    check_handle(t, "t");
    t->impl->save(check_path(path));
  });
}

nnrt_status nnrt_trainer_restore(nnrt_trainer *t, const char *path) {
  return guard("nnrt_trainer_restore", [&] {
    check_handle(t, "t");
    t->impl->restore(check_path(path));
  });
}

}  // extern "C"
