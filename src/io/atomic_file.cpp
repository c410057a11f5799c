#include "io/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "core/error.h"
#include "core/log.h"

namespace nnrt::io {

namespace {

struct PathParts {
  std::string folder;  // "." for a bare name
  std::string name;
};

PathParts split_path(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
  return buf;
}

[[noreturn]] void io_error(const std::string &path, const std::string &step, int err) {
  fail(NNRT_ERR_IO, "cannot write '", path, "': ", step, ": ", std::strerror(err));
}

// True unless the process is known to be gone (it may be a zombie or another user's: leave it).
bool process_may_run(long pid) { return pid <= 0 || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH; }

// Removes temporary files of earlier saves to the same target whose writer (on this host) died.
// A live writer's file is never touched; failures here only cost disk space, so they are logged.
void remove_stale_temp_files(const PathParts &parts, const std::string &host) {
  std::string prefix = "." + parts.name + ".tmp." + host + ".";
  DIR *dir = opendir(parts.folder.c_str());
  if (!dir) return;
  while (dirent *entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string rest = name.substr(prefix.size());  // "<pid>.<random>"
    size_t dot = rest.find('.');
    if (dot == std::string::npos || dot == 0) continue;
    char *end = nullptr;
    long pid = std::strtol(rest.c_str(), &end, 10);
    if (end != rest.c_str() + dot || pid == static_cast<long>(getpid()) || process_may_run(pid)) continue;
    if (unlinkat(dirfd(dir), name.c_str(), 0) != 0) {
      log::debug(cat("could not remove the leftover '", parts.folder, "/", name, "': ", std::strerror(errno)));
    }
  }
  closedir(dir);
}

// Creates the temporary file with O_EXCL (never follows or reuses an existing name).
int create_temp_file(const std::string &path, const PathParts &parts, const std::string &host, std::string *temp) {
  std::random_device entropy;
  std::mt19937_64 rng((static_cast<uint64_t>(entropy()) << 32) ^ entropy());
  for (int attempt = 0;; ++attempt) {
    *temp = cat(parts.folder, "/.", parts.name, ".tmp.", host, ".", getpid(), ".", std::hex, rng());
    int fd = open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST || attempt == 100) io_error(path, cat("creating the temporary file '", *temp, "'"), errno);
  }
}

void write_all(int fd, const void *data, size_t size, const std::string &path, const std::string &temp) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) io_error(path, cat("writing '", temp, "'"), errno);
    p += n;
    size -= static_cast<size_t>(n);
  }
}

// Flushes the folder so that the rename is on disk. File systems that cannot fsync a folder say
// EINVAL; there is nothing more to do on them.
void sync_folder(const std::string &path, const std::string &folder) {
  int fd = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) io_error(path, cat("opening the folder '", folder, "' to flush it (the file was replaced)"), errno);
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  if (rc != 0 && err != EINVAL) io_error(path, cat("flushing the folder '", folder, "' (the file was replaced)"), err);
}

}  // namespace

std::string temp_file_prefix(const std::string &path) {
  PathParts parts = split_path(path);
  return parts.folder + "/." + parts.name + ".tmp.";
}

void write_file_atomically(const std::string &path, const std::vector<ByteRange> &parts) {
  PathParts where = split_path(path);
  if (where.name.empty() || where.name == "." || where.name == "..") {
    fail(NNRT_ERR_IO, "cannot write '", path, "': expected a file path, got a folder");
  }
  std::string host = host_name();
  remove_stale_temp_files(where, host);

  std::string temp;
  int fd = create_temp_file(path, where, host, &temp);
  try {
    for (const ByteRange &part : parts) write_all(fd, part.data, part.size, path, temp);
    if (fsync(fd) != 0) io_error(path, cat("flushing '", temp, "' to disk"), errno);
    int rc = close(fd);
    fd = -1;
    if (rc != 0) io_error(path, cat("closing '", temp, "'"), errno);
    if (rename(temp.c_str(), path.c_str()) != 0) io_error(path, cat("renaming '", temp, "' over it"), errno);
  } catch (...) {
    if (fd >= 0) close(fd);
    unlink(temp.c_str());
    throw;
  }
  sync_folder(path, where.folder);
}

}  // namespace nnrt::io
