// The one loader of plugin files in libnnrt: where plugins are looked for, and how one is opened
// and its entry point found. The backend registry (libnnrt-backend-*.so), the communicator registry
// (libnnrt-comm-*.so, comm/) and the ONNX converter's loader (libnnrt-onnx.so, io/) all use it;
// each checks the table its entry point returns itself.
#pragma once

#include <string>
#include <vector>

namespace nnrt::backend {

// The plugin folders in search order, from the environment as it is now: the folders in
// NNRT_BACKEND_PATH (colon-separated), the folder holding libnnrt's code and its nnrt/backends
// subfolder, then the install libdir and its nnrt/backends.
std::vector<std::string> plugin_dirs();

// The plugin folders as one line for messages: "a, b, c".
std::string plugin_dirs_text();

// A plugin file found in the plugin folders.
struct PluginFile {
  std::string path;  // with symbolic links resolved
  std::string name;  // what the file name carries between prefix and ".so": "onednn"
};

// The files named <prefix><name>.so (name not empty) in the plugin folders: each folder once (by
// its real path), in search order, each folder's files sorted by name.
std::vector<PluginFile> find_plugin_files(const std::string &prefix);

// The first file named `file_name` in the plugin folders, or "" when there is none.
std::string find_plugin_file(const std::string &file_name);

// Opens the plugin at `path` (dlopen, RTLD_NOW | RTLD_LOCAL) and returns its symbol `entry`; or
// NULL with *error saying why: the dlerror() text, which names a missing dependency, or "not an
// nnrt <kind>: it does not export <entry>". A library that opened stays loaded, even when it is
// then refused: its code may have registered handlers (atexit, thread-locals) that unloading
// would leave dangling.
void *open_plugin(const std::string &path, const char *entry, const char *kind, std::string *error);

}  // namespace nnrt::backend
