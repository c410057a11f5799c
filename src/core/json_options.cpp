#include "core/json_options.h"

#include <cmath>

#include "core/error.h"

namespace nnrt {

Json parse_json_object(const char *text, const std::string &what) {
  if (!text || !*text) return Json::object();
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error &e) {
    // The parser's message carries the byte position and the offending token.
    std::string m = e.what();
    size_t p = m.find("parse error");
    fail(NNRT_ERR_INVALID_ARGUMENT, what, " is not valid JSON: ", p == std::string::npos ? m : m.substr(p));
  }
  if (!j.is_object()) fail(NNRT_ERR_INVALID_ARGUMENT, what, ": expected a JSON object, got ", json_excerpt(j));
  return j;
}

std::string json_excerpt(const Json &value) {
  std::string s = value.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

JsonReader::JsonReader(const Json &object, std::string where) : object_(object), where_(std::move(where)) {
  if (!object_.is_object()) fail(NNRT_ERR_INVALID_ARGUMENT, where_, ": expected a JSON object, got ", json_excerpt(object_));
}

std::string JsonReader::name(const std::string &key) const { return where_.empty() ? key : where_ + "." + key; }

void JsonReader::wrong_type(const std::string &key, const char *expected) const {
  fail(NNRT_ERR_INVALID_ARGUMENT, name(key), ": expected ", expected, ", got ", json_excerpt(object_.at(key)));
}

bool JsonReader::has(const std::string &key) const { return object_.contains(key); }

const Json &JsonReader::raw(const std::string &key) {
  read_.insert(key);
  return object_.at(key);
}

std::string JsonReader::get_string(const std::string &key, const std::string &fallback) {
  if (!has(key)) return fallback;
  const Json &v = raw(key);
  if (!v.is_string()) wrong_type(key, "a string");
  return v.get<std::string>();
}

std::string JsonReader::require_string(const std::string &key) {
  if (!has(key)) fail(NNRT_ERR_INVALID_ARGUMENT, name(key), " is required (a string)");
  return get_string(key, "");
}

bool JsonReader::get_bool(const std::string &key, bool fallback) {
  if (!has(key)) return fallback;
  const Json &v = raw(key);
  if (!v.is_boolean()) wrong_type(key, "true or false");
  return v.get<bool>();
}

int64_t JsonReader::get_int(const std::string &key, int64_t fallback, int64_t min, int64_t max) {
  if (!has(key)) return fallback;
  const Json &v = raw(key);
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))) {
    wrong_type(key, "an integer");
  }
  int64_t n = v.get<int64_t>();
  if (n < min || n > max) {
    if (max == INT64_MAX) fail(NNRT_ERR_INVALID_ARGUMENT, name(key), ": expected an integer >= ", min, ", got ", n);
    fail(NNRT_ERR_INVALID_ARGUMENT, name(key), ": expected an integer from ", min, " to ", max, ", got ", n);
  }
  return n;
}

int64_t JsonReader::require_int(const std::string &key, int64_t min, int64_t max) {
  if (!has(key)) fail(NNRT_ERR_INVALID_ARGUMENT, name(key), " is required (an integer)");
  return get_int(key, 0, min, max);
}

double JsonReader::get_number(const std::string &key, double fallback, double min, double max) {
  if (!has(key)) return fallback;
  const Json &v = raw(key);
  if (!v.is_number()) wrong_type(key, "a number");
  double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    fail(NNRT_ERR_INVALID_ARGUMENT, name(key), ": expected a number from ", min, " to ", max, ", got ", d);
  }
  return d;
}

std::vector<int64_t> JsonReader::get_int_list(const std::string &key, std::vector<int64_t> fallback) {
  if (!has(key)) return fallback;
  const Json &v = raw(key);
  if (!v.is_array()) wrong_type(key, "a list of integers");
  std::vector<int64_t> out;
  for (const Json &e : v) {
    if (!e.is_number_integer()) wrong_type(key, "a list of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::vector<int64_t> JsonReader::get_int_or_list(const std::string &key, std::vector<int64_t> fallback, size_t n,
                                                 int64_t min) {
  if (!has(key)) return fallback;
  const Json &v = raw(key);
  std::vector<int64_t> out;
  if (v.is_number_integer()) {
    out.assign(n, v.get<int64_t>());
  } else if (v.is_array() && v.size() == n) {
    for (const Json &e : v) {
      if (!e.is_number_integer()) wrong_type(key, cat("an integer or a list of ", n, " integers").c_str());
      out.push_back(e.get<int64_t>());
    }
  } else {
    wrong_type(key, cat("an integer or a list of ", n, " integers").c_str());
  }
  for (int64_t x : out) {
    if (x < min) fail(NNRT_ERR_INVALID_ARGUMENT, name(key), ": expected values >= ", min, ", got ", json_excerpt(v));
  }
  return out;
}

std::vector<std::string> JsonReader::get_string_list(const std::string &key) {
  if (!has(key)) return {};
  const Json &v = raw(key);
  if (!v.is_array()) wrong_type(key, "a list of strings");
  std::vector<std::string> out;
  for (const Json &e : v) {
    if (!e.is_string()) wrong_type(key, "a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

JsonReader JsonReader::get_object(const std::string &key) {
  const Json &v = raw(key);
  if (!v.is_object()) wrong_type(key, "a JSON object");
  return JsonReader(v, name(key));
}

void JsonReader::finish() const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (!read_.count(it.key())) fail(NNRT_ERR_INVALID_ARGUMENT, "unknown key '", name(it.key()), "'");
  }
}

}  // namespace nnrt
