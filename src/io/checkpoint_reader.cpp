// Reading checkpoints: every length, name, dtype, shape and offset in the header is checked, then
// the format version and both checksums, before a single tensor byte is handed out. A file can be
// anything (truncated, bit-flipped, another program's, hostile), so nothing in it is trusted.
#include <algorithm>
#include <cstring>
#include <set>

#include "core/dtype.h"
#include "core/error.h"
#include "core/json_options.h"
#include "core/run_control.h"
#include "io/checkpoint.h"
#include "io/file_bytes.h"

namespace nnrt::io {

namespace {

template <class... Parts>
[[noreturn]] void corrupt(const std::string &what, Parts &&...parts) {
  fail(NNRT_ERR_CORRUPT, what, ": ", std::forward<Parts>(parts)...);
}

uint64_t read_u64_le(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A safetensors header is an object of objects whose deepest values are the lists "shape" and
// "data_offsets": three levels. Deeper nesting, a key given twice (a plain parser would keep the last
// one silently) or a number beyond a double is damage.
constexpr int kHeaderDepth = 3;

Json parse_header_json(const unsigned char *text, size_t size, const std::string &what) {
  const char *begin = reinterpret_cast<const char *>(text);
  return parse_json_strict(begin, begin + size, kHeaderDepth, NNRT_ERR_CORRUPT, what + ": the header");
}

std::map<std::string, std::string> read_metadata(const Json &header, const std::string &what) {
  std::map<std::string, std::string> metadata;
  auto it = header.find("__metadata__");
  if (it == header.end()) return metadata;
  if (!it->is_object()) corrupt(what, "__metadata__: expected an object of strings, got ", json_excerpt(*it));
  for (auto m = it->begin(); m != it->end(); ++m) {
    if (!m->is_string()) corrupt(what, "__metadata__.", m.key(), ": expected a string, got ", json_excerpt(*m));
    metadata[m.key()] = m->get<std::string>();
  }
  return metadata;
}

// The version comes first: a newer format may change everything after it, checksums included.
void check_format(const std::map<std::string, std::string> &metadata, const std::string &what) {
  auto it = metadata.find(kFormatKey);
  if (it == metadata.end()) {
    corrupt(what, "not an nnrt checkpoint (its __metadata__ has no \"", kFormatKey,
            "\"; a safetensors file that nnrt did not write)");
  }
  const std::string &v = it->second;
  bool digits =
      !v.empty() && v.size() <= 9 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  int format = digits ? std::stoi(v) : 0;
  if (format < 1) corrupt(what, kFormatKey, ": expected a version number such as \"1\", got ", json_excerpt(Json(v)));
  if (format > kCheckpointFormat) {
    fail(NNRT_ERR_VERSION, what, ": written by a newer nnrt (checkpoint format ", format,
         "); this nnrt reads checkpoint format ", kCheckpointFormat, " and older");
  }
}

uint64_t read_unsigned(const Json &v, const std::string &what, const std::string &field) {
  if (!v.is_number_unsigned()) corrupt(what, field, ": expected a non-negative integer, got ", json_excerpt(v));
  return v.get<uint64_t>();
}

TensorEntry read_entry(const std::string &name, const Json &spec, const std::string &what) {
  std::string where = "tensor " + json_excerpt(Json(name));
  if (!spec.is_object())
    corrupt(what, where, ": expected an object with dtype, shape and data_offsets, got ", json_excerpt(spec));
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    if (it.key() != "dtype" && it.key() != "shape" && it.key() != "data_offsets") {
      corrupt(what, where, ": unknown key \"", it.key(), "\" (expected dtype, shape and data_offsets)");
    }
  }
  for (const char *key : {"dtype", "shape", "data_offsets"}) {
    if (!spec.contains(key)) corrupt(what, where, ": \"", key, "\" is missing");
  }
  TensorEntry e;
  e.name = name;
  const Json &dtype = spec["dtype"];
  if (!dtype.is_string() || !parse_safetensors_dtype(dtype.get<std::string>(), &e.dtype)) {
    corrupt(what, where, ".dtype: expected one of F32, F64, F16, BF16, I32, I64, U8, BOOL, got ", json_excerpt(dtype));
  }
  const Json &shape = spec["shape"];
  if (!shape.is_array() || shape.size() > NNRT_MAX_DIMS) {
    corrupt(what, where, ".shape: expected a list of at most ", NNRT_MAX_DIMS, " dims, got ", json_excerpt(shape));
  }
  // The element count, and that of the non-zero dims: an empty tensor may not hide dims whose
  // product would overflow the int64 arithmetic that shapes get elsewhere.
  uint64_t count = 1, nonzero = 1;
  bool overflow = false;
  e.shape.rank = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    uint64_t d = read_unsigned(shape[i], what, where + ".shape");
    if (d > 0 && (__builtin_mul_overflow(nonzero, d, &nonzero) || nonzero > static_cast<uint64_t>(INT64_MAX))) {
      corrupt(what, where, ".shape: ", json_excerpt(shape), " has too many elements");
    }
    e.shape.dims[i] = static_cast<int64_t>(d);
    overflow |= __builtin_mul_overflow(count, d, &count);
  }
  const Json &offsets = spec["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    corrupt(what, where, ".data_offsets: expected [begin, end], got ", json_excerpt(offsets));
  }
  e.begin = read_unsigned(offsets[0], what, where + ".data_offsets");
  e.end = read_unsigned(offsets[1], what, where + ".data_offsets");
  if (e.end < e.begin) corrupt(what, where, ".data_offsets: end ", e.end, " is before begin ", e.begin);
  uint64_t bytes = 0;
  overflow |= __builtin_mul_overflow(count, static_cast<uint64_t>(dtype_size(e.dtype)), &bytes);
  if (overflow || bytes != e.end - e.begin) {
    corrupt(what, where, ": ", dtype.get<std::string>(), " ", to_string(e.shape), " needs ",
            overflow ? std::string("more bytes than a file can hold") : cat(bytes, " bytes"), " but data_offsets [",
            e.begin, ", ", e.end, "] hold ", e.end - e.begin);
  }
  return e;
}

// Offsets must tile the data section: sorted, each starting where the previous ended, the last
// ending at the end of the file. Anything else is overlap, a gap or truncation.
void check_layout(std::vector<TensorEntry> &entries, uint64_t data_size, const std::string &what) {
  sort_by_offsets(entries);
  uint64_t at = 0;
  for (const TensorEntry &e : entries) {
    if (e.begin != at) {
      corrupt(what, "tensor \"", e.name, "\" starts at data offset ", e.begin, " but the previous tensor ends at ", at,
              e.begin < at ? " (they overlap)" : " (a gap)");
    }
    at = e.end;
  }
  if (at != data_size) {
    corrupt(what, "the tensors cover ", at, " bytes of data but the file holds ", data_size,
            at > data_size ? " (the file is truncated)" : " (extra bytes at the end)");
  }
}

void check_checksum(const std::map<std::string, std::string> &metadata, const char *key, uint32_t computed,
                    const char *covers, const std::string &what) {
  auto it = metadata.find(key);
  if (it == metadata.end()) corrupt(what, "__metadata__ has no \"", key, "\" (the checksum of ", covers, ")");
  std::string expected = crc32_text(computed);
  if (it->second.size() != expected.size() || it->second.compare(0, 6, "crc32:") != 0) {
    corrupt(what, key, ": expected \"crc32:\" and 8 hex digits, got ", json_excerpt(Json(it->second)));
  }
  if (it->second != expected) {
    corrupt(what, "the ", covers, " fails its checksum (", key, " says ", it->second, ", the file gives ", expected,
            "): the file is damaged");
  }
}

// zlib's crc32 of a section, 64 KB at a time with check_run() between: the checksum is where a load
// of a mapped file reads it, and a call with run options stops within 64 KB.
uint32_t crc32_checked(const unsigned char *data, uint64_t size) {
  constexpr uint64_t kChunk = 1 << 16;
  uint32_t crc = 0;
  for (uint64_t at = 0; at < size; at += kChunk) {
    check_run();
    crc = crc32_of(data + at, std::min(kChunk, size - at), crc);
  }
  return crc;
}

}  // namespace

