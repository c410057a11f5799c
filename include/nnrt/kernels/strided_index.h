// Element offsets of K strided operands that share dims, from a row-major element index: how a GPU
// thread (which handles one element, not a run) finds its operands. A stride of 0 broadcasts.
//
// "Element index i" is the row-major index over the common dims, the same order the CPU backends
// walk, so RANDOM and DROPOUT draw the same numbers for the same element everywhere.
#pragma once

#include "nnrt/kernels/kernel_common.h"
#include "nnrt/nnrt.h"

namespace nnrt::kernels {

template <int K>
struct StridedIndex {
  int32_t ndim;  // 0..NNRT_MAX_DIMS after compaction
  int64_t dims[NNRT_MAX_DIMS];
  int64_t strides[K][NNRT_MAX_DIMS];
};

// Drops dims of size 1 and merges neighbours that are contiguous with each other in every operand,
// so that the per-element division loop is as short as possible; the row-major order is kept.
// Returns the element count.
template <int K>
NNRT_HD int64_t make_strided_index(int32_t ndim, const int64_t *dims, const int64_t *const *strides,
                                   StridedIndex<K> *out) {
  int64_t count = 1;
  int32_t n = 0;
  for (int32_t d = 0; d < ndim; ++d) {
    count *= dims[d];
    if (dims[d] == 1) continue;
    bool merge = n > 0;
    for (int k = 0; k < K && merge; ++k) merge = strides[k][d] * dims[d] == out->strides[k][n - 1];
    if (merge) {
      out->dims[n - 1] *= dims[d];
      for (int k = 0; k < K; ++k) out->strides[k][n - 1] = strides[k][d];
    } else {
      out->dims[n] = dims[d];
      for (int k = 0; k < K; ++k) out->strides[k][n] = strides[k][d];
      ++n;
    }
  }
  out->ndim = n;
  return count;
}

// The offsets (in elements) of element `index` in each of the K operands.
template <int K>
NNRT_HD void strided_offsets(const StridedIndex<K> &s, int64_t index, int64_t *offsets) {
  for (int k = 0; k < K; ++k) offsets[k] = 0;
  for (int32_t d = s.ndim - 1; d >= 0; --d) {
    int64_t q = index / s.dims[d];
    int64_t r = index - q * s.dims[d];
    for (int k = 0; k < K; ++k) offsets[k] += r * s.strides[k][d];
    index = q;
  }
}

}  // namespace nnrt::kernels
