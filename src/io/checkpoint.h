// The checkpoint format: one safetensors file (an 8-byte little-endian header length N, N bytes of
// JSON header -- tensors with dtype, shape and data_offsets, plus "__metadata__" -- padded with
// spaces to a multiple of 8, then the data section), with nnrt's metadata:
//   nnrt.format           the format version ("1")
//   nnrt.config           the model JSON (as a string)
//   nnrt.trainer          training state, when a trainer saved the file (a JSON string)
//   nnrt.checksum         "crc32:xxxxxxxx" (zlib's crc32, 8 lowercase hex digits) of the data section
//   nnrt.header_checksum  "crc32:xxxxxxxx" of the header's meaning (see header_checksum_text), so
//                         that a flipped bit in a name, a shape or the config is caught as well
// Any safetensors reader can open the file; the checksums are nnrt's own addition.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/shape.h"
#include "nnrt/nnrt.h"

namespace nnrt::io {

// The format version this nnrt writes; files with a higher version are refused (NNRT_ERR_VERSION).
constexpr int kCheckpointFormat = 1;

// The metadata keys nnrt reads and writes.
inline constexpr const char *kFormatKey = "nnrt.format";
inline constexpr const char *kConfigKey = "nnrt.config";
inline constexpr const char *kTrainerKey = "nnrt.trainer";
inline constexpr const char *kChecksumKey = "nnrt.checksum";
inline constexpr const char *kHeaderChecksumKey = "nnrt.header_checksum";

// The largest JSON header read (the safetensors reference limit): anything bigger is not a file
// nnrt wrote, and refusing it early keeps a hostile length from costing memory.
constexpr uint64_t kMaxHeaderBytes = 100u * 1000 * 1000;

struct TensorRecord {
  std::string name;
  nnrt_dtype dtype = NNRT_DTYPE_F32;
  Shape shape;
  // The values, row-major and little-endian: in `bytes` for a record made in memory; for one read
  // from a file, `view_size` bytes at `view` inside `source` (the file's mapping, or the buffer it
  // was read into).
  std::vector<unsigned char> bytes;
  std::shared_ptr<const void> source;
  const unsigned char *view = nullptr;
  size_t view_size = 0;

  const unsigned char *data() const { return source ? view : bytes.data(); }
  size_t size() const { return source ? view_size : bytes.size(); }
};

struct Checkpoint {
  std::map<std::string, std::string> metadata;  // safetensors metadata: string -> string
  std::vector<TensorRecord> tensors;            // in data order (sort_by_offsets)
  // Read from a file that was mapped: the records' bytes are the file's pages. Otherwise they lie
  // in a buffer holding the whole file, which a record kept for long would keep alive.
  bool mapped = false;
  const TensorRecord *find(const std::string &name) const;
};

// The safetensors dtype name ("F32", "BF16", "BOOL", ...) of an nnrt dtype, and back; false for a
// name nnrt has no dtype for.
const char *safetensors_dtype_name(nnrt_dtype dtype);
bool parse_safetensors_dtype(const std::string &name, nnrt_dtype *out);

// The file's bytes: sets nnrt.format, nnrt.checksum and nnrt.header_checksum (replacing any the
// caller put in). Throws NNRT_ERR_INVALID_ARGUMENT for a record whose bytes do not match its dtype
// and shape, a duplicate or reserved name ("__metadata__").
std::vector<unsigned char> encode_checkpoint(const Checkpoint &checkpoint);

// Writes encode_checkpoint's bytes atomically (atomic_file.h): the previous file at `path`
// survives any failure. Throws NNRT_ERR_IO naming the path and the system's reason.
void write_checkpoint(const std::string &path, const Checkpoint &checkpoint);

// Reads and validates a checkpoint file before trusting any of it: header length and JSON, every
// tensor's dtype, shape, offsets (in order, non-overlapping, covering the data section exactly),
// sizes, the format version and both checksums. Throws NNRT_ERR_IO (cannot open or read),
// NNRT_ERR_CORRUPT (anything malformed, truncated, foreign or failing a checksum, with what and
// where), NNRT_ERR_VERSION (a newer format). Leftover temporary files of interrupted saves are
// never looked at: only `path` is read. With `map`, the file is mapped where the system allows
// (file_bytes.h, and `mapped` is set); the records are views of the mapping or of the buffer read,
// which they keep alive.
Checkpoint read_checkpoint(const std::string &path, bool map = false);

// The same validation on a buffer (for fuzzing and tests); `what` names it in messages. With
// `owner` (what keeps `data` alive), the records are views of `data`; without, copies.
Checkpoint parse_checkpoint(const unsigned char *data, size_t size, const std::string &what,
                            std::shared_ptr<const void> owner = nullptr);

// "crc32:0123abcd"
std::string crc32_text(uint32_t crc);

// zlib's crc32 of a buffer of any size.
uint32_t crc32_of(const unsigned char *data, size_t size, uint32_t crc = 0);

// A tensor as the header describes it.
struct TensorEntry {
  std::string name;
  nnrt_dtype dtype = NNRT_DTYPE_F32;
  Shape shape;
  uint64_t begin = 0, end = 0;  // data_offsets
};

// Data order: by begin, then end, then name (empty tensors may share an offset).
void sort_by_offsets(std::vector<TensorEntry> &entries);

// What nnrt.header_checksum is the crc32 of, so that other readers can check it too: for each
// metadata entry in byte order of the keys, except the two checksums, "key\0value\0"; then for
// each tensor in data order, "name\0DTYPE\0d0,d1,...\0begin,end\0" (decimal numbers).
std::string header_checksum_text(const std::map<std::string, std::string> &metadata,
                                 const std::vector<TensorEntry> &tensors);

}  // namespace nnrt::io
