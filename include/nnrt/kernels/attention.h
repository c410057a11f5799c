// The row math of NNRT_OP_ATTENTION and NNRT_OP_ATTENTION_BACKWARD, shared by the reference
// backend (the oracle) and the oneDNN backend (which computes the two products of a block of rows
// with its GEMM and the rest with these functions).
//
// A query row's scores s_j (already alpha * q.k_j + mask_j) live in a buffer of Tk elements; only
// the first `visible` are read: a causal row sees the keys up to its own position, and the others
// are minus infinity, so their probability is exactly 0 and they are written as 0.
#pragma once

#include <string.h>

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

// exp(x) made of arithmetic only, no libm call, so that a compiler vectorizes a loop of it (the
// oneDNN backend's softmax rows): x = n ln2 + r with |r| <= ln2 / 2, exp(r) by the degree-6
// polynomial of Cephes' expf, times 2^n from the exponent bits. Within 2 ulp of expf for x in
// [-87.3, 88.3]; 0 below (where expf gives subnormals), +inf above (where expf nears the largest
// float: the softmax rows it serves only take x <= 0), NaN for NaN.
NNRT_HD float k_exp_arithmetic(float x) {
  // Selects, not branches, so that a loop of them vectorizes; NaN is kept out of the arithmetic.
  float c = x < -87.3f ? -87.3f : x;
  c = c > 88.3f ? 88.3f : c;
  c = x == x ? c : 0.f;
  // n = round(c / ln2): adding and subtracting 1.5 * 2^23 rounds to an integer (round to nearest)
  const float n = (c * 1.44269504088896341f + 12582912.f) - 12582912.f;
  const float r = (c - n * 0.693359375f) - n * -2.12194440e-4f;  // ln2 in two parts, exact first
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n, n in -126 .. 127
  float two_n;
  memcpy(&two_n, &bits, sizeof two_n);
  float y = e * two_n;
  y = x < -87.3f ? 0.f : y;
  y = x > 88.3f ? INFINITY : y;
  return x == x ? y : x;
}

// Scores to probabilities in place: softmax over s[0, visible), 0 for s[visible, tk). A row with
// nothing visible, or whose every visible score is minus infinity, becomes NaN, as SOFTMAX gives
// for a line of minus infinities (exp(-inf - -inf)). The maximum and the sum run in 8 interleaved
// lanes (element j in lane j % 8, then the lanes in order), which a compiler turns into vector
// instructions; Exp is the exp of A (libm's by default, k_exp_arithmetic where it vectorizes).
// The running maximum of a softmax row, NaN once any score is NaN: a NaN maximum stays (nothing
// compares greater), and a NaN score replaces it.
template <class A>
NNRT_HD A attention_larger(A v, A m) {
  return v > m || v != v ? v : m;
}

template <class A>
struct LibmExp {
  NNRT_HD A operator()(A x) const { return k_exp(x); }
};
template <class A, class Exp = LibmExp<A>>
NNRT_HD void attention_softmax_row(A *s, int64_t visible, int64_t tk, Exp exp = Exp()) {
  constexpr int kLanes = 8;
  A lane_max[kLanes], lane_sum[kLanes];
  for (int l = 0; l < kLanes; ++l) lane_max[l] = -static_cast<A>(INFINITY);
  int64_t j = 0;
  for (; j + kLanes <= visible; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane_max[l] = attention_larger(s[j + l], lane_max[l]);
  A m = visible == 0 ? static_cast<A>(NAN) : -static_cast<A>(INFINITY);
  for (; j < visible; ++j) m = attention_larger(s[j], m);
  for (int l = 0; l < kLanes; ++l) m = attention_larger(lane_max[l], m);
  for (j = 0; j < visible; ++j) s[j] = exp(s[j] - m);
  for (int l = 0; l < kLanes; ++l) lane_sum[l] = 0;
  for (j = 0; j + kLanes <= visible; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane_sum[l] += s[j + l];
  A sum = 0;
  for (int l = 0; l < kLanes; ++l) sum += lane_sum[l];
  for (; j < visible; ++j) sum += s[j];
  const A inv = visible == 0 ? static_cast<A>(NAN) : A(1) / sum;
  for (j = 0; j < visible; ++j) s[j] *= inv;
  for (j = visible; j < tk; ++j) s[j] = visible == 0 ? static_cast<A>(NAN) : A(0);
}

// From a row's probabilities p and dp_j = dout . v_j, the score gradient in place of dp:
// ds_j = p_j (dp_j - sum over j of p_j dp_j). Only the first `visible` are read and written.
// The sum runs in 8 interleaved lanes, as the softmax row's.
template <class A>
NNRT_HD void attention_score_grad_row(const A *p, A *dp, int64_t visible) {
  constexpr int kLanes = 8;
  A lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= visible; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += p[j + l] * dp[j + l];
  A dot = 0;
  for (int l = 0; l < kLanes; ++l) dot += lane[l];
  for (; j < visible; ++j) dot += p[j] * dp[j];
  for (j = 0; j < visible; ++j) dp[j] = p[j] * (dp[j] - dot);
}

}  // namespace nnrt::kernels
