// Whole files, mapped or read (file_bytes.h).
#include "io/file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/run_control.h"

namespace nnrt::io {

namespace {

// Closes a file descriptor on every way out, a stopped call's exception included.
struct FileCloser {
  int fd;
  ~FileCloser() { close(fd); }
};

// The mappings alive in this process, by file identity: a file mapped again while a mapping of it
// lives (eight models loaded from one checkpoint) gets the same one, so that resident memory counts
// its pages once. The identity includes the size and modification time: a file replaced by a rename
// is another inode, and one rewritten in place (which a mapping cannot survive anyway) another time.
using FileKey = std::tuple<dev_t, ino_t, off_t, time_t, long>;
struct MappingTable {
  std::mutex mutex;
  std::map<FileKey, std::weak_ptr<const void>> entries;
};
// Never destroyed: a model released after static destruction began still unmaps through it.
MappingTable &mapping_table() {
  static auto *table = new MappingTable;
  return *table;
}

std::shared_ptr<const void> map_file(int fd, const struct stat &st) {
  FileKey key{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  MappingTable &table = mapping_table();
  {
    std::lock_guard<std::mutex> lock(table.mutex);
    auto it = table.entries.find(key);
    if (it != table.entries.end()) {
      if (std::shared_ptr<const void> alive = it->second.lock()) return alive;
    }
  }
  size_t size = static_cast<size_t>(st.st_size);
  void *address = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (address == MAP_FAILED) return nullptr;
  // The deleter takes the entry out of the table; it also runs when making the shared_ptr fails.
  // Neither it nor the destruction of a mapping may happen with the table's mutex held, so
  // `mapping` is made before the lock below and destroyed after it.
  std::shared_ptr<const void> mapping(address, [size, key, &table](const void *a) {
    munmap(const_cast<void *>(a), size);
    std::lock_guard<std::mutex> lock(table.mutex);
    auto it = table.entries.find(key);
    if (it != table.entries.end() && it->second.expired()) table.entries.erase(it);
  });
  std::shared_ptr<const void> existing;
  {
    std::lock_guard<std::mutex> lock(table.mutex);
    std::weak_ptr<const void> &entry = table.entries[key];
    existing = entry.lock();  // another thread mapped the file meanwhile: use its mapping
    if (!existing) entry = mapping;
  }
  return existing ? existing : mapping;
}

FileBytes read_all(int fd, const std::string &path, size_t size_hint) {
  auto bytes = std::make_shared<std::vector<unsigned char>>();
  bytes->reserve(size_hint);
  unsigned char chunk[1 << 16];
  while (true) {
    check_run();
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(NNRT_ERR_IO, "cannot read '", path, "': ", std::strerror(errno));
    if (n == 0) break;
    bytes->insert(bytes->end(), chunk, chunk + n);
  }
  FileBytes out;
  out.data = bytes->data();
  out.size = bytes->size();
  out.owner = std::move(bytes);
  return out;
}

}  // namespace

FileBytes file_bytes(const std::string &path, bool map) {
  // O_NONBLOCK so that opening a FIFO does not wait for a writer; it is refused just below.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(NNRT_ERR_IO, "cannot open '", path, "': ", std::strerror(errno));
  FileCloser closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0) fail(NNRT_ERR_IO, "cannot read '", path, "': ", std::strerror(errno));
  // A device (/dev/zero), a FIFO or a directory would be read without end or not at all.
  if (!S_ISREG(st.st_mode)) {
    fail(NNRT_ERR_IO, "cannot read '", path, "': not a regular file (",
         S_ISDIR(st.st_mode)                             ? "a directory"
         : S_ISFIFO(st.st_mode)                          ? "a FIFO"
         : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                         : "a socket or other special file",
         ")");
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  size_t size = static_cast<size_t>(st.st_size);
  if (map && size > 0) {
    if (std::shared_ptr<const void> mapping = map_file(fd, st)) {
      FileBytes out;
      out.data = static_cast<const unsigned char *>(mapping.get());
      out.size = size;
      out.mapped = true;
      out.owner = std::move(mapping);
      return out;
    }
  }
  return read_all(fd, path, size);
}

}  // namespace nnrt::io
