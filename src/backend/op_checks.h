// Argument checks that the files of ops.h share (ops.cpp, attention_ops.cpp): each fails with a
// message that names the op and says what was expected and what was given.
#pragma once

#include "backend/array.h"
#include "core/dtype.h"
#include "core/error.h"

namespace nnrt::ops {

inline void require_float(const Array &x, const char *op, const char *what) {
  if (!dtype_is_float(x.dtype())) {
    fail(NNRT_ERR_DTYPE, op, ": ", what, " must be a float array (f32, f64, f16, bf16), got ", dtype_name(x.dtype()));
  }
}

inline void require_same_dtype(const Array &a, const Array &b, const char *op) {
  if (a.dtype() != b.dtype()) {
    fail(NNRT_ERR_DTYPE, op, ": inputs have different dtypes (", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()),
         "); cast one first");
  }
}

}  // namespace nnrt::ops
