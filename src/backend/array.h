// Arrays: a dtype, a shape and strides over a reference-counted storage on one device. Reshapes,
// transposes and slices are views that share the storage.
#pragma once

#include <functional>
#include <memory>

#include "backend/device.h"
#include "core/shape.h"

namespace nnrt {

// A block of device memory, returned to its device's cache when the last array lets go. It keeps
// the device (and so the backend instance and thread pool) alive. Memory lent by the caller
// (nnrt_array_wrap_host) is not the cache's: `lent_release` hands it back instead.
struct Storage {
  std::shared_ptr<backend::Device> device;
  void *ptr = nullptr;
  size_t bytes = 0;        // requested
  size_t block_bytes = 0;  // as the cache handed it out
  std::function<void()> lent_release;  // set for lent memory (may do nothing)
  bool lent = false;
  ~Storage();
};

class Array {
 public:
  Array() = default;

  // An array over `bytes` bytes of memory the caller lends at `ptr` (host memory, on a device whose
  // memory is host memory), laid out by `strides`; `release` runs when the last array lets go.
  static Array lend(const std::shared_ptr<backend::Device> &device, nnrt_dtype dtype, const Shape &shape,
                    const Strides &strides, void *ptr, size_t bytes, std::function<void()> release);

  // Uninitialised (zeroed when `zero`) contiguous array on `device`.
  static Array allocate(const std::shared_ptr<backend::Device> &device, nnrt_dtype dtype, const Shape &shape,
                        bool zero = false);

  nnrt_dtype dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  const Strides &strides() const { return strides_; }
  int32_t rank() const { return shape_.rank; }
  int64_t dim(int32_t i) const { return shape_.dims[i]; }
  int64_t numel() const { return shape_.numel(); }
  size_t nbytes() const;
  int64_t offset() const { return offset_; }  // in elements, from the storage's start
  bool defined() const { return storage_ != nullptr; }
  bool is_contiguous() const;

  backend::Device &device() const { return *storage_->device; }
  const std::shared_ptr<backend::Device> &device_ptr() const { return storage_->device; }
  const std::shared_ptr<Storage> &storage() const { return storage_; }
  void *data() const;  // the device address of element 0

  // Views sharing the storage.
  Array view(const Shape &shape, const Strides &strides, int64_t offset) const;
  Array transposed(const std::vector<int32_t> &perm) const;  // perm must be a permutation
  Array slice(int32_t dim, int64_t start, int64_t length) const;
  // A view with a new shape when the layout allows it (contiguous), else an empty Array.
  Array reshaped_view(const Shape &shape) const;

  // Host transfers of the whole array, row-major. `nbytes` must equal nbytes().
  void copy_from_host(const void *src, size_t nbytes) const;  // array must be contiguous
  void copy_to_host(void *dst, size_t nbytes) const;          // any layout

 private:
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;
  nnrt_dtype dtype_ = NNRT_DTYPE_F32;
  Shape shape_;
  Strides strides_{};
};

}  // namespace nnrt
