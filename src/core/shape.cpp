#include "core/shape.h"

#include <limits>

#include "core/error.h"

namespace nnrt {

Shape::Shape(std::initializer_list<int64_t> d) {
  if (d.size() > NNRT_MAX_DIMS) fail(NNRT_ERR_INVALID_ARGUMENT, "a shape has at most ", NNRT_MAX_DIMS, " dims");
  for (int64_t v : d) dims[rank++] = v;
}

Shape Shape::of(const int64_t *d, int32_t rank) {
  Shape s;
  s.rank = rank;
  for (int32_t i = 0; i < rank; ++i) s.dims[i] = d[i];
  return s;
}

Shape Shape::of(const std::vector<int64_t> &d) {
  if (d.size() > NNRT_MAX_DIMS) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "a shape has at most ", NNRT_MAX_DIMS, " dims, got ", d.size());
  }
  return of(d.data(), static_cast<int32_t>(d.size()));
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

bool Shape::operator==(const Shape &o) const {
  if (rank != o.rank) return false;
  for (int32_t i = 0; i < rank; ++i)
    if (dims[i] != o.dims[i]) return false;
  return true;
}

std::string to_string(const Shape &s) {
  std::string out = "[";
  for (int32_t i = 0; i < s.rank; ++i) {
    if (i) out += ", ";
    out += std::to_string(s.dims[i]);
  }
  return out + "]";
}

Strides contiguous_strides(const Shape &s) {
  Strides st{};
  int64_t step = 1;
  for (int32_t i = s.rank - 1; i >= 0; --i) {
    st[i] = step;
    step *= s.dims[i] > 0 ? s.dims[i] : 1;
  }
  return st;
}

int64_t check_shape(int32_t rank, const int64_t *dims, const char *what) {
  if (rank < 0 || rank > NNRT_MAX_DIMS) {
    fail(NNRT_ERR_INVALID_ARGUMENT, what, ": expected a rank from 0 to ", NNRT_MAX_DIMS, ", got ", rank);
  }
  if (rank > 0 && !dims) fail(NNRT_ERR_INVALID_ARGUMENT, what, ": shape is NULL but rank is ", rank);
  int64_t n = 1;
  bool empty = false;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) fail(NNRT_ERR_INVALID_ARGUMENT, what, ": dim ", i, " is ", dims[i], "; dims must be >= 0");
    if (dims[i] == 0) empty = true;
    if (!empty && dims[i] > 0 && n > std::numeric_limits<int64_t>::max() / 16 / dims[i]) {
      fail(NNRT_ERR_INVALID_ARGUMENT, what, ": the element count of shape ", to_string(Shape::of(dims, rank)),
           " overflows");
    }
    n *= dims[i];
  }
  return empty ? 0 : n;
}

Shape broadcast_shapes(const Shape &a, const Shape &b, const char *op) {
  Shape out;
  out.rank = a.rank > b.rank ? a.rank : b.rank;
  for (int32_t i = 0; i < out.rank; ++i) {
    int32_t ia = a.rank - out.rank + i, ib = b.rank - out.rank + i;
    int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      fail(NNRT_ERR_SHAPE, op, ": shapes ", to_string(a), " and ", to_string(b),
           " cannot be broadcast together (dim ", i, ": ", da, " vs ", db, ")");
    }
    out.dims[i] = da == 1 ? db : da;
  }
  return out;
}

int32_t normalize_axis(int64_t axis, int32_t rank, const char *op) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    fail(NNRT_ERR_INVALID_ARGUMENT, op, ": axis ", axis, " is out of range for rank ", rank,
         " (expected ", -rank, "..", rank - 1, ")");
  }
  return static_cast<int32_t>(a);
}

}  // namespace nnrt
