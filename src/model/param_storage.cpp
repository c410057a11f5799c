// Parameter storage layouts (param_storage.h).
#include "model/param_storage.h"

#include "backend/ops.h"

namespace nnrt::model {

namespace {
constexpr int64_t kAliasingBytes = 1024, kPadBytes = 64, kMinRows = 64;

// Whether a parameter of this shape is stored padded (param_storage.h says why).
bool padded(Context &ctx, nnrt_dtype dtype, const Shape &shape) {
  if (!ctx.device()->host_memory() || shape.rank != 2 || dtype != NNRT_DTYPE_F32) return false;
  const int64_t rows = shape.dims[0], cols = shape.dims[1], bytes = static_cast<int64_t>(sizeof(float));
  return rows >= kMinRows && cols > 0 && cols * bytes % kAliasingBytes == 0;
}
}  // namespace

Array new_param(Context &ctx, nnrt_dtype dtype, const Shape &shape) {
  if (!padded(ctx, dtype, shape)) return Array::allocate(ctx.device(), dtype, shape);
  const int64_t rows = shape.dims[0], cols = shape.dims[1];
  Array storage = ops::zeros(ctx, NNRT_DTYPE_F32, Shape{rows, cols + kPadBytes / static_cast<int64_t>(sizeof(float))});
  return storage.slice(1, 0, cols);
}

Array param_storage(Context &ctx, const Array &value) {
  if (!padded(ctx, value.dtype(), value.shape())) return value;
  Array stored = new_param(ctx, value.dtype(), value.shape());
  ops::copy_into(ctx, value, stored);
  return stored;
}

void write_param(Context &ctx, const Array &param, const void *data, size_t nbytes) {
  if (param.is_contiguous()) {
    param.copy_from_host(data, nbytes);
  } else if (ctx.device()->host_memory()) {
    // The caller's bytes lent as an array (only read): no dense copy that would stay in the cache.
    Array source = Array::lend(ctx.device(), param.dtype(), param.shape(), contiguous_strides(param.shape()),
                               const_cast<void *>(data), nbytes, [] {});
    ops::copy_into(ctx, source, param);
  } else {
    ops::copy_into(ctx, ops::from_host(ctx, param.dtype(), param.shape(), data, nbytes), param);
  }
}

}  // namespace nnrt::model
