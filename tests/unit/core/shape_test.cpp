#include "core/shape.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace nnrt {
namespace {

TEST(Shape, BroadcastsLikeNumpy) {
  EXPECT_EQ(broadcast_shapes(Shape{2, 3}, Shape{3}, "t"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes(Shape{2, 1}, Shape{1, 3}, "t"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes(Shape{}, Shape{4, 5}, "t"), (Shape{4, 5}));
  EXPECT_EQ(broadcast_shapes(Shape{0, 1}, Shape{1, 3}, "t"), (Shape{0, 3}));
  EXPECT_EQ(broadcast_shapes(Shape{5, 1, 4}, Shape{3, 1}, "t"), (Shape{5, 3, 4}));
  try {
    broadcast_shapes(Shape{2, 3}, Shape{4}, "add");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), NNRT_ERR_SHAPE);
    EXPECT_NE(std::string(e.what()).find("[2, 3] and [4]"), std::string::npos) << e.what();
  }
}

TEST(Shape, ContiguousStridesAndCounts) {
  Shape s{2, 3, 4};
  Strides st = contiguous_strides(s);
  EXPECT_EQ(st[0], 12);
  EXPECT_EQ(st[1], 4);
  EXPECT_EQ(st[2], 1);
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(Shape{}.numel(), 1);
  EXPECT_EQ((Shape{3, 0}).numel(), 0);
  EXPECT_EQ(to_string(s), "[2, 3, 4]");
}

TEST(Shape, ChecksApiShapes) {
  int64_t ok[2] = {2, 3}, neg[2] = {2, -1}, huge[3] = {int64_t(1) << 40, int64_t(1) << 40, 2};
  EXPECT_EQ(check_shape(2, ok, "shape"), 6);
  EXPECT_EQ(check_shape(0, nullptr, "shape"), 1);
  EXPECT_THROW(check_shape(2, neg, "shape"), Error);
  EXPECT_THROW(check_shape(3, huge, "shape"), Error);
  EXPECT_THROW(check_shape(9, ok, "shape"), Error);
  EXPECT_THROW(check_shape(2, nullptr, "shape"), Error);
  int64_t zero_then_huge[3] = {0, int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_EQ(check_shape(3, zero_then_huge, "shape"), 0);
}

TEST(Shape, NormalizesAxes) {
  EXPECT_EQ(normalize_axis(-1, 3, "t"), 2);
  EXPECT_EQ(normalize_axis(0, 3, "t"), 0);
  EXPECT_THROW(normalize_axis(3, 3, "t"), Error);
  EXPECT_THROW(normalize_axis(-4, 3, "t"), Error);
}

}  // namespace
}  // namespace nnrt
