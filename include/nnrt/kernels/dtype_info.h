// The names and element sizes of nnrt_dtype values, in one table for the core, the reference
// backend, plugins and tests (nnrt_backend.h defines the values but no table).
#pragma once

#include <cstddef>
#include <cstdint>

#include "nnrt/nnrt_backend.h"

namespace nnrt::kernels {

struct DtypeInfo {
  const char *name;
  size_t size;
};

// Indexed by nnrt_dtype; entry 0 stands for every value that is not a dtype.
inline constexpr DtypeInfo kDtypeTable[] = {
    {"invalid", 0}, {"f32", 4}, {"f64", 8}, {"f16", 2}, {"bf16", 2},
    {"i32", 4},     {"i64", 8}, {"u8", 1},  {"bool", 1}, {"i8", 1},
};
inline constexpr int kDtypeCount = sizeof kDtypeTable / sizeof kDtypeTable[0];

constexpr bool dtype_valid(int32_t dtype) { return dtype > 0 && dtype < kDtypeCount; }
// Bytes per element; 0 for a value that is not a dtype.
constexpr size_t dtype_size(int32_t dtype) { return kDtypeTable[dtype_valid(dtype) ? dtype : 0].size; }
// "f32", "bf16", ...; "invalid" for a value that is not a dtype.
constexpr const char *dtype_name(int32_t dtype) { return kDtypeTable[dtype_valid(dtype) ? dtype : 0].name; }

}  // namespace nnrt::kernels
