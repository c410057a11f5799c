#include "backend/comm/comm_registry.h"

#include <algorithm>

#include "backend/plugin_loader.h"
#include "core/error.h"
#include "core/log.h"

namespace nnrt::backend {

namespace {

const char comm_prefix[] = "libnnrt-comm-";

thread_local std::string comm_error;

void comm_log(int level, const char *message) { log::message(level, message ? message : ""); }
void comm_set_error(const char *message) { comm_error = message ? message : ""; }

const nnrt_comm_host_api the_comm_host = {sizeof(nnrt_comm_host_api), NNRT_COMM_ABI_MAJOR, comm_log, comm_set_error};

// What is wrong with a table, or "".
std::string check_table(const nnrt_comm_v1 *t) {
  if (t->abi_major != NNRT_COMM_ABI_MAJOR) {
    return cat("built for communicator ABI ", t->abi_major, ", this nnrt has ", NNRT_COMM_ABI_MAJOR);
  }
  if (t->struct_size < offsetof(nnrt_comm_v1, last_error) + sizeof t->last_error) {
    return cat("its function table is ", t->struct_size, " bytes, smaller than ABI 1's ",
               offsetof(nnrt_comm_v1, last_error) + sizeof t->last_error);
  }
  if (!t->name || !t->create || !t->destroy || !t->info || !t->allreduce_sum || !t->broadcast || !t->allgather ||
      !t->barrier || !t->wait || !t->abort || !t->last_error) {
    return "its function table has NULL entries";
  }
  return "";
}

}  // namespace

std::string take_comm_error() {
  std::string e;
  e.swap(comm_error);
  return e;
}

CommRegistry &CommRegistry::instance() {
  static CommRegistry *r = new CommRegistry;  // never destroyed: plugins stay loaded
  return *r;
}

void CommRegistry::discover() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const PluginFile &file : find_plugin_files(comm_prefix)) {
    bool known = std::any_of(plugins_.begin(), plugins_.end(), [&](const CommPluginInfo &p) { return p.path == file.path; });
    if (!known) load(file.path, file.name);
  }
}

void CommRegistry::load(const std::string &path, const std::string &name) {
  CommPluginInfo info;
  info.name = name;
  info.path = path;
  auto refuse = [&](const std::string &why) {
    info.error = why;
    log::info(cat("communicator plugin ", path, " not loaded: ", why));
    plugins_.push_back(info);
  };
  for (const CommPluginInfo &p : plugins_) {
    if (p.loaded && p.name == name) return refuse(cat("a communicator named '", name, "' is already loaded from ", p.path));
  }
  std::string error;
  auto entry = reinterpret_cast<nnrt_comm_entry_fn>(open_plugin(path, "nnrt_comm_entry", "communicator", &error));
  if (!entry) return refuse(error);
  take_comm_error();
  const nnrt_comm_v1 *table = entry(NNRT_COMM_ABI_MAJOR, &the_comm_host);
  if (!table) {
    std::string why = take_comm_error();
    return refuse(why.empty() ? "its nnrt_comm_entry returned NULL without a reason" : why);
  }
  std::string problem = check_table(table);
  if (!problem.empty()) return refuse(problem);
  info.loaded = true;
  info.table = table;
  plugins_.push_back(info);
}

std::vector<CommPluginInfo> CommRegistry::plugins() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return plugins_;
}

const nnrt_comm_v1 &CommRegistry::find(const std::string &name) {
  discover();
  std::lock_guard<std::mutex> lock(mutex_);
  std::string failures;
  for (const CommPluginInfo &p : plugins_) {
    if (p.name != name) continue;
    if (p.loaded) return *p.table;
    failures += cat("; ", p.path, " did not load: ", p.error);
  }
  if (!failures.empty()) fail(NNRT_ERR_BACKEND, "the communicator \"", name, "\" is not usable", failures);
  fail(NNRT_ERR_BACKEND, "no communicator plugin \"", name, "\": expected a file ", comm_prefix, name,
       ".so in one of the plugin folders (", plugin_dirs_text(), "); this build may lack it (meson -D", name,
       "=enabled)");
}

}  // namespace nnrt::backend
