#include "io/onnx_converter_plugin.h"

#include <mutex>

#include "backend/plugin_loader.h"
#include "core/error.h"
#include "core/log.h"
#include "core/version.h"

namespace nnrt::io {

namespace {

struct Loaded {
  bool tried = false;
  std::string path;   // the file found ("" when none)
  std::string error;  // why there is no table
  const nnrt_onnx_converter *table = nullptr;
};

std::mutex loader_mutex;

Loaded &loaded() {
  static Loaded *l = new Loaded;  // never destroyed: the plugin stays loaded
  return *l;
}

// Why the table cannot be used ("" when it can).
std::string check(const nnrt_onnx_converter *t) {
  if (!t) return cat("its entry point speaks no ABI ", NNRT_ONNX_CONVERTER_ABI);
  if (t->struct_size < sizeof(nnrt_onnx_converter) || t->abi != NNRT_ONNX_CONVERTER_ABI) {
    return cat("it speaks ABI ", t->abi, "; this libnnrt needs ", NNRT_ONNX_CONVERTER_ABI);
  }
  // The ABI is internal to one build: the converter must come from the same nnrt version.
  if (!t->version || std::string(t->version) != kVersionString) {
    return cat("it was built from nnrt ", t->version ? t->version : "(unknown)", "; this is nnrt ", kVersionString);
  }
  if (!t->import_model || !t->import_config || !t->import_param_count || !t->import_param ||
      !t->import_release_param || !t->import_free || !t->export_model || !t->free_bytes) {
    return "its table has empty entries";
  }
  return "";
}

void load(Loaded &l) {
  l.tried = true;
  l.path = backend::find_plugin_file(NNRT_ONNX_CONVERTER_FILE);
  if (l.path.empty()) {
    l.error = cat("no ", NNRT_ONNX_CONVERTER_FILE, " in the plugin folders (", backend::plugin_dirs_text(),
                  "); ONNX import and export need it (built with nnrt, installed beside the backend plugins)");
    return;
  }
  auto entry = reinterpret_cast<nnrt_onnx_converter_entry_fn>(
      backend::open_plugin(l.path, NNRT_ONNX_CONVERTER_ENTRY, "ONNX converter", &l.error));
  if (!entry) return;
  const nnrt_onnx_converter *table = entry(NNRT_ONNX_CONVERTER_ABI);
  l.error = check(table);
  if (l.error.empty()) l.table = table;
}

const Loaded &load_once() {
  std::lock_guard<std::mutex> lock(loader_mutex);
  Loaded &l = loaded();
  if (!l.tried) {
    load(l);
    if (!l.error.empty()) log::info(cat("ONNX converter ", l.path, " not loaded: ", l.error));
  }
  return l;
}

}  // namespace

const nnrt_onnx_converter &onnx_converter() {
  const Loaded &l = load_once();
  if (!l.table) {
    if (l.path.empty()) fail(NNRT_ERR_UNSUPPORTED, l.error);
    fail(NNRT_ERR_UNSUPPORTED, "the ONNX converter ", l.path, " did not load: ", l.error);
  }
  return *l.table;
}

Json onnx_converter_info() {
  const Loaded &l = load_once();
  Json j;
  j["path"] = l.path;
  j["loaded"] = l.table != nullptr;
  if (l.table) j["version"] = l.table->description ? l.table->description : "";
  else j["error"] = l.error;
  return j;
}

}  // namespace nnrt::io
