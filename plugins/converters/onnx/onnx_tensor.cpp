#include "onnx_tensor.h"

#include <cstring>
#include <fstream>

#include "converter_base.h"
#include "nnrt/kernels/half.h"

namespace nnrt::io::onnx_format {

namespace {

using onnx::TensorProto;

int64_t checked_numel(const std::vector<int64_t> &dims, const std::string &where) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) fail(NNRT_ERR_CORRUPT, where, ": negative dim ", d);
    if (d != 0 && n > kMaxElements / d) {
      fail(NNRT_ERR_UNSUPPORTED, where, ": its declared shape holds more than ", kMaxElements, " elements");
    }
    n *= d;
  }
  return n;
}

// Appends the values of a typed repeated field as `elem_type`'s little-endian bytes.
template <class Field>
void pack_field(const Field &field, int32_t elem_type, std::string &out) {
  size_t size = element_size(elem_type);
  out.resize(static_cast<size_t>(field.size()) * size);
  char *p = out.data();
  for (auto v : field) {
    switch (elem_type) {
      case TensorProto::FLOAT: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
      case TensorProto::DOUBLE: { double d = static_cast<double>(v); std::memcpy(p, &d, 8); break; }
      case TensorProto::INT64: case TensorProto::UINT64: { uint64_t u = static_cast<uint64_t>(v); std::memcpy(p, &u, 8); break; }
      case TensorProto::INT32: case TensorProto::UINT32: { uint32_t u = static_cast<uint32_t>(v); std::memcpy(p, &u, 4); break; }
      case TensorProto::INT16: case TensorProto::UINT16: case TensorProto::FLOAT16: case TensorProto::BFLOAT16: {
        uint16_t u = static_cast<uint16_t>(v); std::memcpy(p, &u, 2); break;
      }
      default: { uint8_t u = static_cast<uint8_t>(v); std::memcpy(p, &u, 1); break; }
    }
    p += size;
  }
}

std::string read_external(const TensorProto &t, const std::string &model_dir, size_t expected, const std::string &where) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception &) {
      fail(NNRT_ERR_CORRUPT, where, ": external data ", kv.key(), " \"", kv.value(), "\" is not a number");
    }
  }
  if (location.empty()) fail(NNRT_ERR_CORRUPT, where, ": external data without a location");
  if (model_dir.empty()) {
    fail(NNRT_ERR_UNSUPPORTED, where, ": its data is in an external file (\"", location,
         "\"); import the model from its path, not from memory");
  }
  // The spec: a path relative to the model's folder, never leaving it.
  bool escapes = location[0] == '/' || location.find('\\') != std::string::npos;
  size_t start = 0;
  while (!escapes && start <= location.size()) {
    size_t end = location.find('/', start);
    if (location.substr(start, end == std::string::npos ? std::string::npos : end - start) == "..") escapes = true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (escapes) fail(NNRT_ERR_CORRUPT, where, ": external data location \"", location, "\" lies outside the model's folder");
  if (offset < 0) fail(NNRT_ERR_CORRUPT, where, ": external data offset ", offset, " is negative");
  if (length >= 0 && static_cast<uint64_t>(length) != expected) {
    fail(NNRT_ERR_CORRUPT, where, ": external data length ", length, " disagrees with its shape (", expected, " bytes)");
  }
  std::string path = model_dir + "/" + location;
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) fail(NNRT_ERR_CORRUPT, where, ": its external data file \"", path, "\" is missing or cannot be opened");
  auto size = static_cast<int64_t>(f.tellg());
  if (size < offset || static_cast<uint64_t>(size - offset) < expected) {
    fail(NNRT_ERR_CORRUPT, where, ": external data file \"", path, "\" holds ", size, " bytes, but ", expected,
         " are needed from offset ", offset);
  }
  std::string out(expected, '\0');
  f.seekg(offset);
  if (!f.read(out.data(), static_cast<std::streamsize>(expected))) fail(NNRT_ERR_IO, where, ": cannot read \"", path, "\"");
  return out;
}

}  // namespace

size_t element_size(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT: case TensorProto::INT32: case TensorProto::UINT32: return 4;
    case TensorProto::DOUBLE: case TensorProto::INT64: case TensorProto::UINT64: return 8;
    case TensorProto::INT16: case TensorProto::UINT16: case TensorProto::FLOAT16: case TensorProto::BFLOAT16: return 2;
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::BOOL: return 1;
    default: return 0;
  }
}

const char *element_type_name(int32_t elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type)) {
    static thread_local std::string name;
    name = onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
    return name.c_str();
  }
  return "an unknown element type";
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Shape HostTensor::shape(const std::string &what) const {
  if (dims.size() > NNRT_MAX_DIMS) {
    fail(NNRT_ERR_UNSUPPORTED, what, ": tensor '", name, "' has ", dims.size(), " dims; nnrt takes at most ", NNRT_MAX_DIMS);
  }
  return Shape::of(dims);
}

