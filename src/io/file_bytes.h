// The bytes of a whole file, mapped into memory or read into it.
//
// A mapping costs no copy and no memory of its own: its pages are the page cache's, shared by every
// process and every model that maps the file, and read from disk only when first touched. Within a
// process, a file mapped again while a mapping of it lives gets that mapping. nnrt maps files
// MAP_PRIVATE and writable, so that a stray write (there should be none: Model::lock_for_writing
// copies parameters out first) changes this process's copy of one page, seen by every model here
// that shares the mapping, and never the file. What a mapping cannot survive is another
// program truncating the file while it is mapped: touching a page past the new end raises SIGBUS.
// nnrt's own saves replace a file by renaming a new one over it, which leaves the mapped (old) file
// intact; a program that rewrites files in place should set the context option "map_checkpoints" to
// false.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace nnrt::io {

struct FileBytes {
  std::shared_ptr<const void> owner;  // keeps `data` valid: the mapping or the buffer read
  const unsigned char *data = nullptr;
  size_t size = 0;
  bool mapped = false;
};

// The bytes of the regular file at `path`: mapped when `map` is true and the system maps it (an empty
// file, or a file system that cannot map, is read instead), else read in 64 KB reads, each preceded by
// check_run() (a call with run options stops within 64 KB). Throws NNRT_ERR_IO when the file cannot be
// opened or read, or is not a regular file (a directory, a FIFO, a device), naming the path and the
// reason.
FileBytes file_bytes(const std::string &path, bool map);

}  // namespace nnrt::io
