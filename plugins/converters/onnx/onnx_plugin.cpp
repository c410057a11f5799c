// libnnrt-onnx.so's entry point: the converter table of nnrt/onnx_converter.h over the importer and
// the exporter. Every C++ error stops here, at the plugin kit's barrier (nnrt/plugin_kit.hpp), and
// becomes a status and a message in the caller's buffer.
#include <google/protobuf/stubs/common.h>

#include <cstdlib>
#include <cstring>

#include "converter_base.h"
#include "onnx_export.h"
#include "onnx_import.h"

struct nnrt_onnx_import {
  nnrt::io::onnx_format::ImportResult result;
};

namespace nnrt::io::onnx_format {
namespace {

// The converter as the plugin kit sees it: errors are plugin_kit::Error (fail), std::bad_alloc or
// other std::exceptions; this ABI has no host, so messages go into the caller's buffer.
struct Converter {};

template <class Fn>
nnrt_status status_of(char *message, size_t size, Fn &&fn) {
  return plugin_kit::guarded_into<Converter>(message, size, std::forward<Fn>(fn));
}

nnrt_status import_model_c(const nnrt_onnx_host *host, const char *path, const void *data, size_t nbytes,
                           const char *options_json, nnrt_onnx_import **out, char *message, size_t size) {
  return status_of(message, size, [&] {
    if (!host || host->struct_size < sizeof(nnrt_onnx_host) || !out) fail(NNRT_ERR_INTERNAL, "ONNX import: bad call");
    ImportOptions options = parse_import_options(parse_json_object(options_json, "options"));
    auto r = std::make_unique<nnrt_onnx_import>();
    r->result = path ? import_file(*host, path, options) : import_memory(*host, data ? data : "", nbytes, options);
    *out = r.release();
  });
}

const char *import_config(const nnrt_onnx_import *r) { return r->result.config.c_str(); }

size_t import_param_count(const nnrt_onnx_import *r) { return r->result.params.size(); }

nnrt_status import_param(nnrt_onnx_import *r, size_t i, const char **name, const float **values, size_t *count,
                         char *message, size_t size) {
  return status_of(message, size, [&] {
    if (i >= r->result.params.size()) fail(NNRT_ERR_INTERNAL, "ONNX import: no parameter ", i);
    auto &[n, tensor] = r->result.params[i];
    *name = n.c_str();
    if (tensor.elem_type == onnx::TensorProto::FLOAT) {
      *values = reinterpret_cast<const float *>(tensor.bytes.data());
      *count = tensor.bytes.size() / sizeof(float);
    } else {
      r->result.converted = tensor.floats();
      *values = r->result.converted.data();
      *count = r->result.converted.size();
    }
  });
}

void import_release_param(nnrt_onnx_import *r, size_t i) {
  if (i < r->result.params.size()) std::string().swap(r->result.params[i].second.bytes);
  std::vector<float>().swap(r->result.converted);
}

void import_free(nnrt_onnx_import *r) { delete r; }

nnrt_status export_model_c(const nnrt_onnx_host *host, const char *description, void **bytes, size_t *nbytes,
                           char *message, size_t size) {
  return status_of(message, size, [&] {
    if (!host || host->struct_size < sizeof(nnrt_onnx_host) || !description || !bytes || !nbytes) {
      fail(NNRT_ERR_INTERNAL, "ONNX export: bad call");
    }
    std::string out = export_model(*host, description);
    void *copy = std::malloc(out.size() ? out.size() : 1);
    if (!copy) throw std::bad_alloc();
    std::memcpy(copy, out.data(), out.size());
    *bytes = copy;
    *nbytes = out.size();
  });
}

void free_bytes(void *bytes) { std::free(bytes); }

std::string describe() {
  int v = GOOGLE_PROTOBUF_VERSION;
  return cat("ONNX opsets ", kOldestImportOpset, "-", kNewestImportOpset, " (import), ", kExportOpset,
             " (export); protobuf-lite ", v / 1000000, ".", v / 1000 % 1000, ".", v % 1000);
}

}  // namespace
}  // namespace nnrt::io::onnx_format

extern "C" __attribute__((visibility("default"))) const nnrt_onnx_converter *nnrt_onnx_converter_entry(uint32_t abi) {
  using namespace nnrt::io::onnx_format;
  if (abi != NNRT_ONNX_CONVERTER_ABI) return nullptr;
  static const std::string description = describe();
  static const nnrt_onnx_converter table = {
      sizeof(nnrt_onnx_converter),
      NNRT_ONNX_CONVERTER_ABI,
      nnrt::kVersionString,
      description.c_str(),
      import_model_c,
      import_config,
      import_param_count,
      import_param,
      import_release_param,
      import_free,
      export_model_c,
      free_bytes,
  };
  return &table;
}
