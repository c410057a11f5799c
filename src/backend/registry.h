// The process-wide list of backends: the built-in reference backend, plugins found on disk, and
// backends a static build registered. Plugins are loaded once and never unloaded.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "nnrt/nnrt_backend.h"

namespace nnrt::backend {

// A plugin file that was found, whether it loaded or not.
struct PluginInfo {
  std::string name;   // from the file name: libnnrt-backend-<name>.so
  std::string path;
  bool loaded = false;
  std::string error;  // why it did not load: dlerror() text, missing entry point, version mismatch
};

// A loaded backend table and what its probe said.
struct BackendInfo {
  std::string name;
  std::string path;   // the plugin file, "built-in" or "static"
  const nnrt_backend_v1 *table = nullptr;
  int32_t score = 0;  // 0: cannot run here
  int32_t device_count = 0;
  std::string reason; // why not, when score is 0
};

class Registry {
 public:
  static Registry &instance();

  // Searches the plugin folders (backend/plugin_loader.h), reading the environment now, and loads
  // the backend plugins not seen yet.
  void discover();

  std::vector<PluginInfo> plugins() const;
  std::vector<BackendInfo> backends() const;  // the reference backend first

  // Registers a backend linked into the program. Throws nnrt::Error.
  void register_static(nnrt_backend_entry_fn entry);

 private:
  Registry();
  void load_plugin(const std::string &path, const std::string &name);
  void add_backend(const nnrt_backend_v1 *table, const std::string &path);

  mutable std::mutex mutex_;
  std::vector<PluginInfo> plugins_;
  std::vector<BackendInfo> backends_;
};

// The services nnrt offers backends (nnrt_backend.h).
const nnrt_host_api *host_api();

// Takes the message a backend passed to host->set_error on this thread ("" if none), clearing it.
std::string take_backend_error();

// Checks a table returned by an entry point; returns "" if usable, else what is wrong.
std::string validate_table(const nnrt_backend_v1 *table);

}  // namespace nnrt::backend