template <class T>
static std::vector<T> convert(const HostTensor &h) {
  size_t n = static_cast<size_t>(h.numel());
  std::vector<T> out(n);
  const char *p = h.bytes.data();
  for (size_t i = 0; i < n; ++i) {
    switch (h.elem_type) {
      case TensorProto::FLOAT: { float v; std::memcpy(&v, p + 4 * i, 4); out[i] = static_cast<T>(v); break; }
      case TensorProto::DOUBLE: { double v; std::memcpy(&v, p + 8 * i, 8); out[i] = static_cast<T>(v); break; }
      case TensorProto::INT64: { int64_t v; std::memcpy(&v, p + 8 * i, 8); out[i] = static_cast<T>(v); break; }
      case TensorProto::UINT64: { uint64_t v; std::memcpy(&v, p + 8 * i, 8); out[i] = static_cast<T>(v); break; }
      case TensorProto::INT32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); out[i] = static_cast<T>(v); break; }
      case TensorProto::UINT32: { uint32_t v; std::memcpy(&v, p + 4 * i, 4); out[i] = static_cast<T>(v); break; }
      case TensorProto::INT16: { int16_t v; std::memcpy(&v, p + 2 * i, 2); out[i] = static_cast<T>(v); break; }
      case TensorProto::UINT16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); out[i] = static_cast<T>(v); break; }
      case TensorProto::FLOAT16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); out[i] = static_cast<T>(kernels::f16_to_f32(v)); break; }
      case TensorProto::BFLOAT16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); out[i] = static_cast<T>(kernels::bf16_to_f32(v)); break; }
      case TensorProto::INT8: out[i] = static_cast<T>(static_cast<int8_t>(p[i])); break;
      case TensorProto::UINT8: case TensorProto::BOOL: out[i] = static_cast<T>(static_cast<uint8_t>(p[i])); break;
      default: fail(NNRT_ERR_UNSUPPORTED, "tensor '", h.name, "': element type ", element_type_name(h.elem_type), " is not numeric");
    }
  }
  return out;
}

std::vector<float> HostTensor::floats() const { return convert<float>(*this); }

HostTensor float_values(const std::string &name, std::vector<int64_t> dims, const std::vector<float> &values) {
  HostTensor t;
  t.name = name;
  t.elem_type = TensorProto::FLOAT;
  t.dims = std::move(dims);
  t.bytes.assign(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
  return t;
}
std::vector<int64_t> HostTensor::ints() const { return convert<int64_t>(*this); }

HostTensor read_tensor(TensorProto &t, const std::string &model_dir, const std::string &where) {
  HostTensor h;
  h.name = t.name();
  h.elem_type = t.data_type();
  h.dims.assign(t.dims().begin(), t.dims().end());
  if (h.dims.size() > NNRT_MAX_DIMS) {
    fail(NNRT_ERR_UNSUPPORTED, where, ": ", h.dims.size(), " dims; nnrt takes at most ", NNRT_MAX_DIMS);
  }
  size_t size = element_size(h.elem_type);
  if (size == 0) fail(NNRT_ERR_UNSUPPORTED, where, ": element type ", element_type_name(h.elem_type), " is not supported");
  if (t.has_segment()) fail(NNRT_ERR_UNSUPPORTED, where, ": segmented tensors are not supported");
  int64_t n = checked_numel(h.dims, where);
  size_t expected = static_cast<size_t>(n) * size;
  auto check = [&](size_t got, const char *field) {
    if (got != expected) {
      fail(NNRT_ERR_CORRUPT, where, ": ", field, " holds ", got, " bytes, but its shape ", to_string(Shape::of(h.dims)),
           " of ", element_type_name(h.elem_type), " needs ", expected);
    }
  };
  if (t.data_location() == TensorProto::EXTERNAL) {
    h.bytes = read_external(t, model_dir, expected, where);
  } else if (t.has_raw_data()) {
    check(t.raw_data().size(), "raw_data");
    h.bytes.swap(*t.mutable_raw_data());  // taken, not copied
    t.clear_raw_data();
  } else {
    switch (h.elem_type) {
      case TensorProto::FLOAT: check(t.float_data_size() * size, "float_data"); pack_field(t.float_data(), h.elem_type, h.bytes); break;
      case TensorProto::DOUBLE: check(t.double_data_size() * size, "double_data"); pack_field(t.double_data(), h.elem_type, h.bytes); break;
      case TensorProto::INT64: check(t.int64_data_size() * size, "int64_data"); pack_field(t.int64_data(), h.elem_type, h.bytes); break;
      case TensorProto::UINT32: case TensorProto::UINT64:
        check(t.uint64_data_size() * size, "uint64_data"); pack_field(t.uint64_data(), h.elem_type, h.bytes); break;
      default: check(t.int32_data_size() * size, "int32_data"); pack_field(t.int32_data(), h.elem_type, h.bytes); break;
    }
    t.clear_float_data(); t.clear_double_data(); t.clear_int64_data(); t.clear_int32_data(); t.clear_uint64_data();
  }
  return h;
}

void write_tensor(TensorProto &t, const std::string &name, const std::vector<int64_t> &dims, const std::vector<float> &values) {
  t.set_name(name);
  t.set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(values.data(), values.size() * sizeof(float));
}

void write_int64_tensor(TensorProto &t, const std::string &name, const std::vector<int64_t> &values) {
  t.set_name(name);
  t.set_data_type(TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  t.set_raw_data(values.data(), values.size() * sizeof(int64_t));
}

}  // namespace nnrt::io::onnx_format
