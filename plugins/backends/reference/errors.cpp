#include "errors.h"

#include <stdarg.h>
#include <stdio.h>

namespace nnrt::reference {

void fail(nnrt_status status, const char *format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  throw OpError(status, buffer);
}


const char *op_kind_name(int32_t kind) {
  static const char *const names[] = {
      "?",
      "COPY",
      "FILL",
      "RANDOM",
      "UNARY",
      "UNARY_BACKWARD",
      "BINARY",
      "REDUCE",
      "ARGREDUCE",
      "MATMUL",
      "SOFTMAX",
      "SOFTMAX_BACKWARD",
      "CONV2D",
      "CONV2D_BACKWARD_DATA",
      "CONV2D_BACKWARD_WEIGHTS",
      "POOL2D",
      "POOL2D_BACKWARD",
      "BATCHNORM",
      "BATCHNORM_BACKWARD",
      "LOSS",
      "LOSS_BACKWARD",
      "DROPOUT",
      "DROPOUT_BACKWARD",
      "GATHER",
      "SCATTER_ADD",
      "OPTIMIZER_UPDATE",
  };
  static_assert(sizeof names / sizeof names[0] == NNRT_OP_KIND_COUNT, "one name per op kind");
  return kind > 0 && kind < NNRT_OP_KIND_COUNT ? names[kind] : "unknown op kind";
}

std::string dims_string(const int64_t *dims, int ndim) {
  std::string s = "[";
  for (int d = 0; d < ndim; ++d) {
    if (d) s += ", ";
    s += std::to_string(dims[d]);
  }
  return s + "]";
}

std::string dims_string(const nnrt_tensor_desc &t) {
  int ndim = t.ndim < 0 ? 0 : (t.ndim > NNRT_MAX_DIMS ? NNRT_MAX_DIMS : t.ndim);
  return dims_string(t.dims, ndim);
}

std::string tensor_string(const nnrt_tensor_desc &t) {
  int ndim = t.ndim < 0 ? 0 : (t.ndim > NNRT_MAX_DIMS ? NNRT_MAX_DIMS : t.ndim);
  return std::string(dtype_name(t.dtype)) + " " + dims_string(t.dims, ndim) + " strides " +
         dims_string(t.strides, ndim);
}

}  // namespace nnrt::reference
