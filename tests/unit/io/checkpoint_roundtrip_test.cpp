// Checkpoints written and read back: every dtype, odd shapes, metadata, the safetensors layout.
#include <gtest/gtest.h>

#include "core/json_options.h"
#include "io_test_util.h"

namespace nnrt::io {
namespace {

using test::make_record;
using test::ScratchFolder;

void expect_same(const Checkpoint &read, const Checkpoint &written) {
  ASSERT_EQ(read.tensors.size(), written.tensors.size());
  for (const TensorRecord &w : written.tensors) {
    const TensorRecord *r = read.find(w.name);
    ASSERT_NE(r, nullptr) << w.name;
    EXPECT_EQ(r->dtype, w.dtype) << w.name;
    EXPECT_EQ(r->shape, w.shape) << w.name;
    EXPECT_EQ(std::vector<unsigned char>(r->data(), r->data() + r->size()), w.bytes) << w.name;
  }
  for (const auto &[key, value] : written.metadata) EXPECT_EQ(read.metadata.at(key), value) << key;
}

TEST(CheckpointRoundTrip, EveryDtypeThroughAFile) {
  ScratchFolder folder;
  Checkpoint c;
  const nnrt_dtype dtypes[] = {NNRT_DTYPE_F32, NNRT_DTYPE_F64, NNRT_DTYPE_F16, NNRT_DTYPE_BF16,
                               NNRT_DTYPE_I32, NNRT_DTYPE_I64, NNRT_DTYPE_U8,  NNRT_DTYPE_BOOL};
  uint32_t seed = 0;
  for (nnrt_dtype d : dtypes) {
    c.tensors.push_back(make_record(std::string("t.") + dtype_name(d), d, {3, 5}, ++seed));
    c.tensors.push_back(make_record(std::string("scalar.") + dtype_name(d), d, {}, ++seed));
    c.tensors.push_back(make_record(std::string("empty.") + dtype_name(d), d, {0, 4}, ++seed));
  }
  c.metadata["nnrt.config"] = "{\"input\": [3]}";
  c.metadata["note"] = "ünïcødé, \"quotes\", back\\slash, new\nline, tab\t, nul \x01";
  std::string path = folder.file("every.safetensors");
  write_checkpoint(path, c);
  Checkpoint read = read_checkpoint(path);
  expect_same(read, c);
  EXPECT_EQ(read.metadata.at(kFormatKey), std::to_string(kCheckpointFormat));
  EXPECT_EQ(read.metadata.at(kChecksumKey).substr(0, 6), "crc32:");
  EXPECT_EQ(read.metadata.at(kHeaderChecksumKey).substr(0, 6), "crc32:");
}

TEST(CheckpointRoundTrip, AllRanksUpToTheLimit) {
  Checkpoint c;
  for (int32_t rank = 0; rank <= NNRT_MAX_DIMS; ++rank) {
    Shape s;
    s.rank = rank;
    for (int32_t i = 0; i < rank; ++i) s.dims[i] = 1 + (i % 2);
    c.tensors.push_back(make_record("rank" + std::to_string(rank), NNRT_DTYPE_F32, s, static_cast<uint32_t>(rank)));
  }
  std::vector<unsigned char> bytes = encode_checkpoint(c);
  expect_same(parse_checkpoint(bytes.data(), bytes.size(), "buffer"), c);
}

TEST(CheckpointRoundTrip, NoTensorsAtAll) {
  Checkpoint c;
  c.metadata["nnrt.config"] = "{}";
  std::vector<unsigned char> bytes = encode_checkpoint(c);
  Checkpoint read = parse_checkpoint(bytes.data(), bytes.size(), "buffer");
  EXPECT_TRUE(read.tensors.empty());
  EXPECT_EQ(read.metadata.at("nnrt.config"), "{}");
}

TEST(CheckpointRoundTrip, LayoutIsPlainSafetensors) {
  Checkpoint c = test::sample_checkpoint();
  std::vector<unsigned char> bytes = encode_checkpoint(c);
  uint64_t n = test::header_length(bytes);
  EXPECT_EQ(n % 8, 0u) << "the header is padded to a multiple of 8";
  std::string header(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(n));
  Json j = Json::parse(header);
  ASSERT_TRUE(j.contains("__metadata__"));
  uint64_t data_size = bytes.size() - 8 - n, covered = 0;
  for (const TensorRecord &t : c.tensors) {
    const Json &e = j.at(t.name);
    EXPECT_EQ(e.at("dtype"), safetensors_dtype_name(t.dtype));
    EXPECT_EQ(e.at("shape").get<std::vector<int64_t>>(), t.shape.vec());
    uint64_t begin = e.at("data_offsets")[0], end = e.at("data_offsets")[1];
    EXPECT_EQ(end - begin, t.bytes.size());
    EXPECT_TRUE(std::equal(t.bytes.begin(), t.bytes.end(), bytes.begin() + static_cast<long>(8 + n + begin)));
    covered += end - begin;
  }
  EXPECT_EQ(covered, data_size);
  // nnrt.checksum is a plain crc32 of the data section, checkable by any tool.
  EXPECT_EQ(j["__metadata__"][kChecksumKey], crc32_text(crc32_of(bytes.data() + 8 + n, data_size)));
}

TEST(CheckpointRoundTrip, TensorsComeBackInDataOrder) {
  Checkpoint c;
  for (const char *name : {"zeta", "alpha", "mid"}) c.tensors.push_back(make_record(name, NNRT_DTYPE_U8, {2}, 9));
  std::vector<unsigned char> bytes = encode_checkpoint(c);
  Checkpoint read = parse_checkpoint(bytes.data(), bytes.size(), "buffer");
  ASSERT_EQ(read.tensors.size(), 3u);
  EXPECT_EQ(read.tensors[0].name, "zeta");
  EXPECT_EQ(read.tensors[1].name, "alpha");
  EXPECT_EQ(read.tensors[2].name, "mid");
}

TEST(CheckpointRoundTrip, EmptyTensorsSharingAnOffset) {
  Checkpoint c;
  c.tensors.push_back(make_record("zz", NNRT_DTYPE_F32, {0}, 1));
  c.tensors.push_back(make_record("aa", NNRT_DTYPE_F32, {3, 0}, 2));
  c.tensors.push_back(make_record("mid", NNRT_DTYPE_U8, {2}, 3));
  c.tensors.push_back(make_record("b", NNRT_DTYPE_I64, {0}, 4));
  std::vector<unsigned char> bytes = encode_checkpoint(c);
  Checkpoint read = parse_checkpoint(bytes.data(), bytes.size(), "buffer");
  expect_same(read, c);
  ASSERT_EQ(read.tensors.size(), 4u);
  EXPECT_EQ(read.tensors[0].name, "aa");  // at offset 0, by name
  EXPECT_EQ(read.tensors[1].name, "zz");
  EXPECT_EQ(read.tensors[2].name, "mid");
  EXPECT_EQ(read.tensors[3].name, "b");
}

TEST(CheckpointRoundTrip, OverwritesAnExistingFile) {
  ScratchFolder folder;
  std::string path = folder.file("over.safetensors");
  Checkpoint first = test::sample_checkpoint(), second;
  second.tensors.push_back(make_record("only", NNRT_DTYPE_I32, {7}, 3));
  write_checkpoint(path, first);
  write_checkpoint(path, second);
  expect_same(read_checkpoint(path), second);
  EXPECT_EQ(folder.entries().size(), 1u) << "no temporary file is left behind";
}

TEST(CheckpointWriter, RefusesRecordsThatDoNotAddUp) {
  Checkpoint c;
  c.tensors.push_back(make_record("a", NNRT_DTYPE_F32, {2, 2}, 1));
  c.tensors.back().bytes.pop_back();
  EXPECT_THROW(encode_checkpoint(c), Error);
  c.tensors.back() = make_record("__metadata__", NNRT_DTYPE_F32, {1}, 1);
  EXPECT_THROW(encode_checkpoint(c), Error);
  c.tensors.back() = make_record("a", NNRT_DTYPE_F32, {1}, 1);
  c.tensors.push_back(make_record("a", NNRT_DTYPE_F32, {1}, 1));
  EXPECT_THROW(encode_checkpoint(c), Error);
}

}  // namespace
}  // namespace nnrt::io
