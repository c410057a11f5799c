// Strict reading of JSON configuration: every key must be known and of the right type, and the
// error message names the key ("cache.max_cached_bytes: expected a non-negative integer, got
// \"lots\""). Used for context options, op attributes, model configs and trainer options.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nnrt/nnrt.h"

namespace nnrt {

using Json = nlohmann::json;

// The deepest nesting any nnrt configuration needs is a handful of levels; text nested deeper is
// refused while it is parsed, before anything (a message, a copy, a destructor) recurses into it.
constexpr int kMaxJsonDepth = 64;

// Parses JSON text strictly: refuses malformed text (with the parser's position), nesting deeper than
// max_depth levels, a key given twice in one object (nothing is silently overridden), and numbers
// beyond the range of a double. Each refusal throws `status` with a message starting with `what`.
// Every JSON that nnrt reads from outside goes through here.
Json parse_json_strict(const char *begin, const char *end, int max_depth, nnrt_status status, const std::string &what);

// Parses JSON text with parse_json_strict (kMaxJsonDepth); NULL or empty text gives an empty object.
// Throws NNRT_ERR_INVALID_ARGUMENT for whatever parse_json_strict refuses, or when the top level is
// not an object.
Json parse_json_object(const char *text, const std::string &what);

// A short rendering of a JSON value for messages (long values are cut).
std::string json_excerpt(const Json &value);

// Reads keys of one JSON object and remembers which were read, so that finish() can refuse the
// rest. `where` names the object in messages ("options", "layer 3 (conv2d)").
class JsonReader {
 public:
  JsonReader(const Json &object, std::string where);

  bool has(const std::string &key) const;
  const Json &raw(const std::string &key);  // marks it read; the key must exist

  std::string get_string(const std::string &key, const std::string &fallback);
  std::string require_string(const std::string &key);
  bool get_bool(const std::string &key, bool fallback);
  int64_t get_int(const std::string &key, int64_t fallback, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
  int64_t require_int(const std::string &key, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
  double get_number(const std::string &key, double fallback, double min = -1e308, double max = 1e308);
  std::vector<int64_t> get_int_list(const std::string &key, std::vector<int64_t> fallback);
  // An int list of exactly `n` entries, or one int repeated n times ("stride": 2 -> [2, 2]).
  std::vector<int64_t> get_int_or_list(const std::string &key, std::vector<int64_t> fallback, size_t n,
                                       int64_t min = INT64_MIN);
  std::vector<std::string> get_string_list(const std::string &key);
  // A nested object; the reader for it checks its own keys (call finish() on it too).
  JsonReader get_object(const std::string &key);

  // Throws NNRT_ERR_INVALID_ARGUMENT naming the first key that was never read.
  void finish() const;

  const std::string &where() const { return where_; }
  std::string name(const std::string &key) const;  // "where.key" for messages

 private:
  [[noreturn]] void wrong_type(const std::string &key, const char *expected) const;

  const Json &object_;
  std::string where_;
  std::set<std::string> read_;
};

}  // namespace nnrt
