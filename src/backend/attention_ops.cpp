// ops::attention and ops::attention_backward: NNRT_OP_ATTENTION where the context's device takes it,
// else the same math composed of the device's own ops.
//
// Why the composed path: a device that does not take the fused kind (the cuDNN backend in this
// version; the oneDNN backend for bf16 and f16) would otherwise send it to the reference backend,
// staged through host memory, which is far slower than the batched matmuls and softmax the device
// runs itself. The composed path keeps a [Tq, Tk] score array per head while it runs, as attention
// did before it was one op; the backward pass computes the probabilities again, so nothing of that
// size is kept between the passes either way.
#include <cmath>
#include <limits>
#include <vector>

#include "backend/dispatch.h"
#include "backend/op_checks.h"
#include "backend/ops.h"
#include "core/dtype.h"
#include "core/error.h"

namespace nnrt::ops {

using backend::OpCall;

namespace {

// [N, H, T, D] as a view of a new contiguous [N, T, H, D] array.
Array empty_heads(Context &ctx, nnrt_dtype dtype, int64_t n, int64_t heads, int64_t t, int64_t d) {
  return transpose(empty(ctx, dtype, Shape{n, t, heads, d}), {0, 2, 1, 3});
}

// Checks q, k, v and the mask, and returns the mask's broadcast shape [N, H, Tq, Tk].
Shape check_attention(const Array &q, const Array &k, const Array &v, const Array *mask, const AttentionParams &p,
                      const char *what) {
  require_float(q, what, "q");
  require_same_dtype(q, k, what);
  require_same_dtype(q, v, what);
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4 || k.dim(0) != q.dim(0) || k.dim(1) != q.dim(1) ||
      k.dim(3) != q.dim(3) || v.dim(0) != q.dim(0) || v.dim(1) != q.dim(1) || v.dim(2) != k.dim(2)) {
    fail(NNRT_ERR_SHAPE, what, ": expected q [N, H, Tq, D], k [N, H, Tk, D] and v [N, H, Tk, Dv], got ",
         to_string(q.shape()), ", ", to_string(k.shape()), " and ", to_string(v.shape()));
  }
  if (!std::isfinite(p.scale)) fail(NNRT_ERR_INVALID_ARGUMENT, what, ": the scale must be finite, got ", p.scale);
  const Shape scores{q.dim(0), q.dim(1), q.dim(2), k.dim(2)};
  if (mask) {
    if (mask->dtype() != q.dtype()) {
      fail(NNRT_ERR_DTYPE, what, ": the mask must have q's dtype ", dtype_name(q.dtype()), ", got ",
           dtype_name(mask->dtype()));
    }
    bool fits = mask->rank() <= 4;
    for (int32_t i = 0; fits && i < mask->rank(); ++i) {
      const int64_t m = mask->dim(i), s = scores.dims[4 - mask->rank() + i];
      fits = m == s || m == 1;
    }
    if (!fits) {
      fail(NNRT_ERR_SHAPE, what, ": the mask ", to_string(mask->shape()), " does not broadcast to the scores ",
           to_string(scores));
    }
  }
  return scores;
}

int32_t attention_alg(const AttentionParams &p) { return p.causal ? NNRT_ATTENTION_CAUSAL : NNRT_ATTENTION_FULL; }

// The probabilities softmax(scale q k^T + mask) [N, H, Tq, Tk] of the composed path; a causal mask
// hides the keys after each query's position (the queries being the last Tq of Tk positions).
Array composed_probabilities(Context &ctx, const Array &q, const Array &k, const Array *mask, const AttentionParams &p) {
  Array scores = scale(ctx, matmul(ctx, q, transpose(k, {0, 1, 3, 2})), p.scale);
  if (mask) scores = add(ctx, scores, *mask);
  if (p.causal) {
    const int64_t tq = q.dim(2), tk = k.dim(2);
    std::vector<double> hidden(static_cast<size_t>(tq * tk), 0.0);
    for (int64_t i = 0; i < tq; ++i)
      for (int64_t j = i + tk - tq + 1; j < tk; ++j)
        if (j >= 0) hidden[static_cast<size_t>(i * tk + j)] = -std::numeric_limits<double>::infinity();
    Array m = from_host(ctx, NNRT_DTYPE_F64, Shape{tq, tk}, hidden.data(), hidden.size() * sizeof(double));
    scores = add(ctx, scores, q.dtype() == NNRT_DTYPE_F64 ? m : cast(ctx, m, q.dtype()));
  }
  return softmax(ctx, NNRT_SOFTMAX, scores, 3);
}

}  // namespace

Array attention(Context &ctx, const Array &q, const Array &k, const Array &v, const Array *mask,
                const AttentionParams &p) {
  const Shape scores = check_attention(q, k, v, mask, p, "attention");
  Array o = empty_heads(ctx, q.dtype(), q.dim(0), q.dim(1), q.dim(2), v.dim(3));
  OpCall call(NNRT_OP_ATTENTION, attention_alg(p));
  call.attrs().alpha = p.scale;
  call.in(q).in(k).in(v);
  if (mask) call.in_broadcast(*mask, scores);
  call.out(o);
  if (!call.device_supports(ctx)) return matmul(ctx, composed_probabilities(ctx, q, k, mask, p), v);
  call.run(ctx);
  return o;
}

AttentionGrads attention_backward(Context &ctx, const Array &q, const Array &k, const Array &v, const Array &dout,
                                  const Array *mask, const AttentionParams &p) {
  const Shape scores = check_attention(q, k, v, mask, p, "attention backward");
  require_same_dtype(q, dout, "attention backward");
  const Shape o{q.dim(0), q.dim(1), q.dim(2), v.dim(3)};
  if (dout.shape() != o) {
    fail(NNRT_ERR_SHAPE, "attention backward: the gradient ", to_string(dout.shape()), " must have the output's shape ",
         to_string(o));
  }
  AttentionGrads g{empty_heads(ctx, q.dtype(), q.dim(0), q.dim(1), q.dim(2), q.dim(3)),
                   empty_heads(ctx, q.dtype(), q.dim(0), q.dim(1), k.dim(2), k.dim(3)),
                   empty_heads(ctx, q.dtype(), q.dim(0), q.dim(1), k.dim(2), v.dim(3))};
  OpCall call(NNRT_OP_ATTENTION_BACKWARD, attention_alg(p));
  call.attrs().alpha = p.scale;
  call.in(q).in(k).in(v).in(dout);
  if (mask) call.in_broadcast(*mask, scores);
  call.out(g.dq).out(g.dk).out(g.dv);
  if (!call.device_supports(ctx)) {
    // o = p v, p = softmax(s), s = scale q k^T + mask
    Array pr = composed_probabilities(ctx, q, k, mask, p);
    Array ds = softmax_backward(ctx, NNRT_SOFTMAX, matmul(ctx, dout, transpose(v, {0, 1, 3, 2})), pr, 3);
    return {scale(ctx, matmul(ctx, ds, k), p.scale), scale(ctx, matmul(ctx, transpose(ds, {0, 1, 3, 2}), q), p.scale),
            matmul(ctx, transpose(pr, {0, 1, 3, 2}), dout)};
  }
  call.run(ctx);
  return g;
}

}  // namespace nnrt::ops
