// The layout of per-line kernels (kernels.h, Lines) from a descriptor: used by reductions, softmax
// and batch normalization.
#pragma once

#include <cstring>

#include "kernels.h"

namespace nnrt::cudnn {

// Splits the dims of `shape` into those in `line_mask` (the line) and the others (the outer walk);
// operand k moves with strides[k] (NULL: the operand stays put along the line, as a reduction's y).
template <int K>
inline gpu::Lines<K> make_lines(const nnrt_tensor_desc &shape, uint32_t line_mask,
                                const int64_t *const (&strides)[K], const bool (&moves_along_line)[K]) {
  gpu::Lines<K> l;
  std::memset(&l.outer, 0, sizeof l.outer);
  std::memset(&l.inner, 0, sizeof l.inner);
  int64_t outer_dims[NNRT_MAX_DIMS], inner_dims[NNRT_MAX_DIMS];
  int64_t outer_strides[K][NNRT_MAX_DIMS], inner_strides[K][NNRT_MAX_DIMS];
  int no = 0, ni = 0;
  for (int d = 0; d < shape.ndim; ++d) {
    if (line_mask & (1u << d)) {
      inner_dims[ni] = shape.dims[d];
      for (int k = 0; k < K; ++k) inner_strides[k][ni] = moves_along_line[k] ? strides[k][d] : 0;
      ++ni;
    } else {
      outer_dims[no] = shape.dims[d];
      for (int k = 0; k < K; ++k) outer_strides[k][no] = strides[k][d];
      ++no;
    }
  }
  const int64_t *os[K], *is[K];
  for (int k = 0; k < K; ++k) {
    os[k] = outer_strides[k];
    is[k] = inner_strides[k];
  }
  l.count = kernels::make_strided_index<K>(no, outer_dims, os, &l.outer);
  l.length = kernels::make_strided_index<K>(ni, inner_dims, is, &l.inner);
  return l;
}

}  // namespace nnrt::cudnn
