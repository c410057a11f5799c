#include "backend/plugin_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#ifndef NNRT_INSTALL_LIBDIR
#define NNRT_INSTALL_LIBDIR "/usr/local/lib"
#endif

namespace nnrt::backend {

namespace {

const char plugin_suffix[] = ".so";

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

// The name a file name carries between prefix and ".so", or "" if it is not such a file.
std::string name_in(const std::string &file, const std::string &prefix) {
  size_t np = prefix.size(), ns = sizeof plugin_suffix - 1;
  if (file.size() <= np + ns || file.compare(0, np, prefix) != 0 ||
      file.compare(file.size() - ns, ns, plugin_suffix) != 0) {
    return "";
  }
  return file.substr(np, file.size() - np - ns);
}

}  // namespace

std::vector<std::string> plugin_dirs() {
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

std::string plugin_dirs_text() {
  std::string text;
  for (const std::string &d : plugin_dirs()) text += (text.empty() ? "" : ", ") + d;
  return text;
}

std::vector<PluginFile> find_plugin_files(const std::string &prefix) {
  std::vector<PluginFile> found;
  std::vector<std::string> seen_dirs;
  for (const std::string &dir : plugin_dirs()) {
    std::string canonical = real_path(dir);
    if (std::find(seen_dirs.begin(), seen_dirs.end(), canonical) != seen_dirs.end()) continue;
    seen_dirs.push_back(canonical);
    std::vector<std::string> files;
    if (DIR *d = opendir(canonical.c_str())) {
      while (dirent *e = readdir(d)) {
        if (!name_in(e->d_name, prefix).empty()) files.push_back(e->d_name);
      }
      closedir(d);
    }
    std::sort(files.begin(), files.end());
    for (const std::string &file : files) found.push_back({real_path(canonical + "/" + file), name_in(file, prefix)});
  }
  return found;
}

std::string find_plugin_file(const std::string &file_name) {
  for (const std::string &dir : plugin_dirs()) {
    std::string path = dir + "/" + file_name;
    if (::access(path.c_str(), F_OK) == 0) return path;
  }
  return "";
}

void *open_plugin(const std::string &path, const char *entry, const char *kind, std::string *error) {
  dlerror();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *e = dlerror();
    *error = e ? e : "dlopen failed";
    return nullptr;
  }
  void *symbol = dlsym(handle, entry);
  if (!symbol) *error = std::string("not an nnrt ") + kind + ": it does not export " + entry;
  return symbol;
}

}  // namespace nnrt::backend
