#include "errors.h"

#include <stdarg.h>
#include <stdio.h>

#include "nnrt/kernels/op_manifest.h"

namespace nnrt::reference {

void fail(nnrt_status status, const char *format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  throw OpError(status, buffer);
}


const char *op_kind_name(int32_t kind) { return kernels::op_kind_info(kind).upper_name; }

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
