// Tensor descriptors for the cuDNN backend's unit tests.
#pragma once

#include <cstring>
#include <initializer_list>

#include "nnrt/nnrt_backend.h"

namespace nnrt::cudnn::test {

// A tensor with the given strides (in elements).
inline nnrt_tensor_desc tensor(int32_t dtype, std::initializer_list<int64_t> dims,
                               std::initializer_list<int64_t> strides) {
  nnrt_tensor_desc t;
  std::memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  t.dtype = dtype;
  t.ndim = static_cast<int32_t>(dims.size());
  int i = 0;
  for (int64_t d : dims) t.dims[i++] = d;
  i = 0;
  for (int64_t s : strides) t.strides[i++] = s;
  return t;
}

// A row-major contiguous tensor.
inline nnrt_tensor_desc contiguous(int32_t dtype, std::initializer_list<int64_t> dims) {
  nnrt_tensor_desc t = tensor(dtype, dims, {});
  int64_t s = 1;
  for (int j = t.ndim - 1; j >= 0; --j) {
    t.strides[j] = s;
    s *= t.dims[j];
  }
  return t;
}

}  // namespace nnrt::cudnn::test
