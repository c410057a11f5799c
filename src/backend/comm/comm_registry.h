// The communicator plugins (nnrt_comm.h): libnnrt-comm-<name>.so files in the backend plugin
// folders. Found when asked for (describe, a trainer's "distributed"), loaded once, never unloaded.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "nnrt/nnrt_comm.h"

namespace nnrt::backend {

struct CommPluginInfo {
  std::string name;  // from the file name: libnnrt-comm-<name>.so
  std::string path;
  bool loaded = false;
  std::string error;  // why it did not load
  const nnrt_comm_v1 *table = nullptr;
};

class CommRegistry {
 public:
  static CommRegistry &instance();

  // Searches the plugin folders and loads every communicator plugin not seen yet.
  void discover();
  std::vector<CommPluginInfo> plugins() const;

  // The table of the communicator `name`, discovering first. Throws NNRT_ERR_BACKEND naming the
  // folders searched when there is no such plugin, or why it did not load.
  const nnrt_comm_v1 &find(const std::string &name);

 private:
  CommRegistry() = default;
  void load(const std::string &path, const std::string &name);

  mutable std::mutex mutex_;
  std::vector<CommPluginInfo> plugins_;
};

// Takes the message a communicator passed to host->set_error on this thread ("" if none).
std::string take_comm_error();

}  // namespace nnrt::backend
