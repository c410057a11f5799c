#include "core/dtype.h"

#include "core/error.h"

namespace nnrt {

namespace {
struct DtypeInfo {
  const char *name;
  size_t size;
};
// Indexed by nnrt_dtype; 0 is not a dtype.
const DtypeInfo dtype_table[] = {
    {"invalid", 0}, {"f32", 4}, {"f64", 8}, {"f16", 2}, {"bf16", 2},
    {"i32", 4},     {"i64", 8}, {"u8", 1},  {"bool", 1},
};
constexpr int dtype_count = sizeof dtype_table / sizeof dtype_table[0];
}  // namespace

bool dtype_valid(int dtype) { return dtype > 0 && dtype < dtype_count; }

size_t dtype_size(nnrt_dtype dtype) { return dtype_valid(dtype) ? dtype_table[dtype].size : 0; }

const char *dtype_name(nnrt_dtype dtype) { return dtype_table[dtype_valid(dtype) ? dtype : 0].name; }

bool dtype_is_float(nnrt_dtype dtype) {
  return dtype == NNRT_DTYPE_F32 || dtype == NNRT_DTYPE_F64 || dtype == NNRT_DTYPE_F16 ||
         dtype == NNRT_DTYPE_BF16;
}

bool dtype_is_integer(nnrt_dtype dtype) {
  return dtype == NNRT_DTYPE_I32 || dtype == NNRT_DTYPE_I64 || dtype == NNRT_DTYPE_U8;
}

bool parse_dtype(const std::string &name, nnrt_dtype *out) {
  for (int i = 1; i < dtype_count; ++i) {
    if (name == dtype_table[i].name) {
      *out = static_cast<nnrt_dtype>(i);
      return true;
    }
  }
  return false;
}

void check_dtype_valid(int dtype, const char *what) {
  if (!dtype_valid(dtype)) {
    fail(NNRT_ERR_DTYPE, what, ": expected an nnrt_dtype (1..", dtype_count - 1, "), got ", dtype);
  }
}

}  // namespace nnrt
