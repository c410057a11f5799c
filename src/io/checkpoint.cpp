// Writing checkpoints, and what the writer and the reader share (dtype names, checksums).
#include "io/checkpoint.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/dtype.h"
#include "core/error.h"
#include "core/json_options.h"
#include "io/atomic_file.h"

// Tensor bytes are copied to and from memory as they are; safetensors stores them little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "checkpoints assume a little-endian host");

namespace nnrt::io {

namespace {

struct DtypeName {
  nnrt_dtype dtype;
  const char *name;
};
const DtypeName kDtypeNames[] = {
    {NNRT_DTYPE_F32, "F32"}, {NNRT_DTYPE_F64, "F64"}, {NNRT_DTYPE_F16, "F16"}, {NNRT_DTYPE_BF16, "BF16"},
    {NNRT_DTYPE_I32, "I32"}, {NNRT_DTYPE_I64, "I64"}, {NNRT_DTYPE_U8, "U8"},   {NNRT_DTYPE_BOOL, "BOOL"},
    {NNRT_DTYPE_I8, "I8"},
};

// Strings go into the header as JSON; names and metadata come from nnrt's own (valid UTF-8) JSON,
// but a stray invalid byte must not turn a save into an internal error.
std::string json_string(const std::string &s) { return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string shape_text(const Shape &shape) {
  std::string out;
  for (int32_t i = 0; i < shape.rank; ++i) out += (i ? "," : "") + std::to_string(shape.dims[i]);
  return out;
}

void check_writable(const TensorRecord &t, std::set<std::string> &names) {
  if (t.name == "__metadata__")
    fail(NNRT_ERR_INVALID_ARGUMENT, "checkpoint: the tensor name \"__metadata__\" is reserved");
  if (!names.insert(t.name).second)
    fail(NNRT_ERR_INVALID_ARGUMENT, "checkpoint: tensor \"", t.name, "\" is given twice");
  if (!safetensors_dtype_name(t.dtype))
    fail(NNRT_ERR_INVALID_ARGUMENT, "checkpoint: tensor \"", t.name, "\" has no dtype");
  if (t.shape.rank < 0 || t.shape.rank > NNRT_MAX_DIMS) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "checkpoint: tensor \"", t.name, "\" has rank ", t.shape.rank);
  }
  for (int32_t i = 0; i < t.shape.rank; ++i) {
    if (t.shape.dims[i] < 0) fail(NNRT_ERR_INVALID_ARGUMENT, "checkpoint: tensor \"", t.name, "\" has a negative dim");
  }
  size_t expected = static_cast<size_t>(t.shape.numel()) * dtype_size(t.dtype);
  if (t.size() != expected) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "checkpoint: tensor \"", t.name, "\" is ", dtype_name(t.dtype), " ",
         to_string(t.shape), " (", expected, " bytes) but holds ", t.size(), " bytes");
  }
}

// The 8-byte length followed by the padded JSON header; the data section is the tensors' bytes in
// order, so the writer never needs a second copy of them.
std::string encode_header(const Checkpoint &checkpoint) {
  std::set<std::string> names;
  std::vector<TensorEntry> entries;
  uint64_t offset = 0;
  uint32_t data_crc = 0;
  for (const TensorRecord &t : checkpoint.tensors) {
    check_writable(t, names);
    entries.push_back({t.name, t.dtype, t.shape, offset, offset + t.size()});
    offset += t.size();
    data_crc = crc32_of(t.data(), t.size(), data_crc);
  }
  std::map<std::string, std::string> metadata = checkpoint.metadata;
  metadata[kFormatKey] = std::to_string(kCheckpointFormat);
  metadata[kChecksumKey] = crc32_text(data_crc);
  std::string meaning = header_checksum_text(metadata, entries);
  metadata[kHeaderChecksumKey] =
      crc32_text(crc32_of(reinterpret_cast<const unsigned char *>(meaning.data()), meaning.size()));

  std::string json = "{\"__metadata__\":{";
  bool first = true;
  for (const auto &[key, value] : metadata) {
    json += (first ? "" : ",") + json_string(key) + ":" + json_string(value);
    first = false;
  }
  json += "}";
  for (const TensorEntry &e : entries) {
    json += "," + json_string(e.name) + ":{\"dtype\":\"" + safetensors_dtype_name(e.dtype) + "\",\"shape\":[" +
            shape_text(e.shape) + "],\"data_offsets\":[" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]}";
  }
  json += "}";
  // Padding keeps the data section 8-byte aligned for readers that map the file.
  while (json.size() % 8) json += ' ';

  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + json;
}

}  // namespace

const TensorRecord *Checkpoint::find(const std::string &name) const {
  for (const TensorRecord &t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const char *safetensors_dtype_name(nnrt_dtype dtype) {
  for (const DtypeName &d : kDtypeNames)
    if (d.dtype == dtype) return d.name;
  return nullptr;
}

bool parse_safetensors_dtype(const std::string &name, nnrt_dtype *out) {
  for (const DtypeName &d : kDtypeNames) {
    if (name == d.name) {
      *out = d.dtype;
      return true;
    }
  }
  return false;
}

std::string crc32_text(uint32_t crc) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(crc));
  return std::string("crc32:") + buf;
}

uint32_t crc32_of(const unsigned char *data, size_t size, uint32_t crc) {
  uLong c = crc;
  while (size > 0) {  // zlib takes a uInt length
    uInt chunk = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    c = crc32(c, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(c);
}

void sort_by_offsets(std::vector<TensorEntry> &entries) {
  std::sort(entries.begin(), entries.end(), [](const TensorEntry &a, const TensorEntry &b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end < b.end;
    return a.name < b.name;  // empty tensors may share an offset
  });
}

std::string header_checksum_text(const std::map<std::string, std::string> &metadata,
                                 const std::vector<TensorEntry> &tensors) {
  std::string text;
  for (const auto &[key, value] : metadata) {
    if (key == kChecksumKey || key == kHeaderChecksumKey) continue;
    text += key + '\0' + value + '\0';
  }
  std::vector<TensorEntry> ordered = tensors;
  sort_by_offsets(ordered);
  for (const TensorEntry &t : ordered) {
    text += t.name + '\0' + safetensors_dtype_name(t.dtype) + '\0' + shape_text(t.shape) + '\0' +
            std::to_string(t.begin) + "," + std::to_string(t.end) + '\0';
  }
  return text;
}

std::vector<unsigned char> encode_checkpoint(const Checkpoint &checkpoint) {
  std::string header = encode_header(checkpoint);
  std::vector<unsigned char> out(header.begin(), header.end());
  for (const TensorRecord &t : checkpoint.tensors) out.insert(out.end(), t.data(), t.data() + t.size());
  return out;
}

void write_checkpoint(const std::string &path, const Checkpoint &checkpoint) {
  std::string header = encode_header(checkpoint);
  std::vector<ByteRange> parts = {{header.data(), header.size()}};
  for (const TensorRecord &t : checkpoint.tensors) parts.push_back({t.data(), t.size()});
  write_file_atomically(path, parts);
}

}  // namespace nnrt::io
