// Damaged, foreign and hostile files: every one must end in NNRT_ERR_CORRUPT (NNRT_ERR_VERSION for
// a newer format, NNRT_ERR_IO when the file cannot be read), with a message saying what is wrong,
// and never in a crash.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <fstream>

#include "io_test_util.h"

namespace nnrt::io {
namespace {

using test::parse_status;
using test::ScratchFolder;

// A file from a header text (padded as the writer pads) and a data section.
std::vector<unsigned char> raw_file(std::string header, const std::string &data = "") {
  while (header.size() % 8) header += ' ';
  std::vector<unsigned char> out(8);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>((header.size() >> (8 * i)) & 0xff);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

const char *kNnrtMeta = R"("__metadata__":{"nnrt.format":"1"})";

std::string message_of(const std::vector<unsigned char> &bytes, nnrt_status expected = NNRT_ERR_CORRUPT) {
  std::string message;
  EXPECT_EQ(parse_status(bytes, &message), expected) << message;
  return message;
}

#define EXPECT_CORRUPT(bytes, text) EXPECT_NE(message_of(bytes).find(text), std::string::npos) << message_of(bytes)

// Where the format version's digit is in an encoded file (the one byte whose flips may read as
// a newer format).
size_t format_digit_position(const std::vector<unsigned char> &bytes) {
  std::string s(bytes.begin(), bytes.end());
  size_t p = s.find("\"nnrt.format\":\"1\"");
  EXPECT_NE(p, std::string::npos);
  return p + std::string("\"nnrt.format\":\"").size();
}

TEST(CheckpointCorruption, TruncatedAtEveryByte) {
  std::vector<unsigned char> bytes = encode_checkpoint(test::sample_checkpoint());
  ASSERT_EQ(parse_status(bytes), NNRT_OK);
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + static_cast<long>(size));
    ASSERT_EQ(parse_status(cut), NNRT_ERR_CORRUPT) << "truncated to " << size << " of " << bytes.size() << " bytes";
  }
}

TEST(CheckpointCorruption, EveryBitFlipIsCaught) {
  std::vector<unsigned char> bytes = encode_checkpoint(test::sample_checkpoint());
  size_t digit = format_digit_position(bytes);
  int versions = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<unsigned char> flipped = bytes;
      flipped[i] ^= static_cast<unsigned char>(1u << bit);
      std::string message;
      nnrt_status s = parse_status(flipped, &message);
      if (s == NNRT_ERR_VERSION && i == digit) {
        ++versions;
        continue;
      }
      ASSERT_EQ(s, NNRT_ERR_CORRUPT) << "byte " << i << " bit " << bit << ": " << message;
    }
  }
  EXPECT_GT(versions, 0) << "'1' -> '3', '5', '9' read as newer formats";
}

TEST(CheckpointCorruption, DataFlipsInALargerFile) {
  Checkpoint c = test::sample_checkpoint();
  c.tensors.push_back(test::make_record("big", NNRT_DTYPE_F32, {256, 256}, 11));
  std::vector<unsigned char> bytes = encode_checkpoint(c);
  uint64_t data_start = 8 + test::header_length(bytes);
  std::mt19937_64 rng(5);
  for (int k = 0; k < 3000; ++k) {
    size_t i = data_start + rng() % (bytes.size() - data_start);
    std::vector<unsigned char> flipped = bytes;
    flipped[i] ^= static_cast<unsigned char>(1u << (rng() % 8));
    ASSERT_EQ(parse_status(flipped), NNRT_ERR_CORRUPT) << "data byte " << i;
  }
  for (int k = 0; k < 300; ++k) {
    size_t size = data_start + rng() % (bytes.size() - data_start);
    std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + static_cast<long>(size));
    ASSERT_EQ(parse_status(cut), NNRT_ERR_CORRUPT) << "truncated to " << size;
  }
  EXPECT_CORRUPT(std::vector<unsigned char>(bytes.begin(), bytes.end() - 1), "truncated");
}

