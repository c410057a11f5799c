// Replacing a file so that anyone who opens it sees either the old contents or the new, never a
// mix, even if the process is killed or the machine loses power mid-write.
//
// The new contents go to a temporary file in the same folder (same file system, so rename is
// atomic), named ".<name>.tmp.<host>.<pid>.<random>"; it is flushed to disk, renamed over the
// target, and the folder is flushed so that the rename itself survives a crash. A save that is
// killed leaves its temporary file behind; the next save to the same path removes such leftovers
// when the process that wrote them (same host) no longer runs. Readers never look at them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace nnrt::io {

struct ByteRange {
  const void *data;
  size_t size;
};

// Writes the concatenation of `parts` to `path` atomically. The new file's mode is 0666 less the
// umask. Throws NNRT_ERR_IO naming the path, the step that failed and the system's reason; on
// failure the temporary file is removed and the previous file at `path` is untouched.
void write_file_atomically(const std::string &path, const std::vector<ByteRange> &parts);

// ".<name>.tmp." in the folder of `path`: what every temporary file of a save to `path` starts
// with (for tests that look for leftovers).
std::string temp_file_prefix(const std::string &path);

}  // namespace nnrt::io
