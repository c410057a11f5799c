#include "core/json_options.h"

#include <cmath>
#include <cstring>

#include "core/error.h"

namespace nnrt {

Json parse_json_strict(const char *begin, const char *end, int max_depth, nnrt_status status, const std::string &what) {
  // One set of keys per object being parsed, to find a key given twice.
  std::vector<std::set<std::string>> open_objects;
  auto check = [&](int depth, Json::parse_event_t event, Json &parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= max_depth) fail(status, what, ": nested deeper than ", max_depth, " levels");
        if (event == Json::parse_event_t::object_start) open_objects.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        open_objects.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!open_objects.back().insert(parsed.get<std::string>()).second) {
          fail(status, what, ": the key ", json_excerpt(parsed), " is given twice in one object");
        }
        break;
      default:
        break;
    }
    return true;
  };
  try {
    return Json::parse(begin, end, check);
  } catch (const Json::exception &e) {
    // Syntax errors (the message carries the byte position and the offending token) and numbers too
    // large for a double (out_of_range).
    std::string m = e.what();
    size_t p = m.find("parse error");
    if (p == std::string::npos) p = m.find("number overflow");
    fail(status, what, " is not valid JSON: ", p == std::string::npos ? m : m.substr(p));
  }
}

Json parse_json_object(const char *text, const std::string &what) {
  if (!text || !*text) return Json::object();
  Json j = parse_json_strict(text, text + std::strlen(text), kMaxJsonDepth, NNRT_ERR_INVALID_ARGUMENT, what);
  if (!j.is_object()) fail(NNRT_ERR_INVALID_ARGUMENT, what, ": expected a JSON object, got ", json_excerpt(j));
  return j;
}

namespace {

// An integer that fits int64_t: the parser keeps integers up to 2^64 - 1 as unsigned.
bool is_int64(const Json &v) {
  return v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX));
}

}  // namespace

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
  if (!is_int64(v)) wrong_type(key, "an integer");
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
    if (!is_int64(e)) wrong_type(key, "a list of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::vector<int64_t> JsonReader::get_int_or_list(const std::string &key, std::vector<int64_t> fallback, size_t n,
                                                 int64_t min) {
  if (!has(key)) return fallback;
  const Json &v = raw(key);
  std::vector<int64_t> out;
  if (is_int64(v)) {
    out.assign(n, v.get<int64_t>());
  } else if (v.is_array() && v.size() == n) {
    for (const Json &e : v) {
      if (!is_int64(e)) wrong_type(key, cat("an integer or a list of ", n, " integers").c_str());
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
