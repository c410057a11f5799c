// Iteration over strided tensors of the same dims: the engine of every elementwise op.
//
// A StridedLoop walks K operands (say y, a, b) in the row-major order of their common dims. It first
// drops dims of size 1 and merges neighbouring dims that are contiguous with each other in every
// operand, so a contiguous (or uniformly broadcast) tensor becomes one long run and the inner loop
// is a plain vectorizable loop. Merging keeps the row-major order, so "element index i" (used by
// RANDOM and DROPOUT) means the same before and after.
#pragma once

#include <stdint.h>
#include <stdlib.h>

#include <algorithm>

#include "nnrt/nnrt_backend.h"

namespace nnrt::reference {

template <int K>
struct StridedLoop {
  int ndim = 1;  // at least 1 after make_strided_loop
  int64_t count = 0;
  int64_t dims[NNRT_MAX_DIMS] = {1};
  int64_t strides[K][NNRT_MAX_DIMS] = {};

  int64_t inner_stride(int k) const { return strides[k][ndim - 1]; }
};

// dims: the common dims; strides[k]: operand k's strides (may be 0 or negative).
template <int K>
StridedLoop<K> make_strided_loop(int ndim, const int64_t *dims, const int64_t *const (&strides)[K]) {
  StridedLoop<K> loop;
  loop.count = 1;
  int out = 0;
  for (int d = 0; d < ndim; ++d) {
    loop.count *= dims[d];
    if (dims[d] == 1) continue;
    bool merge = out > 0;
    for (int k = 0; k < K && merge; ++k) merge = strides[k][d] * dims[d] == loop.strides[k][out - 1];
    if (merge) {
      loop.dims[out - 1] *= dims[d];
      for (int k = 0; k < K; ++k) loop.strides[k][out - 1] = strides[k][d];
    } else {
      loop.dims[out] = dims[d];
      for (int k = 0; k < K; ++k) loop.strides[k][out] = strides[k][d];
      ++out;
    }
  }
  if (out == 0) {  // a scalar, or all dims of size 1
    loop.dims[0] = 1;
    for (int k = 0; k < K; ++k) loop.strides[k][0] = 0;
    out = 1;
  }
  loop.ndim = out;
  return loop;
}

// Calls body(offsets, n) for the runs along the innermost dim that make up elements [begin, end)
// in row-major order; offsets[k] is operand k's element offset of the run's first element, and
// the run advances by loop.inner_stride(k).
template <int K, class Body>
void for_each_run(const StridedLoop<K> &loop, int64_t begin, int64_t end, Body &&body) {
  if (begin >= end) return;
  const int last = loop.ndim - 1;
  const int64_t inner = loop.dims[last];
  int64_t index[NNRT_MAX_DIMS];
  int64_t row = begin / inner, col = begin % inner;
  for (int d = last - 1; d >= 0; --d) {
    index[d] = row % loop.dims[d];
    row /= loop.dims[d];
  }
  int64_t row_offset[K];
  for (int k = 0; k < K; ++k) {
    row_offset[k] = 0;
    for (int d = 0; d < last; ++d) row_offset[k] += index[d] * loop.strides[k][d];
  }
  int64_t remaining = end - begin;
  while (true) {
    int64_t n = inner - col < remaining ? inner - col : remaining;
    int64_t offsets[K];
    for (int k = 0; k < K; ++k) offsets[k] = row_offset[k] + col * loop.strides[k][last];
    body(static_cast<const int64_t *>(offsets), n);
    remaining -= n;
    if (remaining == 0) return;
    col = 0;
    for (int d = last - 1; d >= 0; --d) {  // odometer step to the next row
      for (int k = 0; k < K; ++k) row_offset[k] += loop.strides[k][d];
      if (++index[d] < loop.dims[d]) break;
      for (int k = 0; k < K; ++k) row_offset[k] -= loop.dims[d] * loop.strides[k][d];
      index[d] = 0;
    }
  }
}

// A StridedLoop over tensors that share the dims of the first.
template <int K>
StridedLoop<K> loop_over(const nnrt_tensor_desc *const (&tensors)[K]) {
  const int64_t *strides[K];
  for (int k = 0; k < K; ++k) strides[k] = tensors[k]->strides;
  return make_strided_loop<K>(tensors[0]->ndim, tensors[0]->dims, strides);
}

// The same, walking the first tensor in memory order (its dims sorted by decreasing stride) rather
// than row-major, for maps whose elements are independent of each other and of their index (unary,
// unary backward, binary, copy): a channels-last image walked row-major has no contiguous run, and
// a relu gradient over one ran 8x slower than over the same image in NCHW.
template <int K>
StridedLoop<K> memory_order_loop_over(const nnrt_tensor_desc *const (&tensors)[K]) {
  const int n = tensors[0]->ndim;
  int order[NNRT_MAX_DIMS];
  for (int d = 0; d < n; ++d) order[d] = d;
  const int64_t *first = tensors[0]->strides;
  std::stable_sort(order, order + n, [&](int a, int b) { return std::llabs(first[a]) > std::llabs(first[b]); });
  int64_t dims[NNRT_MAX_DIMS], permuted[K][NNRT_MAX_DIMS];
  const int64_t *strides[K];
  for (int d = 0; d < n; ++d) dims[d] = tensors[0]->dims[order[d]];
  for (int k = 0; k < K; ++k) {
    for (int d = 0; d < n; ++d) permuted[k][d] = tensors[k]->strides[order[d]];
    strides[k] = permuted[k];
  }
  return make_strided_loop<K>(n, dims, strides);
}

// The elementwise grain: chunks smaller than this are not worth a thread.
constexpr int64_t kCheapGrain = 1 << 15;      // loads, stores, adds
constexpr int64_t kExpensiveGrain = 1 << 12;  // exp, erf, tanh, philox

}  // namespace nnrt::reference
