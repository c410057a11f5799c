#include "data/csv_reader.h"

#include <clocale>
#include <cstring>

#include "data_test_util.h"

namespace nnrt::data {
namespace {

using test::failure_of;

DatasetParts parse(const std::string &text, CsvOptions options = {}) {
  return parse_csv(reinterpret_cast<const unsigned char *>(text.data()), text.size(), "t.csv", options);
}

std::vector<float> features(const DatasetParts &p) {
  std::vector<float> v(p.features.size() / sizeof(float));
  std::memcpy(v.data(), p.features.data(), p.features.size());
  return v;
}

TEST(CsvReader, ReadsLabelsAndFeatures) {
  DatasetParts p = parse("0,1.5,2\n3,-4,5e-1\n");
  EXPECT_EQ(p.size, 2);
  EXPECT_EQ(p.feature_type, FeatureType::F32);
  EXPECT_EQ(p.example_shape, (Shape{2}));
  EXPECT_EQ(p.classes, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(features(p), (std::vector<float>{1.5f, 2, -4, 0.5f}));
  EXPECT_EQ(p.scale, 1.0);
}

TEST(CsvReader, HeaderCrlfSpacesBlankLinesAndNoFinalNewline) {
  CsvOptions header;
  header.header = true;
  DatasetParts p = parse("\xEF\xBB\xBFlabel, a, b\r\n 1 ,\t2.5 , +3\r\n\r\n   \n2,4,.5", header);
  EXPECT_EQ(p.size, 2);
  EXPECT_EQ(p.classes, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(features(p), (std::vector<float>{2.5f, 3, 4, 0.5f}));
}

TEST(CsvReader, WithoutHeaderOptionAHeaderIsAnError) {
  auto f = failure_of([] { parse("label,a\n1,2\n"); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("t.csv:1:1: field 1 is \"label\"")) << f.message;
}

TEST(CsvReader, LabelColumnAnywhere) {
  CsvOptions last;
  last.label_column = -1;
  DatasetParts p = parse("1,2,7\n3,4,8\n", last);
  EXPECT_EQ(p.classes, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(features(p), (std::vector<float>{1, 2, 3, 4}));
  CsvOptions middle;
  middle.label_column = 1;
  p = parse("1,5,2\n", middle);
  EXPECT_EQ(p.classes, (std::vector<int64_t>{5}));
  EXPECT_EQ(features(p), (std::vector<float>{1, 2}));

  CsvOptions outside;
  outside.label_column = 3;
  auto f = failure_of([&] { parse("1,2,3\n", outside); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("label_column 3 is outside the 3 columns of t.csv:1")) << f.message;
  outside.label_column = -4;
  EXPECT_EQ(failure_of([&] { parse("1,2,3\n", outside); }).status, NNRT_ERR_INVALID_ARGUMENT);
}

TEST(CsvReader, BadNumbersGiveLineAndColumn) {
  struct Case {
    const char *text, *expected;
  } cases[] = {
      {"0,1\n1,abc\n", "t.csv:2:3: field 2 is \"abc\"; expected a number"},
      {"0,1.2.3\n", "t.csv:1:3: field 2 is \"1.2.3\"; expected a number"},
      {"0, ,1\n", "t.csv:1:4: field 2 is \"\"; expected a number, found an empty field"},
      {"0,1,\n", "field 3 is \"\"; expected a number, found an empty field"},
      {"0,nan\n", "field 2 is \"nan\"; expected a finite number"},
      {"0,-inf\n", "field 2 is \"-inf\"; expected a finite number"},
      {"0,1e999\n", "field 2 is \"1e999\"; it is beyond the f32 range"},
      {"0,1e39\n", "beyond the f32 range"},
      {"0,-1e400\n", "beyond the f32 range"},
      {"0,0.00001e99999999999999999999\n", "beyond the f32 range"},
      {"0,0x10\n", "field 2 is \"0x10\"; expected a number"},
      {"0,1,5\n0,\"2\",3\n", "t.csv:2:3: field 2 is \"\"2\"\""},
      {"0,+-1\n", "expected a number"},
      {"0,1 2\n", "field 2 is \"1 2\""},
  };
  for (const Case &c : cases) {
    auto f = failure_of([&] { parse(c.text); });
    EXPECT_EQ(f.status, NNRT_ERR_CORRUPT) << c.text;
    EXPECT_TRUE(f.has(c.expected)) << c.text << " -> " << f.message;
  }
}

TEST(CsvReader, LabelsMustBeNonNegativeIntegers) {
  EXPECT_EQ(parse("3.0,1\n").classes, (std::vector<int64_t>{3}));
  EXPECT_EQ(parse("+2,1\n").classes, (std::vector<int64_t>{2}));
  for (const char *bad : {"1.5,1\n", "-1,1\n", "x,1\n", ",1\n", "nan,1\n", "1e10,1\n", "99999999999,1\n"}) {
    auto f = failure_of([&] { parse(bad); });
    EXPECT_EQ(f.status, NNRT_ERR_CORRUPT) << bad;
    EXPECT_TRUE(f.has("t.csv:1:1: field 1")) << f.message;
    EXPECT_TRUE(f.has("expected a class index")) << f.message;
  }
}

TEST(CsvReader, RaggedLinesAreCorrupt) {
  auto f = failure_of([] { parse("0,1,2\n1,2\n"); });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("t.csv:2: expected 3 fields (as on line 1), found 2")) << f.message;
  f = failure_of([] { parse("\n0,1\n1,2,3\n"); });
  EXPECT_TRUE(f.has("t.csv:3: expected 2 fields (as on line 2), found 3")) << f.message;
  f = failure_of([] { parse("5\n"); });
  EXPECT_TRUE(f.has("expected at least 2 fields")) << f.message;
}

TEST(CsvReader, NoExamplesIsCorrupt) {
  CsvOptions header;
  header.header = true;
  struct Case {
    const char *text;
    CsvOptions options;
  } cases[] = {{"", {}}, {"\n\n  \n", {}}, {"a,b\n", header}};
  for (const Case &c : cases) {
    auto f = failure_of([&] { parse(c.text, c.options); });
    EXPECT_EQ(f.status, NNRT_ERR_CORRUPT) << c.text;
    EXPECT_TRUE(f.has("t.csv: no examples")) << f.message;
  }
}

TEST(CsvReader, LimitStopsEarly) {
  CsvOptions two;
  two.limit = 2;
  DatasetParts p = parse("0,1\n1,2\n2,3\nthis line is never read\n", two);
  EXPECT_EQ(p.size, 2);
  EXPECT_EQ(p.classes, (std::vector<int64_t>{0, 1}));
}

TEST(CsvReader, NumbersRoundOnceToF32) {
  // 0.1 and 16777217 are not f32 values: from_chars rounds the decimal text directly.
  DatasetParts p = parse("0,0.1,16777217,1e-40,1e-50,3.4028235e38,-1e-400,123e-99999999999999999999\n");
  EXPECT_EQ(features(p), (std::vector<float>{0.1f, 16777216.0f, 1e-40f, 0.0f, 3.4028235e38f, -0.0f, 0.0f}));
}

TEST(CsvReader, IgnoresTheCLocale) {
  const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
  const char *set = nullptr;
  for (const char *n : names)
    if ((set = std::setlocale(LC_NUMERIC, n))) break;
  DatasetParts p = parse("0,1.5\n");
  std::setlocale(LC_NUMERIC, "C");
  EXPECT_EQ(features(p), (std::vector<float>{1.5f})) << (set ? set : "no comma locale installed");
}

TEST(CsvReader, ReadsGzipAndFiles) {
  test::TempDir dir;
  std::string text = "1,2,3\n4,5,6\n";
  std::string plain = dir.write("d.csv", text);
  std::string packed = dir.write("d.csv.gz", test::gzip(test::Bytes(text.begin(), text.end())));
  EXPECT_EQ(features(read_csv_file(plain, {})), features(read_csv_file(packed, {})));
  auto f = failure_of([&] { read_csv_file(dir.file("missing.csv"), {}); });
  EXPECT_EQ(f.status, NNRT_ERR_IO);
  EXPECT_TRUE(f.has("missing.csv")) << f.message;
}

}  // namespace
}  // namespace nnrt::data
