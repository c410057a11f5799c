#include "core/dtype.h"

#include "core/error.h"
#include "nnrt/kernels/dtype_info.h"

namespace nnrt {

using kernels::kDtypeCount;
using kernels::kDtypeTable;

bool dtype_valid(int dtype) { return kernels::dtype_valid(dtype); }

size_t dtype_size(nnrt_dtype dtype) { return kernels::dtype_size(dtype); }

const char *dtype_name(nnrt_dtype dtype) { return kernels::dtype_name(dtype); }

bool dtype_is_float(nnrt_dtype dtype) {
  return dtype == NNRT_DTYPE_F32 || dtype == NNRT_DTYPE_F64 || dtype == NNRT_DTYPE_F16 ||
         dtype == NNRT_DTYPE_BF16;
}

bool dtype_is_integer(nnrt_dtype dtype) {
  return dtype == NNRT_DTYPE_I32 || dtype == NNRT_DTYPE_I64 || dtype == NNRT_DTYPE_U8;
}

bool parse_dtype(const std::string &name, nnrt_dtype *out) {
  for (int i = 1; i < kDtypeCount; ++i) {
    if (name == kDtypeTable[i].name) {
      *out = static_cast<nnrt_dtype>(i);
      return true;
    }
  }
  return false;
}

void check_dtype_valid(int dtype, const char *what) {
  if (!dtype_valid(dtype)) {
    fail(NNRT_ERR_DTYPE, what, ": expected an nnrt_dtype (1..", kDtypeCount - 1, "), got ", dtype);
  }
}

}  // namespace nnrt
