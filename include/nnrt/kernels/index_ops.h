// The element rules of the index ops (ARGREDUCE, GATHER, SCATTER_ADD), shared by the CPU and GPU
// backends so that both pick the same index and refuse the same indices.
#pragma once

#include "nnrt/kernels/kernel_common.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::kernels {

// NaN for the float compute types; never for the integer ones.
template <class C>
NNRT_HD bool arg_is_nan(C) {
  return false;
}
NNRT_HD bool arg_is_nan(float v) { return v != v; }
NNRT_HD bool arg_is_nan(double v) { return v != v; }

// ARGREDUCE, scanning a line in index order: true when v should replace the best so far. The first
// index wins ties and NaN counts as the largest value: ARG_MAX stops at the first NaN, ARG_MIN
// skips NaNs unless the whole line is NaN. For integers the rule is the plain comparison.
template <class C>
NNRT_HD bool arg_beats(int alg, C v, C best) {
  const bool v_nan = arg_is_nan(v), best_nan = arg_is_nan(best);
  if (alg == NNRT_ARG_MAX) return !best_nan && (v_nan || v > best);
  return best_nan ? !v_nan : v < best;
}

// GATHER and SCATTER_ADD: an index names a row of a table with `rows` rows.
NNRT_HD bool index_in_rows(int64_t v, int64_t rows) { return v >= 0 && v < rows; }

}  // namespace nnrt::kernels
