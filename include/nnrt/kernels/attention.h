// The row math of NNRT_OP_ATTENTION and NNRT_OP_ATTENTION_BACKWARD, shared by the reference
// backend (the oracle) and the oneDNN backend (which computes the two products of a block of rows
// with its GEMM and the rest with these functions).
//
// A query row's scores s_j (already alpha * q.k_j + mask_j) live in a buffer of Tk elements; only
// the first `visible` are read: a causal row sees the keys up to its own position, and the others
// are minus infinity, so their probability is exactly 0 and they are written as 0.
#pragma once

#include "nnrt/kernels/fmath.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::kernels {

// The sizes of an ATTENTION or ATTENTION_BACKWARD descriptor, read from q [N, H, Tq, D] (input 0),
// k [N, H, Tk, D] (input 1) and v [N, H, Tk, Dv] (input 2), whose ranks the caller has checked;
// the mask, when present, is input `mask_index`.
struct AttentionSizes {
  int64_t n = 0, heads = 0, tq = 0, tk = 0, d = 0, dv = 0;
  int32_t alg = 0;
  double alpha = 1;
  bool masked = false;
};
NNRT_HD AttentionSizes attention_sizes(const nnrt_op_desc &desc, int mask_index) {
  AttentionSizes s;
  s.n = desc.inputs[0].dims[0];
  s.heads = desc.inputs[0].dims[1];
  s.tq = desc.inputs[0].dims[2];
  s.d = desc.inputs[0].dims[3];
  s.tk = desc.inputs[1].dims[2];
  s.dv = desc.inputs[2].dims[3];
  s.alg = desc.attrs.alg;
  s.alpha = desc.attrs.alpha;
  s.masked = desc.n_inputs > mask_index;
  return s;
}

// The keys query row i (of tq, the last tq of tk positions) sees: all tk, or with CAUSAL those up
// to its position i + tk - tq (none when that is negative: more queries than keys).
NNRT_HD int64_t attention_visible(int32_t alg, int64_t i, int64_t tq, int64_t tk) {
  if (alg != NNRT_ATTENTION_CAUSAL) return tk;
  const int64_t last = i + tk - tq;
  return last < 0 ? 0 : last + 1 < tk ? last + 1 : tk;
}

// Scores to probabilities in place: softmax over s[0, visible), 0 for s[visible, tk). A row with
// nothing visible, or whose every visible score is minus infinity, becomes NaN, as SOFTMAX gives
// for a line of minus infinities (exp(-inf - -inf)).
template <class A>
NNRT_HD void attention_softmax_row(A *s, int64_t visible, int64_t tk) {
  A m = -static_cast<A>(INFINITY);
  for (int64_t j = 0; j < visible; ++j) m = s[j] > m || s[j] != s[j] ? s[j] : m;  // NaN propagates
  if (visible == 0) m = static_cast<A>(NAN);
  A sum = 0;
  for (int64_t j = 0; j < visible; ++j) {
    s[j] = k_exp(s[j] - m);
    sum += s[j];
  }
  const A inv = visible == 0 ? static_cast<A>(NAN) : A(1) / sum;
  for (int64_t j = 0; j < visible; ++j) s[j] *= inv;
  for (int64_t j = visible; j < tk; ++j) s[j] = visible == 0 ? static_cast<A>(NAN) : A(0);
}

// From a row's probabilities p and dp_j = dout . v_j, the score gradient in place of dp:
// ds_j = p_j (dp_j - sum over j of p_j dp_j). Only the first `visible` are read and written.
template <class A>
NNRT_HD void attention_score_grad_row(const A *p, A *dp, int64_t visible) {
  A dot = 0;
  for (int64_t j = 0; j < visible; ++j) dot += p[j] * dp[j];
  for (int64_t j = 0; j < visible; ++j) dp[j] = p[j] * (dp[j] - dot);
}

}  // namespace nnrt::kernels
