// Parameter storage layouts (param_storage.h).
#include "model/param_storage.h"

#include "backend/ops.h"

namespace nnrt::model {

namespace {
constexpr int64_t kAliasingBytes = 1024, kPadBytes = 64, kMinRows = 64;
}  // namespace

Array param_storage(Context &ctx, const Array &value) {
  if (!ctx.device()->host_memory() || value.rank() != 2 || value.dtype() != NNRT_DTYPE_F32) return value;
  const int64_t rows = value.dim(0), cols = value.dim(1), bytes = static_cast<int64_t>(sizeof(float));
  if (rows < kMinRows || cols == 0 || cols * bytes % kAliasingBytes != 0) return value;
  Array padded = ops::zeros(ctx, NNRT_DTYPE_F32, Shape{rows, cols + kPadBytes / bytes});
  Array view = padded.slice(1, 0, cols);
  ops::copy_into(ctx, value, view);
  return view;
}

void write_param(Context &ctx, const Array &param, const void *data, size_t nbytes) {
  if (param.is_contiguous())
    param.copy_from_host(data, nbytes);
  else
    ops::copy_into(ctx, ops::from_host(ctx, param.dtype(), param.shape(), data, nbytes), param);
}

}  // namespace nnrt::model
