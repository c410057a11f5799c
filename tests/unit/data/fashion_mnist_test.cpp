// Loads the real Fashion-MNIST test set (skipped when /usr/share/datasets/fashion-mnist is absent)
// and checks facts every copy of it has.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "data/dataset.h"

namespace nnrt::data {
namespace {

const std::string kFolder = "/usr/share/datasets/fashion-mnist/";

TEST(FashionMnist, TestSetLoads) {
  std::string images = kFolder + "t10k-images-idx3-ubyte.gz", labels = kFolder + "t10k-labels-idx1-ubyte.gz";
  if (!std::filesystem::exists(images) || !std::filesystem::exists(labels))
    GTEST_SKIP() << "no Fashion-MNIST in " << kFolder;

  auto d =
      Dataset::load(("{\"format\": \"idx\", \"images\": \"" + images + "\", \"labels\": \"" + labels + "\"}").c_str());
  ASSERT_EQ(d->size(), 10000);
  EXPECT_EQ(d->example_shape(), (Shape{1, 28, 28}));
  EXPECT_EQ(d->feature_type(), FeatureType::U8);
  EXPECT_TRUE(d->has_class_labels());
  EXPECT_EQ(d->num_classes(), 10);

  // The test set is balanced: 1000 of each of the 10 classes.
  int64_t histogram[10] = {};
  for (int64_t i = 0; i < d->size(); ++i) {
    int64_t c = d->label(i);
    ASSERT_GE(c, 0);
    ASSERT_LT(c, 10);
    ++histogram[c];
  }
  int64_t total = 0;
  for (int64_t h : histogram) {
    EXPECT_EQ(h, 1000);
    total += h;
  }
  EXPECT_EQ(total, 10000);
  EXPECT_EQ(d->label(0), 9);  // the first test image is an ankle boot
  EXPECT_EQ(d->label(1), 2);  // then a pullover

  // Pixels scaled by 1/255 span [0, 1], with black borders and some white pixels.
  std::vector<int64_t> all(static_cast<size_t>(d->size()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  std::vector<float> x(all.size() * 784);
  d->gather(all.data(), d->size(), NNRT_DTYPE_F32, x.data(), nullptr);
  float lo = 1, hi = 0;
  double sum = 0;
  for (float v : x) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 1.0f);
  EXPECT_NEAR(sum / static_cast<double>(x.size()), 0.2868, 0.002);  // the well-known test-set mean
  EXPECT_EQ(x[0], 0.0f);  // the top-left pixel of the first image is background
}

TEST(FashionMnist, LimitKeepsTheFirstImages) {
  std::string images = kFolder + "t10k-images-idx3-ubyte.gz", labels = kFolder + "t10k-labels-idx1-ubyte.gz";
  if (!std::filesystem::exists(images) || !std::filesystem::exists(labels))
    GTEST_SKIP() << "no Fashion-MNIST in " << kFolder;
  auto d = Dataset::load(
      ("{\"format\": \"idx\", \"images\": \"" + images + "\", \"labels\": \"" + labels + "\", \"limit\": 100}")
          .c_str());
  EXPECT_EQ(d->size(), 100);
  EXPECT_EQ(d->label(0), 9);
}

}  // namespace
}  // namespace nnrt::data
