// Where oneDNN's kernels treat NaN and infinities differently from nnrt's (max pooling skips NaN,
// softmax turns NaN rows into zeros, exp(NaN) is +inf), the ops scan their inputs for such values
// first and take an exact path when they find any: a cheap read on the fast path, and the exact
// answer for the rare inputs of a diverging network.
#pragma once

#include <cstdint>

#include "nnrt/nnrt_backend.h"

namespace nnrt::onednn {

enum SpecialValue : uint32_t { kNaN = 1u, kPosInf = 2u, kNegInf = 4u };

// The special values (a SpecialValue mask) among an F32 or BF16 tensor's elements; every element
// of the memory span the tensor covers is read (a special value in a gap only costs the exact
// path). Runs on the calling thread's OpenMP team for large tensors.
uint32_t find_special_values(const void *data, const nnrt_tensor_desc &t);

// The elements from a tensor's element 0 to its last one, gaps included (strides are >= 0).
int64_t span_elements(const nnrt_tensor_desc &t);

// Element access for the exact paths (F32 or BF16; stores round to nearest even, with nnrt's
// shared conversion).
float load_float(const void *base, int32_t dtype, int64_t offset);
void store_float(void *base, int32_t dtype, int64_t offset, float v);

}  // namespace nnrt::onednn
