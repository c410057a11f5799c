// Checked arithmetic for sizes that come from outside (shapes, attributes, layer widths, file
// headers): a product or sum that does not fit is an error with a message, never a wrapped value
// that a later allocation or loop would trust.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/error.h"
#include "core/shape.h"

namespace nnrt {

// a * b, a + b and a - b, or NNRT_ERR_INVALID_ARGUMENT naming `what` when the result overflows int64.
inline int64_t checked_mul(int64_t a, int64_t b, const char *what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(NNRT_ERR_INVALID_ARGUMENT, what, ": ", a, " * ", b, " overflows a 64-bit size");
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const char *what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(NNRT_ERR_INVALID_ARGUMENT, what, ": ", a, " + ", b, " overflows a 64-bit size");
  return r;
}

// A value that must fit the 32-bit fields of the plugin ABI (strides, padding, kernel sizes).
inline int32_t checked_int32(int64_t v, const char *what) {
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, what, ": ", v, " does not fit in 32 bits (at most ", std::numeric_limits<int32_t>::max(), ")");
  }
  return static_cast<int32_t>(v);
}

// The element count of a shape, or NNRT_ERR_INVALID_ARGUMENT when it overflows int64 (an empty
// shape counts 0 whatever its other dims).
inline int64_t checked_numel(const Shape &s, const char *what) {
  int64_t n = 1;
  for (int32_t i = 0; i < s.rank; ++i)
    if (s.dims[i] == 0) return 0;
  for (int32_t i = 0; i < s.rank; ++i) {
    if (s.dims[i] < 0) fail(NNRT_ERR_INVALID_ARGUMENT, what, ": dim ", i, " of ", to_string(s), " is negative");
    if (__builtin_mul_overflow(n, s.dims[i], &n)) {
      fail(NNRT_ERR_INVALID_ARGUMENT, what, ": the element count of ", to_string(s), " overflows a 64-bit size");
    }
  }
  return n;
}

// The bytes of `numel` elements of `element_size` bytes, or NNRT_ERR_INVALID_ARGUMENT on overflow.
inline size_t checked_bytes(int64_t numel, size_t element_size, const char *what) {
  size_t r;
  if (numel < 0 || __builtin_mul_overflow(static_cast<size_t>(numel), element_size, &r)) {
    fail(NNRT_ERR_INVALID_ARGUMENT, what, ": ", numel, " elements of ", element_size, " bytes overflow a byte count");
  }
  return r;
}

}  // namespace nnrt
