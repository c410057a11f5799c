// Where a parameter's values live: the layout of its storage, which the model picks when it makes or
// replaces a parameter. Layers, the optimizer and everything at the model's edges (checkpoints,
// get_param/set_param, ONNX) read and write parameters through their strides, so the layout is
// invisible outside; copies of a parameter (gradients, optimizer state, checkpoints) are dense.
#pragma once

#include "backend/array.h"
#include "backend/context.h"

namespace nnrt::model {

// `value` itself, or, on a host-memory backend, a weight matrix whose rows are a multiple of 1 KB
// long copied into storage whose rows are 64 bytes longer (the extra bytes zero), seen through a
// view of value's shape.
//
// Why: a dense layer's backward-data product dY x W reads W [out, in] row by row, and with rows a
// multiple of 1 KB apart oneDNN 2.6's gemm loads down a column into one cache set (43 GFLOP/s
// against 92 on AVX2 at 1 thread for 64x1024 x 1024x1024). The oneDNN plugin then copies W into
// padded rows on every call (its measured candidate), which costs 0.34-0.44 ms of a 7 ms MLP
// training step at 2 threads when W is not in cache; stored padded, W is read where it lies.
// Only matrices of at least 64 rows: on fewer the copy was measured slower, not faster.
Array param_storage(Context &ctx, const Array &value);

// A new parameter of `shape` in the layout param_storage gives, its values not yet written (write
// them with write_param or ops::copy_into).
Array new_param(Context &ctx, nnrt_dtype dtype, const Shape &shape);

// Writes host values (row-major, param's dtype, nbytes == param.nbytes()) into a parameter,
// whatever its storage layout.
void write_param(Context &ctx, const Array &param, const void *data, size_t nbytes);

}  // namespace nnrt::model
