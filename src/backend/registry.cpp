#include "backend/registry.h"

#include <algorithm>

#include "backend/plugin_loader.h"
#include "core/error.h"
#include "core/log.h"
#include "reference/reference_backend.h"

namespace nnrt::backend {

Registry &Registry::instance() {
  static Registry *r = new Registry;  // never destroyed: plugins stay loaded until the process ends
  return *r;
}

Registry::Registry() { add_backend(reference::backend_entry(NNRT_BACKEND_ABI_MAJOR, host_api()), "built-in"); }

std::string validate_table(const nnrt_backend_v1 *t) {
  if (t->abi_major != NNRT_BACKEND_ABI_MAJOR) {
    return cat("built for backend ABI ", t->abi_major, ", this nnrt has backend ABI ", NNRT_BACKEND_ABI_MAJOR);
  }
  if (t->struct_size < offsetof(nnrt_backend_v1, op_destroy) + sizeof t->op_destroy) {
    return cat("its function table is ", t->struct_size, " bytes, smaller than the ",
               offsetof(nnrt_backend_v1, op_destroy) + sizeof t->op_destroy, " of backend ABI 1");
  }
  if (!t->name || !*t->name) return "its function table has no name";
  if (t->kind != NNRT_DEVICE_CPU && t->kind != NNRT_DEVICE_GPU) return cat("unknown device kind ", t->kind);
  if (!t->probe || !t->device_props || !t->open || !t->close || !t->supports || !t->op_create ||
      !t->op_run || !t->op_destroy) {
    return "its function table lacks a required function";
  }
  if (!(t->flags & NNRT_BACKEND_HOST_MEMORY) &&
      (!t->mem_alloc || !t->mem_free || !t->memcpy_async || !t->memset_async || !t->stream_create ||
       !t->stream_destroy || !t->stream_synchronize)) {
    return "it has device memory but lacks memory or stream functions";
  }
  return "";
}

void Registry::add_backend(const nnrt_backend_v1 *table, const std::string &path) {
  BackendInfo b;
  b.name = table->name;
  b.path = path;
  b.table = table;
  char reason[512] = "";
  b.score = table->probe(&b.device_count, reason, sizeof reason);
  reason[sizeof reason - 1] = 0;
  if (b.score <= 0) {
    b.score = 0;
    b.reason = reason[0] ? reason : "the backend's probe found no usable device";
  }
  log::debug(cat("backend ", b.name, " (", path, "): score ", b.score, ", ", b.device_count, " device(s)",
                 b.reason.empty() ? "" : ": ", b.reason));
  backends_.push_back(b);
}

void Registry::discover() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const PluginFile &file : find_plugin_files("libnnrt-backend-")) {
    bool known = std::any_of(plugins_.begin(), plugins_.end(), [&](const PluginInfo &p) { return p.path == file.path; });
    if (!known) load_plugin(file.path, file.name);
  }
}

void Registry::load_plugin(const std::string &path, const std::string &name) {
  PluginInfo info;
  info.name = name;
  info.path = path;
  auto refuse = [&](const std::string &why) {
    info.error = why;
    log::info(cat("backend plugin ", path, " not loaded: ", why));
    plugins_.push_back(info);
  };
  for (const BackendInfo &b : backends_) {
    if (b.name == name) return refuse(cat("a backend named '", name, "' is already loaded from ", b.path));
  }
  std::string error;
  auto entry = reinterpret_cast<nnrt_backend_entry_fn>(open_plugin(path, "nnrt_backend_entry", "backend", &error));
  if (!entry) return refuse(error);
  take_backend_error();
  const nnrt_backend_v1 *table = entry(NNRT_BACKEND_ABI_MAJOR, host_api());
  if (!table) {
    std::string why = take_backend_error();
    return refuse(why.empty() ? "its nnrt_backend_entry returned NULL without a reason" : why);
  }
  std::string problem = validate_table(table);
  if (!problem.empty()) return refuse(problem);
  for (const BackendInfo &b : backends_) {
    if (b.name == table->name) {
      return refuse(cat("its backend name '", table->name, "' is already taken by ", b.path));
    }
  }
  info.loaded = true;
  plugins_.push_back(info);
  add_backend(table, path);
}

void Registry::register_static(nnrt_backend_entry_fn entry) {
  if (!entry) fail(NNRT_ERR_INVALID_ARGUMENT, "nnrt_register_backend: entry is NULL");
  std::lock_guard<std::mutex> lock(mutex_);
  take_backend_error();
  const nnrt_backend_v1 *table = entry(NNRT_BACKEND_ABI_MAJOR, host_api());
  if (!table) {
    std::string why = take_backend_error();
    fail(NNRT_ERR_BACKEND, "nnrt_register_backend: the entry point returned NULL: ",
         why.empty() ? "no reason given" : why);
  }
  if (table->abi_major != NNRT_BACKEND_ABI_MAJOR) {
    fail(NNRT_ERR_VERSION, "nnrt_register_backend: ", validate_table(table));
  }
  std::string problem = validate_table(table);
  if (!problem.empty()) fail(NNRT_ERR_INVALID_ARGUMENT, "nnrt_register_backend: ", problem);
  for (const BackendInfo &b : backends_) {
    if (b.name == table->name) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "nnrt_register_backend: a backend named '", b.name,
           "' is already registered (", b.path, ")");
    }
  }
  add_backend(table, "static");
}

std::vector<PluginInfo> Registry::plugins() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return plugins_;
}

std::vector<BackendInfo> Registry::backends() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return backends_;
}

}  // namespace nnrt::backend
