// Dataset construction from parts, batching conversions, slices, and nnrt_dataset_load specs.
#include "data/dataset.h"

#include <cmath>
#include <cstring>

#include "data/feature_convert.h"
#include "data_test_util.h"
#include "nnrt/kernels/convert.h"
#include "nnrt/kernels/half.h"

namespace nnrt::data {
namespace {

using test::Bytes;
using test::failure_of;

template <class T>
Bytes raw(const std::vector<T> &v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

DatasetParts class_parts(FeatureType type, Bytes features, Shape example, std::vector<int64_t> classes,
                         double scale = 1) {
  DatasetParts p;
  p.size = static_cast<int64_t>(classes.size());
  p.feature_type = type;
  p.example_shape = example;
  p.features = std::move(features);
  p.scale = scale;
  p.classes = std::move(classes);
  return p;
}

// Gathers examples `rows` as `dtype` and returns the raw output.
Bytes gather_x(const Dataset &d, std::vector<int64_t> rows, nnrt_dtype dtype) {
  size_t es = dtype == NNRT_DTYPE_F64 ? 8 : dtype == NNRT_DTYPE_F32 ? 4 : 2;
  Bytes out(rows.size() * static_cast<size_t>(d.example_shape().numel()) * es);
  d.gather(rows.data(), static_cast<int64_t>(rows.size()), dtype, out.data(), nullptr);
  return out;
}

template <class T>
std::vector<T> as(const Bytes &b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

TEST(Dataset, FromPartsKeepsFeaturesAsTheyCame) {
  auto d = Dataset::from_parts(class_parts(FeatureType::U8, {1, 2, 3, 4, 5, 6}, Shape{1, 3}, {2, 0}));
  EXPECT_EQ(d->size(), 2);
  EXPECT_EQ(d->example_shape(), (Shape{1, 3}));
  EXPECT_TRUE(d->has_class_labels());
  EXPECT_EQ(d->num_classes(), 3);
  EXPECT_EQ(d->feature_type(), FeatureType::U8);
  EXPECT_EQ(d->label(0), 2);
  EXPECT_EQ(d->label(1), 0);
}

TEST(Dataset, FromPartsRefusesInconsistentParts) {
  EXPECT_EQ(failure_of([] { Dataset::from_parts(class_parts(FeatureType::U8, {}, Shape{1}, {})); }).status,
            NNRT_ERR_INVALID_ARGUMENT);
  auto f = failure_of([] { Dataset::from_parts(class_parts(FeatureType::U8, {1, 2}, Shape{1}, {0, -1})); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("example 1 has class index -1")) << f.message;
  EXPECT_EQ(failure_of([] {
              Dataset::from_parts(class_parts(FeatureType::F32, {1, 2}, Shape{1}, {0}));
            }).status,
            NNRT_ERR_INTERNAL);
  EXPECT_EQ(failure_of([] { Dataset::from_parts(class_parts(FeatureType::U8, {}, Shape{0}, {0})); }).status,
            NNRT_ERR_SHAPE);
}

TEST(Dataset, ScalarExamplesAndTargetsGetADimOfOne) {
  DatasetParts p;
  p.size = 2;
  p.feature_type = FeatureType::F32;
  p.features = raw<float>({1, 2});
  p.class_labels = false;
  p.targets = {0.5f, -1};
  auto d = Dataset::from_parts(std::move(p));
  EXPECT_EQ(d->example_shape(), (Shape{1}));
  EXPECT_EQ(d->target_shape(), (Shape{1}));
  EXPECT_EQ(d->num_classes(), 0);
  std::vector<int64_t> rows = {1, 0};
  float x[2], y[2];
  d->gather(rows.data(), 2, NNRT_DTYPE_F32, x, y);
  EXPECT_EQ(x[0], 2);
  EXPECT_EQ(y[0], -1);
  EXPECT_EQ(y[1], 0.5f);
  EXPECT_EQ(failure_of([&] { d->label(0); }).status, NNRT_ERR_INVALID_ARGUMENT);
}

// What gather must give for a value: value * scale in f64, rounded once.
uint16_t want_f16(double v) { return kernels::f64_to_f16(v); }
uint16_t want_bf16(double v) { return kernels::f64_to_bf16(v); }

TEST(Dataset, GatherConvertsBytesExactlyToEveryFloatType) {
  Bytes all(256);
  for (int i = 0; i < 256; ++i) all[i] = static_cast<unsigned char>(i);
  const double scale = 1.0 / 255.0;
  auto d = Dataset::from_parts(class_parts(FeatureType::U8, all, Shape{256}, {0}, scale));
  auto f32 = as<float>(gather_x(*d, {0}, NNRT_DTYPE_F32));
  auto f64 = as<double>(gather_x(*d, {0}, NNRT_DTYPE_F64));
  auto f16 = as<uint16_t>(gather_x(*d, {0}, NNRT_DTYPE_F16));
  auto bf16 = as<uint16_t>(gather_x(*d, {0}, NNRT_DTYPE_BF16));
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(f32[i], static_cast<float>(i * scale)) << i;
    EXPECT_EQ(f64[i], i * scale) << i;
    EXPECT_EQ(f16[i], want_f16(i * scale)) << i;
    EXPECT_EQ(bf16[i], want_bf16(i * scale)) << i;
  }
  EXPECT_EQ(f32[255], 1.0f);
  EXPECT_EQ(f16[255], 0x3C00);   // 1.0
  EXPECT_EQ(bf16[255], 0x3F80);  // 1.0
  EXPECT_EQ(f16[0], 0);
}

TEST(Dataset, GatherRoundsToNearestEven) {
  // Exact ties between two f16 (bf16) neighbours go to the even one.
  std::vector<float> v = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 65520.0f};
  auto d = Dataset::from_parts(class_parts(FeatureType::F32, raw(v), Shape{5}, {0}));
  auto f16 = as<uint16_t>(gather_x(*d, {0}, NNRT_DTYPE_F16));
  EXPECT_EQ(f16[0], 0x3C00);  // 1
  EXPECT_EQ(f16[1], 0x3C02);  // 1 + 2^-9
  EXPECT_EQ(f16[4], 0x7C00);  // 65520 rounds to infinity in f16
  auto bf16 = as<uint16_t>(gather_x(*d, {0}, NNRT_DTYPE_BF16));
  EXPECT_EQ(bf16[2], 0x3F80);  // 1
  EXPECT_EQ(bf16[3], 0x3F82);  // 1 + 2^-6
}

// Every stored type to every float type, against value * scale rounded once.
template <class T>
void check_all_outputs(FeatureType type, const std::vector<T> &values, const std::vector<double> &as_double,
                       double scale) {
  const int64_t n = static_cast<int64_t>(values.size());
  auto d = Dataset::from_parts(class_parts(type, raw(values), Shape{n}, {0}, scale));
  auto f32 = as<float>(gather_x(*d, {0}, NNRT_DTYPE_F32));
  auto f64 = as<double>(gather_x(*d, {0}, NNRT_DTYPE_F64));
  auto f16 = as<uint16_t>(gather_x(*d, {0}, NNRT_DTYPE_F16));
  auto bf16 = as<uint16_t>(gather_x(*d, {0}, NNRT_DTYPE_BF16));
  for (int64_t i = 0; i < n; ++i) {
    double want = as_double[i] * scale;
    EXPECT_EQ(f32[i], static_cast<float>(want)) << feature_type_name(type) << " " << i;
    EXPECT_EQ(f64[i], want) << feature_type_name(type) << " " << i;
    EXPECT_EQ(f16[i], want_f16(want)) << feature_type_name(type) << " " << i;
    EXPECT_EQ(bf16[i], want_bf16(want)) << feature_type_name(type) << " " << i;
  }
}

TEST(Dataset, GatherConvertsEveryStoredType) {
  for (double scale : {1.0, 0.1, -3.0}) {
    check_all_outputs<int8_t>(FeatureType::I8, {-128, -1, 0, 127}, {-128, -1, 0, 127}, scale);
    check_all_outputs<int16_t>(FeatureType::I16, {-32768, -7, 0, 2049}, {-32768, -7, 0, 2049}, scale);
    check_all_outputs<int32_t>(FeatureType::I32, {-2147483647 - 1, 16777217, 3}, {-2147483648.0, 16777217, 3}, scale);
    check_all_outputs<int64_t>(FeatureType::I64, {-5, int64_t{1} << 40, 0}, {-5, 1099511627776.0, 0}, scale);
    check_all_outputs<float>(FeatureType::F32, {0.1f, -1e-30f, 3e38f, 1.0f + 0x1p-11f},
                             {0.1f, -1e-30f, 3e38f, 1.0f + 0x1p-11f}, scale);
    check_all_outputs<double>(FeatureType::F64, {0.1, -1e-300, 1.0 + 0x1p-11 + 0x1p-40, 1e10},
                              {0.1, -1e-300, 1.0 + 0x1p-11 + 0x1p-40, 1e10}, scale);
    check_all_outputs<uint16_t>(FeatureType::F16, {0x3C00, 0x0001, 0xFBFF}, {1.0, 0x1p-24, -65504.0}, scale);
    check_all_outputs<uint16_t>(FeatureType::BF16, {0x3F80, 0xC2F7, 0x0001}, {1.0, -123.5, 0x1p-133}, scale);
  }
}

TEST(Dataset, GatherPicksRowsAndLabels) {
  auto d = Dataset::from_parts(class_parts(FeatureType::U8, {10, 11, 20, 21, 30, 31}, Shape{2}, {5, 6, 7}));
  std::vector<int64_t> rows = {2, 0, 2};
  float x[6];
  int64_t y[3];
  d->gather(rows.data(), 3, NNRT_DTYPE_F32, x, y);
  EXPECT_EQ(std::vector<float>(x, x + 6), (std::vector<float>{30, 31, 10, 11, 30, 31}));
  EXPECT_EQ(std::vector<int64_t>(y, y + 3), (std::vector<int64_t>{7, 5, 7}));

  std::vector<int64_t> bad = {0, 3};
  auto f = failure_of([&] { d->gather(bad.data(), 2, NNRT_DTYPE_F32, x, y); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("example 3")) << f.message;
  EXPECT_EQ(failure_of([&] { d->gather(rows.data(), 1, NNRT_DTYPE_I32, x, y); }).status, NNRT_ERR_DTYPE);
}

TEST(Dataset, SlicesShareTheDataAndKeepTheClassCount) {
  auto d = Dataset::from_parts(class_parts(FeatureType::U8, {0, 1, 2, 3, 4}, Shape{1}, {4, 1, 0, 2, 3}));
  auto s = d->slice(1, 4);
  EXPECT_EQ(s->size(), 3);
  EXPECT_EQ(s->label(0), 1);
  EXPECT_EQ(s->label(2), 2);
  EXPECT_EQ(s->num_classes(), 5);
  auto t = s->slice(1, 3);
  EXPECT_EQ(t->size(), 2);
  EXPECT_EQ(t->label(0), 0);
  std::vector<int64_t> rows = {1, 0};
  double x[2];
  int64_t y[2];
  t->gather(rows.data(), 2, NNRT_DTYPE_F64, x, y);
  EXPECT_EQ(x[0], 3);
  EXPECT_EQ(x[1], 2);
  EXPECT_EQ(y[0], 2);
  EXPECT_EQ(failure_of([&] { t->label(2); }).status, NNRT_ERR_INVALID_ARGUMENT);
  for (std::pair<int64_t, int64_t> r : {std::pair<int64_t, int64_t>{-1, 2}, {2, 2}, {3, 1}, {0, 6}}) {
    EXPECT_EQ(failure_of([&] { d->slice(r.first, r.second); }).status, NNRT_ERR_INVALID_ARGUMENT) << r.first;
  }
}

TEST(FeatureConverter, FindsNonFiniteValues) {
  std::vector<float> v = {1, 2, INFINITY};
  EXPECT_EQ(first_non_finite(FeatureType::F32, raw(v).data(), 3), 2);
  std::vector<uint16_t> h = {0x3C00, 0x7E00};
  EXPECT_EQ(first_non_finite(FeatureType::F16, raw(h).data(), 2), 1);
  EXPECT_EQ(first_non_finite(FeatureType::U8, Bytes{255}.data(), 1), -1);
}

// ---- nnrt_dataset_load specs ----------------------------------------------------------------

class DatasetLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    images_ = dir_.write("images.gz", test::gzip(test::idx_u8({3, 2, 2}, {0, 51, 102, 255, 1, 1, 1, 1, 2, 2, 2, 2})));
    labels_ = dir_.write("labels", test::idx_u8({3}, {9, 0, 4}));
    csv_ = dir_.write("d.csv", "a,b,label\n1,2,0\n3,4,1\n5,6,1\n");
  }
  std::string idx_spec(const std::string &extra = "") const {
    return "{\"format\": \"idx\", \"images\": \"" + images_ + "\", \"labels\": \"" + labels_ + "\"" + extra + "}";
  }
  test::TempDir dir_;
  std::string images_, labels_, csv_;
};

TEST_F(DatasetLoad, IdxWithDefaultScale) {
  auto d = Dataset::load(idx_spec().c_str());
  EXPECT_EQ(d->size(), 3);
  EXPECT_EQ(d->example_shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(d->num_classes(), 10);
  auto x = as<float>(gather_x(*d, {0}, NNRT_DTYPE_F32));
  EXPECT_EQ(x, (std::vector<float>{0, 0.2f, 0.4f, 1}));
  d = Dataset::load(idx_spec(", \"scale\": 1, \"limit\": 2").c_str());
  EXPECT_EQ(d->size(), 2);
  EXPECT_EQ(as<float>(gather_x(*d, {0}, NNRT_DTYPE_F32))[3], 255);
}

TEST_F(DatasetLoad, Csv) {
  auto d = Dataset::load(
      ("{\"format\": \"csv\", \"path\": \"" + csv_ + "\", \"header\": true, \"label_column\": -1, \"scale\": 0.5}")
          .c_str());
  EXPECT_EQ(d->size(), 3);
  EXPECT_EQ(d->example_shape(), (Shape{2}));
  EXPECT_EQ(d->label(1), 1);
  EXPECT_EQ(as<float>(gather_x(*d, {2}, NNRT_DTYPE_F32)), (std::vector<float>{2.5f, 3}));
  d = Dataset::load(
      ("{\"format\": \"csv\", \"path\": \"" + csv_ + "\", \"header\": true, \"label_column\": 2, \"limit\": 1}")
          .c_str());
  EXPECT_EQ(d->size(), 1);
}

TEST_F(DatasetLoad, SpecErrorsNameTheKey) {
  struct Case {
    std::string spec;
    nnrt_status status;
    const char *text;
  } cases[] = {
      {"{\"format\": \"idx\"", NNRT_ERR_INVALID_ARGUMENT, "not valid JSON"},
      {"[1]", NNRT_ERR_INVALID_ARGUMENT, "expected a JSON object"},
      {"{}", NNRT_ERR_INVALID_ARGUMENT, "spec.format is required"},
      {"{\"format\": \"parquet\"}", NNRT_ERR_INVALID_ARGUMENT, "expected \"idx\", \"csv\" or \"text\", got \"parquet\""},
      {"{\"format\": 3}", NNRT_ERR_INVALID_ARGUMENT, "spec.format: expected a string"},
      {idx_spec(", \"shuffle\": true"), NNRT_ERR_INVALID_ARGUMENT, "unknown key 'spec.shuffle'"},
      {idx_spec(", \"path\": \"x\""), NNRT_ERR_INVALID_ARGUMENT, "unknown key 'spec.path'"},
      {idx_spec(", \"limit\": 0"), NNRT_ERR_INVALID_ARGUMENT, "spec.limit: expected an integer >= 1, got 0"},
      {idx_spec(", \"limit\": \"10\""), NNRT_ERR_INVALID_ARGUMENT, "spec.limit: expected an integer"},
      {idx_spec(", \"scale\": \"1/255\""), NNRT_ERR_INVALID_ARGUMENT, "spec.scale: expected a number"},
      {"{\"format\": \"idx\", \"images\": \"a\"}", NNRT_ERR_INVALID_ARGUMENT, "spec.labels is required"},
      {"{\"format\": \"csv\", \"path\": \"x\", \"header\": 1}", NNRT_ERR_INVALID_ARGUMENT,
       "spec.header: expected true or false"},
      {"{\"format\": \"csv\", \"path\": \"x\", \"images\": \"y\"}", NNRT_ERR_INVALID_ARGUMENT,
       "unknown key 'spec.images'"},
      {"{\"format\": \"csv\", \"label_column\": 1.5, \"path\": \"x\"}", NNRT_ERR_INVALID_ARGUMENT, "spec.label_column"},
      {"{\"format\": \"csv\", \"path\": \"/nonexistent/x.csv\"}", NNRT_ERR_IO, "/nonexistent/x.csv"},
  };
  for (const Case &c : cases) {
    auto f = failure_of([&] { Dataset::load(c.spec.c_str()); });
    EXPECT_EQ(f.status, c.status) << c.spec << " -> " << f.message;
    EXPECT_TRUE(f.has(c.text)) << c.spec << " -> " << f.message;
  }
  EXPECT_EQ(failure_of([] { Dataset::load(nullptr); }).status, NNRT_ERR_INVALID_ARGUMENT);
}

TEST_F(DatasetLoad, FileErrorsNameTheFile) {
  std::string wrong = dir_.write("labels2", test::idx_u8({2}, {1, 2}));
  auto f = failure_of([&] {
    Dataset::load(("{\"format\": \"idx\", \"images\": \"" + images_ + "\", \"labels\": \"" + wrong + "\"}").c_str());
  });
  EXPECT_EQ(f.status, NNRT_ERR_CORRUPT);
  EXPECT_TRUE(f.has("labels2 holds 2")) << f.message;
  f = failure_of([&] {
    Dataset::load(
        ("{\"format\": \"idx\", \"images\": \"" + images_ + "\", \"labels\": \"" + dir_.file("none") + "\"}").c_str());
  });
  EXPECT_EQ(f.status, NNRT_ERR_IO);
  EXPECT_TRUE(f.has("none")) << f.message;
}

}  // namespace
}  // namespace nnrt::data
