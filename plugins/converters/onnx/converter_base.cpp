#include "converter_base.h"

#include <algorithm>

namespace nnrt::io::onnx_format {

Shape Shape::of(const int64_t *d, int32_t rank) {
  if (rank < 0 || rank > NNRT_MAX_DIMS) fail(NNRT_ERR_INVALID_ARGUMENT, "a shape has at most ", NNRT_MAX_DIMS, " dims, got ", rank);
  Shape s;
  s.rank = rank;
  std::copy(d, d + rank, s.dims.begin());
  return s;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

std::string to_string(const Shape &s) {
  std::string out;
  for (int64_t d : s.vec()) out += (out.empty() ? "" : ", ") + std::to_string(d);
  return "[" + out + "]";
}

Json parse_json_object(const char *text, const std::string &what) {
  if (!text || !*text) return Json::object();
  Json j = Json::parse(text, nullptr, false);
  if (!j.is_object()) fail(NNRT_ERR_INVALID_ARGUMENT, what, ": expected a JSON object");
  return j;
}

const Json *JsonReader::take(const std::string &key) {
  auto it = object_.find(key);
  if (it == object_.end()) return nullptr;
  read_.insert(key);
  return &*it;
}

void JsonReader::wrong(const std::string &key, const char *expected) const {
  fail(NNRT_ERR_INVALID_ARGUMENT, where_, ".", key, ": expected ", expected, ", got ", object_.at(key).dump());
}

bool JsonReader::get_bool(const std::string &key, bool fallback) {
  const Json *v = take(key);
  if (v && !v->is_boolean()) wrong(key, "true or false");
  return v ? v->get<bool>() : fallback;
}

int64_t JsonReader::get_int(const std::string &key, int64_t fallback, int64_t min, int64_t max) {
  const Json *v = take(key);
  if (!v) return fallback;
  if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > INT64_MAX)) wrong(key, "an integer");
  int64_t n = v->get<int64_t>();
  if (n < min || n > max) fail(NNRT_ERR_INVALID_ARGUMENT, where_, ".", key, ": expected an integer from ", min, " to ", max, ", got ", n);
  return n;
}

std::string JsonReader::get_string(const std::string &key, const std::string &fallback) {
  const Json *v = take(key);
  if (v && !v->is_string()) wrong(key, "a string");
  return v ? v->get<std::string>() : fallback;
}

std::vector<int64_t> JsonReader::get_int_list(const std::string &key, std::vector<int64_t> fallback) {
  const Json *v = take(key);
  if (!v) return fallback;
  if (!v->is_array()) wrong(key, "a list of integers");
  std::vector<int64_t> out;
  for (const Json &e : *v) {
    if (!e.is_number_integer() || (e.is_number_unsigned() && e.get<uint64_t>() > INT64_MAX)) wrong(key, "a list of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

void JsonReader::finish() const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (!read_.count(it.key())) fail(NNRT_ERR_INVALID_ARGUMENT, "unknown key '", where_, ".", it.key(), "'");
  }
}

}  // namespace nnrt::io::onnx_format
