// Atomic replacement: failures leave the old file and no temporary behind; leftovers of killed
// saves are cleaned by the next save.
#include "io/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>

#include "io_test_util.h"

namespace nnrt::io {
namespace {

using test::ScratchFolder;

std::string contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string &path, const std::string &text) {
  write_file_atomically(path, {{text.data(), text.size()}});
}

nnrt_status status_of_write(const std::string &path, const std::string &text, std::string *message = nullptr) {
  try {
    write_text(path, text);
    return NNRT_OK;
  } catch (const Error &e) {
    if (message) *message = e.what();
    return e.status();
  }
}

std::string host() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

TEST(AtomicFile, WritesAndReplaces) {
  ScratchFolder folder;
  std::string path = folder.file("f.bin");
  write_text(path, "first");
  EXPECT_EQ(contents(path), "first");
  write_text(path, "second, longer");
  EXPECT_EQ(contents(path), "second, longer");
  EXPECT_EQ(folder.entries(), std::vector<std::string>{"f.bin"});
}

TEST(AtomicFile, ModeFollowsTheUmask) {
  ScratchFolder folder;
  mode_t old = umask(022);
  write_text(folder.file("m.bin"), "x");
  umask(077);
  write_text(folder.file("p.bin"), "x");
  umask(old);
  struct stat st {};
  ASSERT_EQ(stat(folder.file("m.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ASSERT_EQ(stat(folder.file("p.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(AtomicFile, BadPathsAreIoErrors) {
  ScratchFolder folder;
  std::string message;
  EXPECT_EQ(status_of_write(folder.file("no/such/folder/f.bin"), "x", &message), NNRT_ERR_IO);
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  EXPECT_NE(message.find("no/such/folder/f.bin"), std::string::npos) << message;
  EXPECT_EQ(status_of_write(folder.path() + "/", "x", &message), NNRT_ERR_IO);
  EXPECT_EQ(status_of_write(folder.path(), "x", &message), NNRT_ERR_IO) << "a folder cannot be replaced by a file";
  EXPECT_EQ(folder.entries().size(), 0u) << "no temporary file is left behind";
}

// A write that fails half-way (here: the file size limit, which stops root as well as anyone)
// leaves the previous file as it was and removes the temporary file.
TEST(AtomicFile, FailedWriteKeepsTheOldFile) {
  ScratchFolder folder;
  std::string path = folder.file("keep.bin");
  write_text(path, "the old contents");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    std::string message;
    nnrt_status s = status_of_write(path, std::string(1 << 20, 'n'), &message);
    bool ok = s == NNRT_ERR_IO && message.find(path) != std::string::npos &&
              message.find("File too large") != std::string::npos;
    if (!ok) fprintf(stderr, "status %d, message: %s\n", s, message.c_str());
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(contents(path), "the old contents");
  EXPECT_EQ(folder.entries(), std::vector<std::string>{"keep.bin"});
}

TEST(AtomicFile, UnwritableFolderKeepsTheOldFile) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders; FailedWriteKeepsTheOldFile covers this";
  ScratchFolder folder;
  std::string path = folder.file("ro.bin");
  write_text(path, "old");
  chmod(folder.path().c_str(), 0555);
  std::string message;
  EXPECT_EQ(status_of_write(path, "new", &message), NNRT_ERR_IO);
  EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
  chmod(folder.path().c_str(), 0755);
  EXPECT_EQ(contents(path), "old");
}

TEST(AtomicFile, NextSaveRemovesLeftoversOfDeadWriters) {
  ScratchFolder folder;
  std::string path = folder.file("ckpt.safetensors");
  // A process that has exited: its pid no longer runs.
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  std::string prefix = ".ckpt.safetensors.tmp.";
  std::string stale = prefix + host() + "." + std::to_string(dead) + ".abc123";
  std::string live = prefix + host() + "." + std::to_string(getppid()) + ".def456";    // still running
  std::string other_host = prefix + "elsewhere." + std::to_string(dead) + ".0";        // not ours to judge
  std::string unrelated = ".other.tmp." + host() + "." + std::to_string(dead) + ".0";  // another target's
  for (const std::string &name : {stale, live, other_host, unrelated}) std::ofstream(folder.file(name)) << "partial";
  EXPECT_EQ(temp_file_prefix(path), folder.path() + "/" + prefix);
  write_text(path, "complete");
  std::vector<std::string> left = folder.entries();
  std::sort(left.begin(), left.end());
  std::vector<std::string> expected = {live, other_host, unrelated, "ckpt.safetensors"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(left, expected);
}

TEST(AtomicFile, ReadersNeverSeeLeftovers) {
  ScratchFolder folder;
  std::string path = folder.file("c.safetensors");
  write_checkpoint(path, test::sample_checkpoint());
  std::ofstream(temp_file_prefix(path) + host() + ".1.0") << "garbage from a killed save";
  EXPECT_EQ(read_checkpoint(path).tensors.size(), test::sample_checkpoint().tensors.size());
}

}  // namespace
}  // namespace nnrt::io
