// Whole files mapped or read, and checkpoints read from either: the same bytes, views that keep
// their source alive, and the refusals.
#include "io/file_bytes.h"

#include <gtest/gtest.h>

#include <fstream>

#include "io_test_util.h"

namespace nnrt::io {
namespace {

using test::ScratchFolder;

void write_bytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string as_string(const FileBytes &f) { return std::string(reinterpret_cast<const char *>(f.data), f.size); }

TEST(FileBytes, MapsOrReadsTheSameBytes) {
  ScratchFolder dir;
  std::string path = dir.file("data"), text(200000, '\0');
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i * 31 % 251);
  write_bytes(path, text);
  FileBytes mapped = file_bytes(path, true), read = file_bytes(path, false);
  EXPECT_TRUE(mapped.mapped);
  EXPECT_FALSE(read.mapped);
  EXPECT_EQ(as_string(mapped), text);
  EXPECT_EQ(as_string(read), text);
  // Mapped again while the first mapping lives: the same one.
  EXPECT_EQ(file_bytes(path, true).data, mapped.data);
}

TEST(FileBytes, AnEmptyFileIsReadNotMapped) {
  ScratchFolder dir;
  std::string path = dir.file("empty");
  write_bytes(path, "");
  FileBytes f = file_bytes(path, true);
  EXPECT_FALSE(f.mapped);
  EXPECT_EQ(f.size, 0u);
}

TEST(FileBytes, AMappingOutlivesTheFileAndItsReplacement) {
  ScratchFolder dir;
  std::string path = dir.file("data"), other = dir.file("other");
  write_bytes(path, "the first file's bytes");
  write_bytes(other, "a replacement");
  FileBytes f = file_bytes(path, true);
  ASSERT_EQ(rename(other.c_str(), path.c_str()), 0);  // as an atomic save replaces a file
  EXPECT_EQ(as_string(f), "the first file's bytes");
  ASSERT_EQ(unlink(path.c_str()), 0);
  EXPECT_EQ(as_string(f), "the first file's bytes");
}

TEST(FileBytes, RefusesWhatIsNotARegularFile) {
  ScratchFolder dir;
  for (bool map : {true, false}) {
    for (const std::string &path : {dir.path(), std::string("/dev/zero"), dir.file("missing")}) {
      try {
        file_bytes(path, map);
        ADD_FAILURE() << path << " was read";
      } catch (const Error &e) {
        EXPECT_EQ(e.status(), NNRT_ERR_IO) << path;
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      }
    }
  }
}

// A checkpoint read from its mapping gives views that keep the mapping alive after the Checkpoint
// itself is gone (and so do those of a file read); one parsed from a buffer without an owner gives
// copies.
TEST(FileBytes, CheckpointRecordsAreViewsOfTheFile) {
  ScratchFolder dir;
  std::string path = dir.file("c.safetensors");
  Checkpoint written = test::sample_checkpoint();
  write_checkpoint(path, written);
  for (bool map : {true, false}) {
    TensorRecord kept;
    {
      Checkpoint c = read_checkpoint(path, map);
      ASSERT_EQ(c.tensors.size(), written.tensors.size());
      kept = *c.find("layer2.weight");
      EXPECT_EQ(c.mapped, map);
      EXPECT_TRUE(kept.source != nullptr && kept.bytes.empty());
    }
    const TensorRecord &w = *written.find("layer2.weight");
    ASSERT_EQ(kept.size(), w.size());
    EXPECT_EQ(std::memcmp(kept.data(), w.data(), w.size()), 0);
  }
  std::vector<unsigned char> bytes = encode_checkpoint(written);
  Checkpoint copied = parse_checkpoint(bytes.data(), bytes.size(), "test");
  EXPECT_TRUE(copied.tensors[0].source == nullptr && copied.tensors[0].size() > 0);
}

}  // namespace
}  // namespace nnrt::io