Checkpoint parse_checkpoint(const unsigned char *data, size_t size, const std::string &what,
                            std::shared_ptr<const void> owner) {
  if (size < 8) corrupt(what, "too short for a safetensors file (", size, " bytes; the header length alone takes 8)");
  uint64_t header_size = read_u64_le(data);
  if (header_size > size - 8 || header_size > kMaxHeaderBytes) {
    corrupt(what, "not a safetensors file, or truncated: the header length is ", header_size, " bytes but ", size - 8,
            " bytes follow it", header_size > kMaxHeaderBytes ? cat(" (the limit is ", kMaxHeaderBytes, ")") : "");
  }
  const unsigned char *header_text = data + 8;
  // The JSON parser stops at a NUL byte as if the text ended there; a header never holds one.
  if (const void *nul = std::memchr(header_text, 0, header_size)) {
    corrupt(what, "the header holds a NUL byte at file offset ", static_cast<const unsigned char *>(nul) - data,
            " (a safetensors header is JSON text)");
  }
  Json header = parse_header_json(header_text, header_size, what);
  if (!header.is_object()) corrupt(what, "the header: expected a JSON object, got ", json_excerpt(header));

  Checkpoint checkpoint;
  checkpoint.metadata = read_metadata(header, what);
  check_format(checkpoint.metadata, what);

  std::vector<TensorEntry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() != "__metadata__") entries.push_back(read_entry(it.key(), *it, what));
  }
  const unsigned char *data_section = data + 8 + header_size;
  uint64_t data_size = size - 8 - header_size;
  check_layout(entries, data_size, what);

  std::string meaning = header_checksum_text(checkpoint.metadata, entries);
  check_checksum(checkpoint.metadata, kHeaderChecksumKey,
                 crc32_of(reinterpret_cast<const unsigned char *>(meaning.data()), meaning.size()), "header", what);
  check_checksum(checkpoint.metadata, kChecksumKey, crc32_checked(data_section, data_size), "data section", what);

  for (const TensorEntry &e : entries) {
    TensorRecord t;
    t.name = e.name;
    t.dtype = e.dtype;
    t.shape = e.shape;
    if (owner) {
      t.source = owner;
      t.view = data_section + e.begin;
      t.view_size = e.end - e.begin;
    } else {
      t.bytes.assign(data_section + e.begin, data_section + e.end);
    }
    checkpoint.tensors.push_back(std::move(t));
  }
  return checkpoint;
}

Checkpoint read_checkpoint(const std::string &path, bool map) {
  FileBytes file = file_bytes(path, map);
  Checkpoint checkpoint = parse_checkpoint(file.data, file.size, cat("checkpoint '", path, "'"), file.owner);
  checkpoint.mapped = file.mapped;
  return checkpoint;
}

}  // namespace nnrt::io