TEST(CheckpointCorruption, EmptyAndForeignFiles) {
  EXPECT_CORRUPT(std::vector<unsigned char>{}, "too short");
  const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D',
                               'R',  0,   0,   0,   1,    0,    0,    0,    1, 8, 6, 0,  0,   0};
  EXPECT_CORRUPT(std::vector<unsigned char>(png, png + sizeof png), "not a safetensors file");
  std::string text = "just some text that is not a checkpoint at all\n";
  EXPECT_CORRUPT(std::vector<unsigned char>(text.begin(), text.end()), "not a safetensors file");
  // A valid safetensors file that another program wrote.
  std::string f32x2(8, '\0');
  EXPECT_CORRUPT(raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", f32x2),
                 "not an nnrt checkpoint");
  EXPECT_CORRUPT(
      raw_file(R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", f32x2),
      "not an nnrt checkpoint");
  EXPECT_CORRUPT(raw_file("{}"), "not an nnrt checkpoint");
}

TEST(CheckpointCorruption, NewerFormatIsAVersionError) {
  std::vector<unsigned char> bytes = encode_checkpoint(test::sample_checkpoint());
  bytes[format_digit_position(bytes)] = '2';
  std::string message = message_of(bytes, NNRT_ERR_VERSION);
  EXPECT_NE(message.find("format 2"), std::string::npos) << message;
  EXPECT_NE(message.find("format 1"), std::string::npos) << message;
  for (const char *bad : {"0", "x", "", "1.0", "-1", "99999999999"}) {
    EXPECT_CORRUPT(raw_file(std::string(R"({"__metadata__":{"nnrt.format":")") + bad + "\"}}"), "nnrt.format");
  }
}

TEST(CheckpointCorruption, HeaderLengthOutOfRange) {
  std::vector<unsigned char> bytes = encode_checkpoint(test::sample_checkpoint());
  std::vector<unsigned char> huge = bytes;
  for (int i = 0; i < 8; ++i) huge[i] = 0xff;
  EXPECT_CORRUPT(huge, "header length");
  std::vector<unsigned char> zero = bytes;
  for (int i = 0; i < 8; ++i) zero[i] = 0;
  EXPECT_CORRUPT(zero, "not valid JSON");
  // Over the 100 MB limit even when the file were that long.
  std::vector<unsigned char> over = raw_file("{}");
  uint64_t n = kMaxHeaderBytes + 8;
  for (int i = 0; i < 8; ++i) over[i] = static_cast<unsigned char>((n >> (8 * i)) & 0xff);
  EXPECT_CORRUPT(over, "the limit");
}

TEST(CheckpointCorruption, MalformedHeaders) {
  std::string meta = kNnrtMeta;
  std::string d8(8, '\0');
  EXPECT_CORRUPT(raw_file("[1, 2]"), "expected a JSON object");
  EXPECT_CORRUPT(raw_file("{\"a\": "), "not valid JSON");
  EXPECT_CORRUPT(raw_file("{\"bad\xff\": 1}"), "not valid JSON");
  EXPECT_CORRUPT(raw_file(std::string("{}\0", 3)), "NUL byte");
  EXPECT_CORRUPT(raw_file("{\"__metadata__\":{\"nnrt.format\":\"1\"},\"a\":{\"dtype\":\"U8\",\"shape\":[1e999]}}"),
                 "not valid JSON");
  EXPECT_CORRUPT(raw_file(R"({"__metadata__":{"nnrt.format":1}})"), "expected a string");
  EXPECT_CORRUPT(raw_file(R"({"__metadata__":[]})"), "expected an object of strings");
  EXPECT_CORRUPT(raw_file(R"({"__metadata__":{"nnrt.format":"1","nnrt.format":"1"}})"), "twice");
  EXPECT_CORRUPT(
      raw_file(
          "{" + meta +
              R"(,"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
          d8),
      "twice");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})", d8),
                 "twice");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":[1]})"), "expected an object");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"F32","shape":[2]}})", d8), "\"data_offsets\" is missing");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", d8),
                 "unknown key");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}})", d8), ".dtype");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":32,"shape":[2],"data_offsets":[0,8]}})", d8), ".dtype");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", d8),
                 "non-negative");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", d8),
                 "non-negative");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", d8), ".shape");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}})", "x"),
                 "at most 8 dims");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", d8), "[begin, end]");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", d8),
                 "before begin");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", d8),
                 "needs 12 bytes");
  // Element counts that overflow 64 bits must not wrap around to a size that fits, and an empty
  // tensor must not hide dims whose product overflows.
  auto tensor = [&](const std::string &dtype, const std::string &shape) {
    return raw_file("{" + meta + R"(,"w":{"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":[0,0]}})");
  };
  EXPECT_CORRUPT(tensor("F32", "[4294967296,4294967296,1]"), "too many elements");
  EXPECT_CORRUPT(tensor("U8", "[18446744073709551615]"), "too many elements");
  EXPECT_CORRUPT(tensor("U8", "[0,4611686018427387904,4]"), "too many elements");
  EXPECT_CORRUPT(tensor("F64", "[2305843009213693952]"), "more bytes than a file can hold");
  EXPECT_EQ(parse_status(tensor("U8", "[0,4611686018427387904]")), NNRT_ERR_CORRUPT) << "(the checksums are missing)";
  std::string m;
  parse_status(tensor("U8", "[0,4611686018427387904]"), &m);
  EXPECT_NE(m.find("nnrt.header_checksum"), std::string::npos) << "an empty tensor with huge dims is well-formed: " << m;
}

