#include "backend/registry.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include "reference/reference_backend.h"
#include "core/error.h"
#include "core/log.h"

#ifndef NNRT_INSTALL_LIBDIR
#define NNRT_INSTALL_LIBDIR "/usr/local/lib"
#endif

namespace nnrt::backend {

namespace {

const char plugin_prefix[] = "libnnrt-backend-";
const char plugin_suffix[] = ".so";

// The backend name a plugin file name carries, or "" if the file is not a backend plugin.
std::string plugin_name(const std::string &file) {
  size_t np = sizeof plugin_prefix - 1, ns = sizeof plugin_suffix - 1;
  if (file.size() <= np + ns || file.compare(0, np, plugin_prefix) != 0 ||
      file.compare(file.size() - ns, ns, plugin_suffix) != 0) {
    return "";
  }
  return file.substr(np, file.size() - np - ns);
}

std::string real_path(const std::string &path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

// The folder that holds the code of libnnrt (libnnrt.so, or the program a static libnnrt.a is in).
std::string library_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&library_dir), &info) && info.dli_fname) {
    std::string path = real_path(info.dli_fname);
    size_t slash = path.rfind('/');
    if (slash != std::string::npos) return path.substr(0, slash);
  }
  return "";
}

std::vector<std::string> sorted_plugin_files(const std::string &dir) {
  std::vector<std::string> files;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      if (!plugin_name(e->d_name).empty()) files.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

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

std::vector<std::string> Registry::search_dirs() const {
  std::vector<std::string> dirs;
  if (const char *env = std::getenv("NNRT_BACKEND_PATH")) {
    std::string all = env;
    size_t start = 0;
    while (start <= all.size()) {
      size_t end = all.find(':', start);
      if (end == std::string::npos) end = all.size();
      if (end > start) dirs.push_back(all.substr(start, end - start));
      start = end + 1;
    }
  }
  std::string lib = library_dir();
  if (!lib.empty()) {
    dirs.push_back(lib);
    dirs.push_back(lib + "/nnrt/backends");
  }
  dirs.push_back(NNRT_INSTALL_LIBDIR);
  dirs.push_back(std::string(NNRT_INSTALL_LIBDIR) + "/nnrt/backends");
  return dirs;
}

void Registry::discover() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> seen_dirs;
  for (const std::string &dir : search_dirs()) {
    std::string canonical = real_path(dir);
    if (std::find(seen_dirs.begin(), seen_dirs.end(), canonical) != seen_dirs.end()) continue;
    seen_dirs.push_back(canonical);
    for (const std::string &file : sorted_plugin_files(canonical)) {
      std::string path = real_path(canonical + "/" + file);
      bool known = std::any_of(plugins_.begin(), plugins_.end(), [&](const PluginInfo &p) { return p.path == path; });
      if (!known) load_plugin(path, plugin_name(file));
    }
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
  dlerror();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *e = dlerror();
    return refuse(e ? e : "dlopen failed");
  }
  // From here on the library stays loaded even if refused: its code may have registered handlers
  // (atexit, thread-locals) that unloading would leave dangling.
  auto entry = reinterpret_cast<nnrt_backend_entry_fn>(dlsym(handle, "nnrt_backend_entry"));
  if (!entry) return refuse("not an nnrt backend: it does not export nnrt_backend_entry");
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
