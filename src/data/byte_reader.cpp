#include "data/byte_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

#include "core/error.h"

namespace nnrt::data {

namespace {

std::string system_reason(int err) { return std::error_code(err, std::generic_category()).message(); }

// zlib counts in uInt (32 bits): feed and drain it in pieces no larger than this.
constexpr size_t kZlibChunk = size_t{1} << 30;

}  // namespace

std::vector<unsigned char> read_file(const std::string &path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) fail(NNRT_ERR_IO, "cannot open '", path, "': ", system_reason(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};

  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(NNRT_ERR_IO, "cannot read '", path, "': ", system_reason(errno));
  if (S_ISDIR(st.st_mode)) fail(NNRT_ERR_IO, "cannot read '", path, "': it is a directory");
  // A pipe ends when its writer is done; a device such as /dev/zero never does.
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    fail(NNRT_ERR_IO, "cannot read '", path, "': it is a device, not a file or a pipe");
  }
  std::vector<unsigned char> bytes;
  // The size is a hint only: a file may be a pipe, or change while we read it.
  size_t capacity = (st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0) + 1;
  bytes.resize(std::max<size_t>(capacity, 4096));
  size_t used = 0;
  for (;;) {
    if (used == bytes.size()) bytes.resize(bytes.size() * 2);
    ssize_t got = ::read(fd, bytes.data() + used, std::min(bytes.size() - used, kZlibChunk));
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(NNRT_ERR_IO, "cannot read '", path, "': ", system_reason(errno));
    }
    if (got == 0) break;
    used += static_cast<size_t>(got);
  }
  bytes.resize(used);
  bytes.shrink_to_fit();
  return bytes;
}

bool is_gzip(const unsigned char *data, size_t size) { return size >= 2 && data[0] == 0x1f && data[1] == 0x8b; }

struct ByteReader::Gzip {
  z_stream z{};
  bool finished = false;  // the last member ended exactly at the end of the input
  ~Gzip() { inflateEnd(&z); }
};

ByteReader::ByteReader(const unsigned char *data, size_t size, std::string name)
    : data_(data), size_(size), name_(std::move(name)) {
  if (!is_gzip(data, size)) return;
  auto g = std::make_unique<Gzip>();
  int ret = inflateInit2(&g->z, 15 + 16);  // 15-bit window, gzip wrapper only
  if (ret == Z_MEM_ERROR) throw std::bad_alloc();
  if (ret != Z_OK) fail(NNRT_ERR_INTERNAL, "zlib inflateInit2 failed (", ret, ")");
  gzip_ = std::move(g);
}

ByteReader::~ByteReader() = default;

size_t ByteReader::inflate_some(unsigned char *dst, size_t n) {
  z_stream &z = gzip_->z;
  size_t produced = 0;
  while (produced < n && !gzip_->finished) {
    if (z.avail_in == 0 && offset_ < size_) {
      size_t chunk = std::min(size_ - offset_, kZlibChunk);
      z.next_in = const_cast<Bytef *>(data_ + offset_);
      z.avail_in = static_cast<uInt>(chunk);
      offset_ += chunk;
    }
    size_t room = std::min(n - produced, kZlibChunk);
    z.next_out = dst + produced;
    z.avail_out = static_cast<uInt>(room);
    int ret = inflate(&z, Z_NO_FLUSH);
    produced += room - z.avail_out;
    if (ret == Z_OK) continue;
    if (ret == Z_STREAM_END) {
      size_t rest = offset_ - z.avail_in;  // where the unread input starts
      if (rest == size_) {
        gzip_->finished = true;
      } else if (is_gzip(data_ + rest, size_ - rest)) {
        inflateReset(&z);  // the next member of a multi-member file; keeps the pending input
      } else {
        fail(NNRT_ERR_CORRUPT, name_, ": ", size_ - rest, " bytes after the end of the gzip data are not gzip data");
      }
      continue;
    }
    if (ret == Z_BUF_ERROR && z.avail_in == 0 && offset_ == size_) {
      fail(NNRT_ERR_CORRUPT, name_, ": the gzip data ends early, after ", size_, " compressed bytes (",
           position_ + produced, " bytes decompressed): a truncated file?");
    }
    if (ret == Z_MEM_ERROR) throw std::bad_alloc();
    fail(NNRT_ERR_CORRUPT, name_, ": damaged gzip data after ", position_ + produced,
         " decompressed bytes: ", z.msg ? z.msg : "zlib error " + std::to_string(ret));
  }
  return produced;
}

uint64_t ByteReader::max_remaining() const {
  if (!gzip_) return size_ - offset_;
  uint64_t compressed_left = (size_ - offset_) + gzip_->z.avail_in;
  return compressed_left * 1032 + (uint64_t{1} << 16);  // + what inflate may hold back
}

size_t ByteReader::read(void *dst, size_t n) {
  size_t got;
  if (gzip_) {
    got = inflate_some(static_cast<unsigned char *>(dst), n);
  } else {
    got = std::min(n, size_ - offset_);
    if (got) std::memcpy(dst, data_ + offset_, got);
    offset_ += got;
  }
  position_ += got;
  return got;
}

uint64_t ByteReader::skip(uint64_t n) {
  if (!gzip_) {
    uint64_t got = std::min<uint64_t>(n, size_ - offset_);
    offset_ += static_cast<size_t>(got);
    position_ += got;
    return got;
  }
  std::vector<unsigned char> scratch(std::min<uint64_t>(n, 1 << 16));
  uint64_t done = 0;
  while (done < n) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(n - done, scratch.size()));
    size_t got = read(scratch.data(), want);
    done += got;
    if (got < want) break;
  }
  return done;
}

std::vector<unsigned char> ByteReader::read_rest() {
  std::vector<unsigned char> out;
  if (!gzip_) {
    out.assign(data_ + offset_, data_ + size_);
    position_ += size_ - offset_;
    offset_ = size_;
    return out;
  }
  // Start near the likely size (text compresses 3 to 10 times), then double as needed.
  size_t used = 0;
  out.resize(std::min<size_t>(std::max<size_t>(size_ * 4, 1 << 16), size_t{64} << 20));
  for (;;) {
    size_t got = read(out.data() + used, out.size() - used);
    used += got;
    if (used < out.size()) break;
    out.resize(out.size() * 2);
  }
  out.resize(used);
  return out;
}

}  // namespace nnrt::data
