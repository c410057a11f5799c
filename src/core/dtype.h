// Element types: sizes, names, classes.
#pragma once

#include <cstddef>
#include <string>

#include "nnrt/nnrt.h"

namespace nnrt {

bool dtype_valid(int dtype);
size_t dtype_size(nnrt_dtype dtype);  // 0 for an invalid value
const char *dtype_name(nnrt_dtype dtype);  // "f32"; "invalid" for an invalid value
bool dtype_is_float(nnrt_dtype dtype);      // f32, f64, f16, bf16
bool dtype_is_integer(nnrt_dtype dtype);    // i32, i64, u8 (not bool)

// Parses "f32", "f64", "f16", "bf16", "i32", "i64", "u8", "bool"; false for anything else.
bool parse_dtype(const std::string &name, nnrt_dtype *out);

// Throws NNRT_ERR_DTYPE naming `what` unless dtype is a valid nnrt_dtype.
void check_dtype_valid(int dtype, const char *what);

}  // namespace nnrt
