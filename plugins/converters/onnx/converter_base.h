// What the converter's files share in place of libnnrt's core, which a plugin does not see: the
// plugin kit's errors (nnrt/plugin_kit.hpp), shapes, and the reading of the import options. The
// converter is built against include/ and this folder only, like any third-party plugin.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nnrt/nnrt.h"
#include "nnrt/plugin_kit.hpp"

namespace nnrt {
using plugin_kit::kVersionString;  // the nnrt version the converter is built from
}  // namespace nnrt

namespace nnrt::io::onnx_format {

using plugin_kit::cat;
using plugin_kit::Error;
using plugin_kit::fail;
using Json = nlohmann::json;

// The dims of a tensor or of one example, at most NNRT_MAX_DIMS of them.
struct Shape {
  int32_t rank = 0;
  std::array<int64_t, NNRT_MAX_DIMS> dims{};

  // Throws NNRT_ERR_INVALID_ARGUMENT beyond NNRT_MAX_DIMS dims.
  static Shape of(const int64_t *d, int32_t rank);
  static Shape of(const std::vector<int64_t> &d) { return of(d.data(), static_cast<int32_t>(d.size())); }

  int64_t operator[](int32_t i) const { return dims[i]; }
  int64_t &operator[](int32_t i) { return dims[i]; }
  int64_t numel() const;  // the product of the dims (the caller keeps them small enough)
  std::vector<int64_t> vec() const { return std::vector<int64_t>(dims.begin(), dims.begin() + rank); }
  bool operator==(const Shape &o) const { return vec() == o.vec(); }
  bool operator!=(const Shape &o) const { return !(*this == o); }
};

// "[2, 3, 4]"
std::string to_string(const Shape &s);

// The import options as libnnrt passes them: JSON text it wrote itself from options it had parsed
// strictly. NULL or empty text is an empty object; anything but an object is
// NNRT_ERR_INVALID_ARGUMENT naming `what`.
Json parse_json_object(const char *text, const std::string &what);

// Reads the keys of one JSON object, each at most once, and refuses (finish) the keys never read:
// a misspelt option is an error, not ignored. Every refusal is NNRT_ERR_INVALID_ARGUMENT naming
// "<where>.<key>".
class JsonReader {
 public:
  JsonReader(const Json &object, std::string where) : object_(object), where_(std::move(where)) {}

  bool get_bool(const std::string &key, bool fallback);
  int64_t get_int(const std::string &key, int64_t fallback, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
  std::string get_string(const std::string &key, const std::string &fallback);
  std::vector<int64_t> get_int_list(const std::string &key, std::vector<int64_t> fallback);
  void finish() const;

 private:
  // The value of `key` (marked read), or NULL when absent.
  const Json *take(const std::string &key);
  [[noreturn]] void wrong(const std::string &key, const char *expected) const;

  const Json &object_;
  std::string where_;
  std::set<std::string> read_;
};

}  // namespace nnrt::io::onnx_format
