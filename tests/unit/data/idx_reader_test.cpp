#include "data/idx_reader.h"

#include <cmath>

#include "data/byte_reader.h"
#include "data_test_util.h"

namespace nnrt::data {
namespace {

using test::Bytes;
using test::failure_of;

IdxArray parse(const Bytes &b, int64_t limit = 0) { return parse_idx(b.data(), b.size(), "t.idx", limit); }

// Three 2x2 images: pixel values 0..11.
Bytes three_images() {
  Bytes px;
  for (int i = 0; i < 12; ++i) px.push_back(static_cast<unsigned char>(i * 20));
  return test::idx_u8({3, 2, 2}, px);
}

TEST(IdxReader, ReadsPlainAndGzipAlike) {
  for (bool compressed : {false, true}) {
    Bytes file = compressed ? test::gzip(three_images()) : three_images();
    IdxArray a = parse(file);
    EXPECT_EQ(a.type, FeatureType::U8);
    EXPECT_EQ(a.dims, (std::vector<int64_t>{3, 2, 2}));
    EXPECT_EQ(a.kept, 3);
    ASSERT_EQ(a.data.size(), 12u);
    for (int i = 0; i < 12; ++i) EXPECT_EQ(a.data[i], i * 20);
  }
}

TEST(IdxReader, ConvertsEveryElementTypeFromBigEndian) {
  IdxArray i8 = parse(test::idx_file(0x09, {2}, {0xFF, 0x05}));
  EXPECT_EQ(i8.type, FeatureType::I8);
  EXPECT_EQ(static_cast<int8_t>(i8.data[0]), -1);

  IdxArray i16 = parse(test::idx_file(0x0B, {2}, test::big_endian<int16_t>({-2, 300})));
  EXPECT_EQ(i16.type, FeatureType::I16);
  int16_t v16[2];
  std::memcpy(v16, i16.data.data(), 4);
  EXPECT_EQ(v16[0], -2);
  EXPECT_EQ(v16[1], 300);

  IdxArray i32 = parse(test::idx_file(0x0C, {1, 1}, test::big_endian<int32_t>({-70000})));
  int32_t v32;
  std::memcpy(&v32, i32.data.data(), 4);
  EXPECT_EQ(v32, -70000);

  IdxArray f32 = parse(test::idx_file(0x0D, {2}, test::big_endian<float>({1.5f, -0.25f})));
  float vf[2];
  std::memcpy(vf, f32.data.data(), 8);
  EXPECT_EQ(vf[0], 1.5f);
  EXPECT_EQ(vf[1], -0.25f);

  IdxArray f64 = parse(test::idx_file(0x0E, {1}, test::big_endian<double>({1e-300})));
  double vd;
  std::memcpy(&vd, f64.data.data(), 8);
  EXPECT_EQ(vd, 1e-300);
}

TEST(IdxReader, LimitKeepsTheFirstExamplesButChecksTheWholeFile) {
  IdxArray a = parse(three_images(), 2);
  EXPECT_EQ(a.kept, 2);
  EXPECT_EQ(a.dims[0], 3);
  EXPECT_EQ(a.data.size(), 8u);
  EXPECT_EQ(parse(three_images(), 100).kept, 3);

  Bytes cut = three_images();
  cut.pop_back();
  auto f = failure_of([&] { parse(cut, 1); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT) << f.message;
}

TEST(IdxReader, EveryTruncationIsCorruptNeverACrash) {
  Bytes whole = three_images();  // 16 header bytes + 12 data bytes
  for (size_t len = 0; len < whole.size(); ++len) {
    Bytes cut(whole.begin(), whole.begin() + static_cast<long>(len));
    auto f = failure_of([&] { parse(cut); });
    EXPECT_EQ(f.status, NNRT_ERR_CORRUPT) << "length " << len << ": " << f.message;
    EXPECT_TRUE(f.has("t.idx")) << f.message;
    // The same cut, compressed: the gzip data is fine, the IDX inside it is short.
    auto g = failure_of([&] { parse(test::gzip(cut)); });
    EXPECT_EQ(g.status, NNRT_ERR_CORRUPT) << "length " << len << " (gzip): " << g.message;
  }
  auto f = failure_of([&] { parse(Bytes(whole.begin(), whole.end() - 5)); });
  EXPECT_TRUE(f.has("need 28 bytes (16 header + 12 data), found 23")) << f.message;
  auto h = failure_of([&] { parse(Bytes(whole.begin(), whole.begin() + 9)); });
  EXPECT_TRUE(h.has("3 dims need 16 header bytes, found 9")) << h.message;
}

TEST(IdxReader, EveryTruncationOfTheGzipStreamIsCorrupt) {
  Bytes packed = test::gzip(three_images());
  for (size_t len = 2; len < packed.size(); ++len) {  // from 2: shorter is not gzip, and not IDX either
    Bytes cut(packed.begin(), packed.begin() + static_cast<long>(len));
    auto f = failure_of([&] { parse(cut); });
    EXPECT_EQ(f.status, NNRT_ERR_CORRUPT) << "length " << len << ": " << f.message;
  }
}

TEST(IdxReader, DamagedOrPaddedGzipIsCorrupt) {
  Bytes packed = test::gzip(three_images());
  Bytes damaged = packed;
  damaged[damaged.size() - 6] ^= 0x55;  // inside the CRC-32 of the trailer
  EXPECT_EQ(failure_of([&] { parse(damaged); }).status, NNRT_ERR_CORRUPT);
  Bytes padded = packed;
  padded.push_back(0);
  auto f = failure_of([&] { parse(padded); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT) << f.message;
  EXPECT_TRUE(f.has("after the end of the gzip data")) << f.message;
}

TEST(IdxReader, ReadsMultiMemberGzip) {
  Bytes whole = three_images();
  Bytes a = test::gzip(Bytes(whole.begin(), whole.begin() + 10));
  Bytes b = test::gzip(Bytes(whole.begin() + 10, whole.end()));
  a.insert(a.end(), b.begin(), b.end());
  EXPECT_EQ(parse(a).data, parse(whole).data);
}

TEST(IdxReader, RefusesBadMagicNumbers) {
  auto f = failure_of([] { parse(Bytes{'P', 'K', 3, 4, 0, 0, 0, 1, 9}); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("not an IDX file")) << f.message;
  EXPECT_TRUE(f.has("0x504B0304")) << f.message;

  f = failure_of([] { parse(test::idx_file(0x07, {1}, {1})); });
  EXPECT_TRUE(f.has("unknown IDX element type code 0x07")) << f.message;

  f = failure_of([] { parse(test::idx_file(0x08, {}, {})); });
  EXPECT_TRUE(f.has("declares 0 dims")) << f.message;

  f = failure_of([] { parse(test::idx_file(0x08, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {7})); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("declares 9 dims")) << f.message;
}

TEST(IdxReader, RefusesZeroDimsAndOverflowingOnes) {
  auto f = failure_of([] { parse(test::idx_u8({0, 28, 28}, {})); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("expected at least one example")) << f.message;
  f = failure_of([] { parse(test::idx_u8({2, 0}, {})); });
  EXPECT_TRUE(f.has("dim 1 of [2, 0] is 0")) << f.message;
  f = failure_of([] { parse(test::idx_file(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, {})); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("more data than can be addressed")) << f.message;
}

TEST(IdxReader, AHeaderPromisingHugeDataCostsLittle) {
  // 4 billion 255-byte examples promised, 3 bytes given: refused after reading what is there.
  auto f = failure_of([] { parse(test::idx_u8({0xFFFFFFFF, 255}, {1, 2, 3})); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("found 15")) << f.message;
}

TEST(IdxReader, RefusesTrailingBytes) {
  Bytes longer = three_images();
  longer.push_back(1);
  auto f = failure_of([&] { parse(longer); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("expected 28 bytes, found 29")) << f.message;
  f = failure_of([&] { parse(test::gzip(longer)); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("(decompressed)")) << f.message;
}

TEST(IdxReader, MissingFileAndFolderAreIoErrors) {
  test::TempDir dir;
  auto f = failure_of([&] { read_idx_file(dir.file("nope.gz"), 0); });
  EXPECT_EQ(f.status, NNRT_ERR_IO);
  EXPECT_TRUE(f.has("nope.gz")) << f.message;
  EXPECT_TRUE(f.has("No such file")) << f.message;
  f = failure_of([&] { read_idx_file(dir.file(""), 0); });
  EXPECT_EQ(f.status, NNRT_ERR_IO) << f.message;
  EXPECT_TRUE(f.has("directory")) << f.message;
}

TEST(IdxDataset, PairsImagesWithLabels) {
  IdxArray images = parse(three_images());
  IdxArray labels = parse(test::idx_u8({3}, {7, 0, 2}));
  DatasetParts p = idx_dataset_parts(std::move(images), std::move(labels), "img", "lbl", 0.5);
  EXPECT_EQ(p.size, 3);
  EXPECT_EQ(p.example_shape, (Shape{1, 2, 2}));  // a channel dim for conv2d
  EXPECT_EQ(p.feature_type, FeatureType::U8);
  EXPECT_EQ(p.scale, 0.5);
  EXPECT_TRUE(p.class_labels);
  EXPECT_EQ(p.classes, (std::vector<int64_t>{7, 0, 2}));
}

TEST(IdxDataset, OtherRanksKeepTheirDims) {
  Bytes px(2 * 3, 1);
  DatasetParts flat = idx_dataset_parts(parse(test::idx_u8({2, 3}, px)), parse(test::idx_u8({2}, {0, 1})), "i", "l", 1);
  EXPECT_EQ(flat.example_shape, (Shape{3}));
  Bytes vol(2 * 2 * 3 * 4, 1);
  DatasetParts v =
      idx_dataset_parts(parse(test::idx_u8({2, 2, 3, 4}, vol)), parse(test::idx_u8({2}, {0, 1})), "i", "l", 1);
  EXPECT_EQ(v.example_shape, (Shape{2, 3, 4}));
}

TEST(IdxDataset, RefusesMismatchedCounts) {
  auto f = failure_of([] {
    idx_dataset_parts(parse(three_images()), parse(test::idx_u8({2}, {1, 2})), "img.gz", "lbl.gz", 1);
  });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("img.gz holds 3 examples")) << f.message;
  EXPECT_TRUE(f.has("lbl.gz holds 2")) << f.message;
}

TEST(IdxDataset, ChecksLabelAndImageValues) {
  auto f = failure_of([] {
    idx_dataset_parts(parse(test::idx_u8({2, 1}, {1, 2})), parse(test::idx_file(0x09, {2}, {1, 0xFE})), "i", "lbl", 1);
  });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("lbl: the label of example 1 is -2")) << f.message;

  f = failure_of([] {
    idx_dataset_parts(parse(test::idx_file(0x0D, {2, 1}, test::big_endian<float>({1, NAN}))),
                      parse(test::idx_u8({2}, {0, 1})), "img", "l", 1);
  });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("img: the value of example 1 (element 0) is nan")) << f.message;

  f = failure_of([] {
    idx_dataset_parts(parse(test::idx_u8({2, 1}, {1, 2})), parse(test::idx_u8({2, 2}, {0, 1, 1, 0})), "i", "l", 1);
  });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("one class index per example")) << f.message;

  f = failure_of([] {
    idx_dataset_parts(parse(test::idx_u8({1, 1}, {1})),
                      parse(test::idx_file(0x0E, {1}, test::big_endian<double>({1e300}))), "i", "l", 1);
  });
  EXPECT_TRUE(f.has("beyond the f32 range")) << f.message;
}

TEST(IdxDataset, FloatLabelsBecomeTargets) {
  DatasetParts p =
      idx_dataset_parts(parse(test::idx_u8({2, 1}, {1, 2})),
                        parse(test::idx_file(0x0D, {2, 2}, test::big_endian<float>({0.5f, 1, 2, -3}))), "i", "l", 1);
  EXPECT_FALSE(p.class_labels);
  EXPECT_EQ(p.target_shape, (Shape{2}));
  EXPECT_EQ(p.targets, (std::vector<float>{0.5f, 1, 2, -3}));
}

}  // namespace
}  // namespace nnrt::data
