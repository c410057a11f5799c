#include "backend/array.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/op_recorder.h"
#include "core/checked_math.h"
#include "core/dtype.h"
#include "core/error.h"

namespace nnrt {

Storage::~Storage() {
  if (lent) {
    if (lent_release) lent_release();
  } else if (ptr) {
    device->memory().release(ptr, block_bytes);
  }
}

Array Array::lend(const std::shared_ptr<backend::Device> &device, nnrt_dtype dtype, const Shape &shape,
                  const Strides &strides, void *ptr, size_t bytes, std::function<void()> release) {
  Array a;
  a.dtype_ = dtype;
  a.shape_ = shape;
  a.strides_ = strides;
  auto storage = std::make_shared<Storage>();
  storage->device = device;
  storage->ptr = ptr;
  storage->bytes = storage->block_bytes = bytes;
  storage->lent = true;
  storage->lent_release = std::move(release);
  a.storage_ = std::move(storage);
  return a;
}

Array Array::allocate(const std::shared_ptr<backend::Device> &device, nnrt_dtype dtype, const Shape &shape,
                      bool zero) {
  // Shapes computed from attributes (a convolution's output, a layer's weight) reach here unchecked.
  size_t bytes = checked_bytes(checked_numel(shape, "array size"), dtype_size(dtype), "array size");
  Array a;
  a.dtype_ = dtype;
  a.shape_ = shape;
  a.strides_ = contiguous_strides(shape);
  auto storage = std::make_shared<Storage>();
  storage->device = device;
  storage->bytes = bytes;
  // Empty arrays still get a (small) block, so that every array has a valid address.
  storage->ptr = device->memory().allocate(storage->bytes, &storage->block_bytes);
  a.storage_ = std::move(storage);
  if (zero) {
    device->zero(a.storage_->ptr, a.storage_->bytes);
    if (backend::OpRecorder *r = backend::current_op_recorder()) r->host_wrote(a.storage_);
  }
  return a;
}

size_t Array::nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }

bool Array::is_contiguous() const {
  int64_t expected = 1;
  for (int32_t i = shape_.rank - 1; i >= 0; --i) {
    if (shape_.dims[i] == 0) return true;
    if (shape_.dims[i] != 1 && strides_[i] != expected) return false;
    expected *= shape_.dims[i];
  }
  return true;
}

void *Array::data() const {
  return static_cast<char *>(storage_->ptr) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

Array Array::view(const Shape &shape, const Strides &strides, int64_t offset) const {
  Array v = *this;
  v.shape_ = shape;
  v.strides_ = strides;
  v.offset_ = offset;
  return v;
}

Array Array::transposed(const std::vector<int32_t> &perm) const {
  Shape s;
  Strides st{};
  s.rank = shape_.rank;
  for (int32_t i = 0; i < shape_.rank; ++i) {
    s.dims[i] = shape_.dims[perm[i]];
    st[i] = strides_[perm[i]];
  }
  return view(s, st, offset_);
}

Array Array::slice(int32_t dim, int64_t start, int64_t length) const {
  Shape s = shape_;
  s.dims[dim] = length;
  return view(s, strides_, offset_ + start * strides_[dim]);
}

Array Array::reshaped_view(const Shape &shape) const {
  if (!is_contiguous()) return Array();
  return view(shape, contiguous_strides(shape), offset_);
}

void Array::copy_from_host(const void *src, size_t n) const {
  if (n != nbytes()) fail(NNRT_ERR_INVALID_ARGUMENT, "expected ", nbytes(), " bytes, got ", n);
  if (!is_contiguous()) fail(NNRT_ERR_INTERNAL, "copy_from_host into a non-contiguous view");
  device().copy_from_host_sync(data(), src, n);
  if (backend::OpRecorder *r = backend::current_op_recorder()) r->host_wrote(storage_);
}

void Array::copy_to_host(void *dst, size_t n) const {
  if (n != nbytes()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "the array ", dtype_name(dtype_), to_string(shape_), " holds ", nbytes(),
         " bytes, but the buffer is ", n, " bytes");
  }
  if (n == 0) return;
  if (is_contiguous()) {
    device().copy_to_host_sync(dst, data(), n);
    return;
  }
  // A strided view: bring the span it covers to the host, then gather row-major.
  int64_t lo = 0, hi = 0;
  for (int32_t i = 0; i < shape_.rank; ++i) {
    int64_t reach = (shape_.dims[i] - 1) * strides_[i];
    if (reach < 0) lo += reach; else hi += reach;
  }
  size_t es = dtype_size(dtype_);
  std::vector<char> span(static_cast<size_t>(hi - lo + 1) * es);
  device().copy_to_host_sync(span.data(), static_cast<char *>(data()) + lo * static_cast<int64_t>(es), span.size());
  const char *base = span.data() - lo * static_cast<int64_t>(es);
  char *out = static_cast<char *>(dst);
  std::array<int64_t, NNRT_MAX_DIMS> idx{};
  int64_t count = numel();
  for (int64_t k = 0; k < count; ++k) {
    int64_t off = 0;
    for (int32_t i = 0; i < shape_.rank; ++i) off += idx[i] * strides_[i];
    std::memcpy(out + k * static_cast<int64_t>(es), base + off * static_cast<int64_t>(es), es);
    for (int32_t i = shape_.rank - 1; i >= 0; --i) {
      if (++idx[i] < shape_.dims[i]) break;
      idx[i] = 0;
    }
  }
}

}  // namespace nnrt
