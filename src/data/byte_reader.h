// Reading dataset files: whole files into memory, and sequential reads of plain or gzip data.
//
// Readers parse from memory so that the fuzz targets (tests/fuzz) need no file I/O. Gzip is
// recognised by its magic bytes (1f 8b), not by the file name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nnrt::data {

// The whole file. Throws NNRT_ERR_IO naming the file and the system's reason.
std::vector<unsigned char> read_file(const std::string &path);

bool is_gzip(const unsigned char *data, size_t size);

// Sequential reads from bytes in memory, inflated on the fly when they are gzip data (one or more
// members, as `cat a.gz b.gz` makes). The bytes must outlive the reader.
class ByteReader {
 public:
  // `name` is used in messages.
  ByteReader(const unsigned char *data, size_t size, std::string name);
  ~ByteReader();
  ByteReader(const ByteReader &) = delete;
  ByteReader &operator=(const ByteReader &) = delete;

  // Reads up to n bytes into dst and returns how many were read: fewer than n only at the end.
  // Throws NNRT_ERR_CORRUPT for damaged or truncated gzip data.
  size_t read(void *dst, size_t n);
  // Skips up to n bytes; returns how many there were.
  uint64_t skip(uint64_t n);
  // Reads everything left.
  std::vector<unsigned char> read_rest();

  // An upper bound of the bytes left: exact for plain data; for gzip, what deflate's best ratio
  // (1032:1) could make of the compressed bytes left. For sizing buffers without trusting headers.
  uint64_t max_remaining() const;
  uint64_t position() const { return position_; }  // bytes handed out so far (decompressed)
  bool compressed() const { return gzip_ != nullptr; }
  const std::string &name() const { return name_; }

 private:
  struct Gzip;
  size_t inflate_some(unsigned char *dst, size_t n);

  const unsigned char *data_;
  size_t size_;
  size_t offset_ = 0;  // in data_, for plain data
  uint64_t position_ = 0;
  std::string name_;
  std::unique_ptr<Gzip> gzip_;
};

}  // namespace nnrt::data
