#include "backend/comm_registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>

#include "backend/registry.h"
#include "core/error.h"
#include "core/log.h"

namespace nnrt::backend {

namespace {

const char comm_prefix[] = "libnnrt-comm-";
const char comm_suffix[] = ".so";

thread_local std::string comm_error;

void comm_log(int level, const char *message) { log::message(level, message ? message : ""); }
void comm_set_error(const char *message) { comm_error = message ? message : ""; }

const nnrt_comm_host_api the_comm_host = {sizeof(nnrt_comm_host_api), NNRT_COMM_ABI_MAJOR, comm_log, comm_set_error};

std::string comm_name(const std::string &file) {
  size_t np = sizeof comm_prefix - 1, ns = sizeof comm_suffix - 1;
  if (file.size() <= np + ns || file.compare(0, np, comm_prefix) != 0 ||
      file.compare(file.size() - ns, ns, comm_suffix) != 0) {
    return "";
  }
  return file.substr(np, file.size() - np - ns);
}

std::string canonical(const std::string &path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

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
  std::vector<std::string> dirs = Registry::instance().search_dirs();
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> seen;
  for (const std::string &dir : dirs) {
    std::string d = canonical(dir);
    if (std::find(seen.begin(), seen.end(), d) != seen.end()) continue;
    seen.push_back(d);
    std::vector<std::string> files;
    if (DIR *h = opendir(d.c_str())) {
      while (dirent *e = readdir(h))
        if (!comm_name(e->d_name).empty()) files.push_back(e->d_name);
      closedir(h);
    }
    std::sort(files.begin(), files.end());
    for (const std::string &f : files) {
      std::string path = canonical(d + "/" + f);
      bool known = std::any_of(plugins_.begin(), plugins_.end(), [&](const CommPluginInfo &p) { return p.path == path; });
      if (!known) load(path, comm_name(f));
    }
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
  dlerror();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *e = dlerror();
    return refuse(e ? e : "dlopen failed");
  }
  auto entry = reinterpret_cast<nnrt_comm_entry_fn>(dlsym(handle, "nnrt_comm_entry"));
  if (!entry) return refuse("not an nnrt communicator: it does not export nnrt_comm_entry");
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
  std::string dirs;
  for (const std::string &d : Registry::instance().search_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
  fail(NNRT_ERR_BACKEND, "no communicator plugin \"", name, "\": expected a file ", comm_prefix, name, comm_suffix,
       " in one of the plugin folders (", dirs, "); this build may lack it (meson -D", name, "=enabled)");
}

}  // namespace nnrt::backend
