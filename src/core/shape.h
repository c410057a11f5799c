// Shapes and strides: fixed-capacity (NNRT_MAX_DIMS) so that the op hot path never allocates.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "nnrt/nnrt.h"

namespace nnrt {

struct Shape {
  int32_t rank = 0;
  std::array<int64_t, NNRT_MAX_DIMS> dims{};

  Shape() = default;
  Shape(std::initializer_list<int64_t> d);
  static Shape of(const int64_t *d, int32_t rank);
  static Shape of(const std::vector<int64_t> &d);

  int64_t operator[](int32_t i) const { return dims[i]; }
  int64_t &operator[](int32_t i) { return dims[i]; }
  int64_t numel() const;
  std::vector<int64_t> vec() const { return std::vector<int64_t>(dims.begin(), dims.begin() + rank); }
  bool operator==(const Shape &o) const;
  bool operator!=(const Shape &o) const { return !(*this == o); }
};

using Strides = std::array<int64_t, NNRT_MAX_DIMS>;

// "[2, 3, 4]"
std::string to_string(const Shape &s);

// Row-major strides, in elements.
Strides contiguous_strides(const Shape &s);

// Checks rank and dims from the C API and returns the element count; throws
// NNRT_ERR_INVALID_ARGUMENT naming `what` for a bad rank, a negative dim or an overflow.
int64_t check_shape(int32_t rank, const int64_t *dims, const char *what);

// numpy broadcasting of two shapes; throws NNRT_ERR_SHAPE giving both.
Shape broadcast_shapes(const Shape &a, const Shape &b, const char *op);

// Normalises an axis (negative counts from the end) for a given rank; throws
// NNRT_ERR_INVALID_ARGUMENT when it is out of range.
int32_t normalize_axis(int64_t axis, int32_t rank, const char *op);

}  // namespace nnrt