TEST(CheckpointCorruption, OffsetsMustTileTheDataSection) {
  std::string meta = kNnrtMeta;
  std::string a = R"("a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]})";
  EXPECT_CORRUPT(raw_file("{" + meta + "," + a + R"(,"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})", "123456"),
                 "overlap");
  EXPECT_CORRUPT(
      raw_file("{" + meta + "," + a + R"(,"b":{"dtype":"U8","shape":[4],"data_offsets":[6,10]}})", "1234567890"),
      "a gap");
  EXPECT_CORRUPT(raw_file("{" + meta + "," + a + "}", "1234extra"), "extra bytes");
  EXPECT_CORRUPT(raw_file("{" + meta + "," + a + "}", "12"), "truncated");
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})", "12345678"),
                 "a gap");
}

TEST(CheckpointCorruption, ChecksumsAreRequiredAndChecked) {
  std::string meta = kNnrtMeta;
  EXPECT_CORRUPT(raw_file("{" + meta + R"(,"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", "1234"),
                 "nnrt.header_checksum");
  std::vector<unsigned char> bytes = encode_checkpoint(test::sample_checkpoint());
  bytes.back() ^= 1;
  EXPECT_CORRUPT(bytes, "data section fails its checksum");
  Checkpoint c = test::sample_checkpoint();
  std::vector<unsigned char> good = encode_checkpoint(c);
  std::string s(good.begin(), good.end());
  size_t p = s.find("layer0.bias");
  ASSERT_NE(p, std::string::npos);
  good[p] = 'L';  // a renamed tensor: well-formed, but not what was written
  EXPECT_CORRUPT(good, "header fails its checksum");
}

TEST(CheckpointCorruption, DeepNestingIsRefusedWithoutRecursion) {
  std::string deep =
      "{\"__metadata__\":{\"nnrt.format\":\"1\"},\"x\":" + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_CORRUPT(raw_file(deep), "nested deeper");
  std::string deep_object = "{\"__metadata__\":{\"nnrt.format\":\"1\"},\"x\":{\"y\":{\"z\":{}}}}";
  EXPECT_CORRUPT(raw_file(deep_object), "nested deeper");
}

TEST(CheckpointFiles, MissingFileIsAnIoError) {
  ScratchFolder folder;
  std::string path = folder.file("absent.safetensors");
  try {
    read_checkpoint(path);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), NNRT_ERR_IO);
    std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("No such file"), std::string::npos) << m;
  }
  try {
    read_checkpoint(folder.path());
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), NNRT_ERR_IO) << e.what();
  }
}

TEST(CheckpointFiles, EmptyFileIsCorrupt) {
  ScratchFolder folder;
  std::string path = folder.file("empty.safetensors");
  std::ofstream(path).close();
  try {
    read_checkpoint(path);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), NNRT_ERR_CORRUPT);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nnrt::io
