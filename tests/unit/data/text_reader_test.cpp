// Text as token windows: the bytes as features, the next bytes as per-position labels, strides,
// the held-out tail, gzip, the spec of nnrt_dataset_load, and the refusals.
#include "data/text_reader.h"

#include "data_test_util.h"

namespace nnrt::data {
namespace {

using test::Failure;
using test::failure_of;

DatasetParts parse(const std::string &text, TextOptions options) {
  return parse_text(reinterpret_cast<const unsigned char *>(text.data()), text.size(), "t.txt", options);
}

TextOptions windows(int64_t window, int64_t stride) {
  TextOptions o;
  o.window = window;
  o.stride = stride;
  return o;
}

std::string features(const DatasetParts &p) { return std::string(p.features.begin(), p.features.end()); }

std::vector<int64_t> codes(const std::string &s) { return std::vector<int64_t>(s.begin(), s.end()); }

TEST(TextReader, WindowsOfBytesLabelledWithTheNextByte) {
  DatasetParts p = parse("abcdefg", windows(3, 2));
  // Windows start at 0, 2 and 4; the one at 4 ("efg") has no byte after it and is left out.
  EXPECT_EQ(p.size, 2);
  EXPECT_EQ(p.feature_type, FeatureType::U8);
  EXPECT_EQ(p.scale, 1.0);
  EXPECT_EQ(p.example_shape, (Shape{3}));
  EXPECT_TRUE(p.class_labels);
  EXPECT_EQ(p.label_shape, (Shape{3}));
  EXPECT_EQ(features(p), "abccde");
  EXPECT_EQ(p.classes, codes("bcddef"));
}

TEST(TextReader, StrideOneLimitAndEveryByteValue) {
  std::string text;
  for (int b = 0; b < 256; ++b) text += static_cast<char>(255 - b);
  DatasetParts p = parse(text, windows(4, 1));
  EXPECT_EQ(p.size, 252);
  EXPECT_EQ(p.features[0], 255);
  EXPECT_EQ(p.classes.back(), 0);  // bytes are unsigned: 0..255, never negative
  TextOptions limited = windows(4, 1);
  limited.limit = 5;
  EXPECT_EQ(parse(text, limited).size, 5);
}

TEST(TextReader, TheTestSplitIsTheTailAndSharesNoByteWithTraining) {
  std::string text = "0123456789abcdefghij";  // 20 bytes; the last 10% (2 bytes) is too short
  TextOptions train = windows(2, 1), test = windows(2, 1);
  train.split = "train";
  test.split = "test";
  train.test_fraction = test.test_fraction = 0.25;  // 15 + 5 bytes
  DatasetParts tr = parse(text, train), te = parse(text, test);
  EXPECT_EQ(tr.size, 13);  // windows of 0..e: starts 0..12
  EXPECT_EQ(tr.classes.back(), 'e');
  EXPECT_EQ(te.size, 3);  // starts at f, g, h
  EXPECT_EQ(features(te), "fgghhi");
  EXPECT_EQ(te.classes, codes("ghhiij"));
}

TEST(TextReader, ReadsGzipAndFiles) {
  test::TempDir dir;
  std::string text = "the quick brown fox";
  std::string plain = dir.write("t.txt", text);
  std::string packed = dir.write("t.txt.gz", test::gzip(test::Bytes(text.begin(), text.end())));
  DatasetParts a = read_text_file(plain, windows(4, 4)), b = read_text_file(packed, windows(4, 4));
  EXPECT_EQ(a.size, 4);
  EXPECT_EQ(features(a), features(b));
  EXPECT_EQ(a.classes, b.classes);

  auto d = Dataset::load(("{\"format\": \"text\", \"path\": \"" + plain + "\", \"window\": 4}").c_str());
  EXPECT_EQ(d->size(), 4);  // the stride defaults to the window
  EXPECT_EQ(d->example_shape(), (Shape{4}));
  EXPECT_EQ(d->label_shape(), (Shape{4}));
  EXPECT_EQ(d->num_classes(), 'w' + 1);  // the largest label: bytes 1..16 are labels
}

TEST(TextReader, GathersPerPositionLabels) {
  test::TempDir dir;
  std::string path = dir.write("t.txt", std::string("abcdefghij"));
  auto d = Dataset::load(("{\"format\": \"text\", \"path\": \"" + path + "\", \"window\": 3, \"stride\": 3}").c_str());
  ASSERT_EQ(d->size(), 3);
  std::vector<int64_t> rows = {2, 0};
  std::vector<float> x(6);
  std::vector<int64_t> y(6);
  d->gather(rows.data(), 2, NNRT_DTYPE_F32, x.data(), y.data());
  EXPECT_EQ(x, (std::vector<float>{'g', 'h', 'i', 'a', 'b', 'c'}));
  EXPECT_EQ(y, codes("hijbcd"));
  // One label per example is not what these examples have.
  Failure f = failure_of([&] { d->label(0); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("class labels [3], not one each")) << f.message;
}

TEST(TextReader, RefusesTextsTooShortForAWindow) {
  Failure f = failure_of([] { parse("abc", windows(3, 1)); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("t.txt: the text holds 3 bytes, too few for one window of 3 tokens")) << f.message;
  EXPECT_TRUE(f.has("(4 bytes)")) << f.message;

  f = failure_of([] { parse("", windows(1, 1)); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("holds 0 bytes")) << f.message;

  TextOptions test = windows(8, 1);
  test.split = "test";
  f = failure_of([&] { parse(std::string(40, 'a'), test); });  // the tail: 4 bytes
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("holds 40 bytes (the test split's 4 of them)")) << f.message;
}

TEST(TextReader, RefusesBadOptionsAndFiles) {
  TextOptions o = windows(0, 1);
  EXPECT_TRUE(failure_of([&] { parse("abcdef", o); }).has("spec.window"));
  o = windows(2, 0);
  EXPECT_TRUE(failure_of([&] { parse("abcdef", o); }).has("spec.stride"));
  o = windows(2, 1);
  o.split = "validation";
  EXPECT_TRUE(failure_of([&] { parse("abcdef", o); }).has("spec.split: expected \"all\", \"train\" or \"test\""));
  o = windows(2, 1);
  o.test_fraction = 1;
  EXPECT_TRUE(failure_of([&] { parse("abcdef", o); }).has("spec.test_fraction"));

  Failure f = failure_of([] { read_text_file("/nonexistent/nnrt-text", windows(2, 1)); });
  EXPECT_EQ(f.status, NNRT_ERR_IO);
  EXPECT_TRUE(f.has("/nonexistent/nnrt-text")) << f.message;

  f = failure_of([] { Dataset::load("{\"format\": \"text\", \"path\": \"x\"}"); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("window")) << f.message;
  f = failure_of([] { Dataset::load("{\"format\": \"text\", \"path\": \"x\", \"window\": 4, \"windw\": 4}"); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("windw")) << f.message;

  test::TempDir dir;
  test::Bytes broken = test::gzip(test::Bytes(100, 'a'));
  broken.resize(broken.size() / 2);
  std::string path = dir.write("t.gz", broken);
  EXPECT_EQ(failure_of([&] { read_text_file(path, windows(2, 1)); }).status, NNRT_ERR_CORRUPT);
}

}  // namespace
}  // namespace nnrt::data
