// Helpers for the dataset tests: a temporary folder, IDX and gzip bytes made by hand, and the
// status and message of an nnrt::Error.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"

namespace nnrt::data::test {

using Bytes = std::vector<unsigned char>;

// A folder under the system's temp dir, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "nnrt-data-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) ADD_FAILURE() << "mkdtemp failed";
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string &name) const { return (path_ / name).string(); }
  std::string write(const std::string &name, const Bytes &bytes) const {
    std::ofstream out(file(name), std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return file(name);
  }
  std::string write(const std::string &name, const std::string &text) const {
    return write(name, Bytes(text.begin(), text.end()));
  }

 private:
  std::filesystem::path path_;
};

inline Bytes gzip(const Bytes &plain) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&z, plain.size()) + 64);
  z.next_in = const_cast<Bytef *>(plain.data());
  z.avail_in = static_cast<uInt>(plain.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline void put_be32(Bytes &b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(v >> s));
}

// An IDX file: the magic for `type_code`, the dims, then `payload` (already big-endian).
inline Bytes idx_file(unsigned char type_code, const std::vector<uint32_t> &dims, const Bytes &payload) {
  Bytes b = {0, 0, type_code, static_cast<unsigned char>(dims.size())};
  for (uint32_t d : dims) put_be32(b, d);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

inline Bytes idx_u8(const std::vector<uint32_t> &dims, const Bytes &values) { return idx_file(0x08, dims, values); }

// Values written big-endian, as IDX stores them.
template <class T>
Bytes big_endian(const std::vector<T> &values) {
  Bytes b;
  for (T v : values) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    for (size_t i = sizeof(T); i-- > 0;) b.push_back(raw[i]);  // the test hosts are little-endian
  }
  return b;
}

struct Failure {
  nnrt_status status = NNRT_OK;
  std::string message;
  bool has(const std::string &text) const { return message.find(text) != std::string::npos; }
};

// Runs f and returns the status and message of the nnrt::Error it throws (NNRT_OK if none).
template <class F>
Failure failure_of(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return {e.status(), e.what()};
  }
  return {};
}

}  // namespace nnrt::data::test
