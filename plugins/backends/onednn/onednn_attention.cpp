// NNRT_OP_ATTENTION and NNRT_OP_ATTENTION_BACKWARD on oneDNN's GEMM (dnnl_sgemm), f32.
//
// The reference backend's algorithm (plugins/backends/reference/op_attention.cpp) with blocks of
// query rows in place of single rows: for a block of up to kBlock rows of one head, one GEMM makes
// the block's scores against the keys it sees (a causal block stops at its last row's position),
// nnrt/kernels/attention.h turns each row into probabilities (or, backward, into the score
// gradient), and GEMMs make the outputs. A thread's scratch is one or two [kBlock, Tk] blocks, so
// memory grows with the sequence, never with its square, and no [Tq, Tk] matrix is ever made.
//
// Forward runs the blocks of every head in parallel; backward runs each head on one thread, since
// all its blocks add into the same dk and dv (in place, in the output: GEMMs with beta 1 after the
// head's rows are zeroed). A GEMM inside the parallel loop runs on its calling thread (oneDNN's
// GEMM does not open a team inside a parallel region).
//
// Taken: f32 operands whose last dim is dense (stride 1) and whose rows are at least a row apart,
// any batch and head strides (the head views of a [N, T, H * D] product), a mask of any strides.
// Refused (the reference runs them): other dtypes, other layouts, and causal attention with more
// queries than keys (rows that see no key, NaN over every key, are the reference's to make).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "onednn_common.h"
#include "nnrt/kernels/attention.h"

namespace nnrt::onednn {
namespace {

constexpr int64_t kBlock = 128;  // query rows per block: [64, Tk] f32 scores stay in L2 up to Tk ~ 4096

// A [N, H, T, C] operand as GEMM sees it: rows of C dense floats, `ld` apart.
struct Operand {
  int64_t batch = 0, head = 0, ld = 0;
  bool dense_rows(const nnrt_tensor_desc &t) {
    const int64_t rows = t.dims[2], cols = t.dims[3];
    if (cols != 1 && t.strides[3] != 1) return false;
    // A single row may carry any stride: it is never stepped over.
    ld = rows == 1 ? std::max<int64_t>(cols, 1) : t.strides[2];
    batch = t.strides[0];
    head = t.strides[1];
    return ld >= cols;
  }
  int64_t at(int64_t n, int64_t h, int64_t row) const { return n * batch + h * head + row * ld; }
};

struct Geometry : kernels::AttentionSizes {
  int64_t mask_strides[4] = {};
  int64_t blocks() const { return (tq + kBlock - 1) / kBlock; }
  int64_t visible(int64_t i) const { return kernels::attention_visible(alg, i, tq, tk); }
  float scale() const { return static_cast<float>(alpha); }
};

// Checks what both kinds share and fills g; `mask_index` is where the mask would be.
Geometry check(const nnrt_op_desc &d, int mask_index) {
  const nnrt_tensor_desc &q = d.inputs[0], &k = d.inputs[1], &v = d.inputs[2];
  require(q.ndim == 4 && k.ndim == 4 && v.ndim == 4, "attention: q, k and v must be [N, H, T, D]");
  require(k.dims[0] == q.dims[0] && k.dims[1] == q.dims[1] && k.dims[3] == q.dims[3] && v.dims[0] == q.dims[0] &&
              v.dims[1] == q.dims[1] && v.dims[2] == k.dims[2],
          "attention: q, k and v do not match");
  require(q.dtype == NNRT_DTYPE_F32, "attention: f32 only");
  require(d.attrs.alg == NNRT_ATTENTION_FULL || d.attrs.alg == NNRT_ATTENTION_CAUSAL, "attention: unknown alg");
  require(std::isfinite(d.attrs.alpha), "attention: the scale is not finite");
  Geometry g;
  static_cast<kernels::AttentionSizes &>(g) = kernels::attention_sizes(d, mask_index);
  require(g.alg != NNRT_ATTENTION_CAUSAL || g.tq <= g.tk, "attention: causal rows that see no key");
  if (g.masked) {
    const nnrt_tensor_desc &m = d.inputs[mask_index];
    require(m.ndim == 4 && m.dims[0] == g.n && m.dims[1] == g.heads && m.dims[2] == g.tq && m.dims[3] == g.tk,
            "attention: the mask is not [N, H, Tq, Tk]");
    for (int i = 0; i < 4; ++i) g.mask_strides[i] = m.strides[i];
  }
  for (int i = 0; i < d.n_inputs; ++i) require(d.inputs[i].dtype == NNRT_DTYPE_F32, "attention: f32 only");
  for (int i = 0; i < d.n_outputs; ++i) require(d.outputs[i].dtype == NNRT_DTYPE_F32, "attention: f32 only");
  return g;
}

// Refuses a tensor whose dims are not n, h, t, c.
void require_dims(const nnrt_tensor_desc &x, int64_t n, int64_t h, int64_t t, int64_t c) {
  require(x.ndim == 4 && x.dims[0] == n && x.dims[1] == h && x.dims[2] == t && x.dims[3] == c,
          "attention: an output or the gradient does not have its operand's dims");
}

Operand operand(const nnrt_tensor_desc &t) {
  Operand o;
  require(o.dense_rows(t), "attention: an operand's last dim is not dense [strides]");
  return o;
}

void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda, const float *b,
          int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C = beta C (oneDNN's GEMM checks k >= 1 through lda)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0 ? 0.f : beta * c[i * ldc + j];
    return;
  }
  const dnnl_status_t s = dnnl_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  // Shapes and leading dims were checked when the op was made; a failure here is a bug.
  if (s != dnnl_success) throw dnnl::error(s, "dnnl_sgemm in attention");
}

// Whether every element of `rows` rows of `cols` floats, `ld` apart, is finite.
bool finite_rows(const float *x, int64_t ld, int64_t rows, int64_t cols) {
  bool ok = true;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) ok &= std::isfinite(x[r * ld + c]);
  return ok;
}

// Hidden keys: a causal block's rows see different numbers of keys, and a GEMM over the block
// multiplies the hidden ones by a probability (or score gradient) of exactly 0. That adds nothing
// while the hidden rows of the other operand are finite; an infinity or NaN there would make
// 0 * inf = NaN where the reference, which never reads a hidden key, gives a number. So the keys
// every row sees (before `first`) go through the GEMM, and when the operand's rows in the block's
// triangle (first .. keys - 1, or the block's own rows) are not all finite, the triangle is summed
// row by row over the visible keys only: into the rows, row_r += scale * w[r][j] * key_j; into the
// keys, key_j += scale * w[r][j] * row_r. w is a block of scores (row stride tk).
template <class F>
void for_each_triangle_key(const Geometry &g, int64_t i0, int64_t rows, int64_t first, F fn) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = first, visible = g.visible(i0 + r); j < visible; ++j) fn(r, j);
}
void triangle_into_rows(const Geometry &g, int64_t i0, int64_t rows, int64_t first, float scale, const float *w,
                        float *row, int64_t ld_row, const float *key, int64_t ld_key, int64_t cols) {
  for_each_triangle_key(g, i0, rows, first, [&](int64_t r, int64_t j) {
    const float f = scale * w[r * g.tk + j];
    for (int64_t e = 0; e < cols; ++e) row[r * ld_row + e] += f * key[j * ld_key + e];
  });
}
void triangle_into_keys(const Geometry &g, int64_t i0, int64_t rows, int64_t first, float scale, const float *w,
                        const float *row, int64_t ld_row, float *key, int64_t ld_key, int64_t cols) {
  for_each_triangle_key(g, i0, rows, first, [&](int64_t r, int64_t j) {
    const float f = scale * w[r * g.tk + j];
    for (int64_t e = 0; e < cols; ++e) key[j * ld_key + e] += f * row[r * ld_row + e];
  });
}

struct ArithmeticExp {
  float operator()(float x) const { return kernels::k_exp_arithmetic(x); }
};

// The rows of a block of scores (row stride tk) plus the mask, into probabilities: built for
// AVX-512, AVX2 and the x86-64 baseline, so that the row math (attention.h) runs in vectors.
__attribute__((target_clones("avx512f", "avx2", "default"))) void softmax_rows(
    const Geometry &g, const float *mask, int64_t n, int64_t h, int64_t i0, int64_t rows, int64_t keys, float *s) {
  for (int64_t r = 0; r < rows; ++r) {
    float *row = s + r * g.tk;
    const int64_t visible = g.visible(i0 + r);
    if (mask) {
      const float *m = mask + n * g.mask_strides[0] + h * g.mask_strides[1] + (i0 + r) * g.mask_strides[2];
      for (int64_t j = 0; j < visible; ++j) row[j] += m[j * g.mask_strides[3]];
    }
    kernels::attention_softmax_row(row, visible, keys, ArithmeticExp());
  }
}

// The score gradient of a block (attention.h), 0 where a row does not see the key.
__attribute__((target_clones("avx512f", "avx2", "default"))) void score_grad_rows(
    const Geometry &g, int64_t i0, int64_t rows, int64_t keys, const float *p, float *ds) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t visible = g.visible(i0 + r);
    kernels::attention_score_grad_row(p + r * g.tk, ds + r * g.tk, visible);
    std::fill(ds + r * g.tk + visible, ds + r * g.tk + keys, 0.f);
  }
}

// Rows i0 .. i0 + rows - 1 of head (n, h): the scores alpha q k^T + mask over the first `keys`
// columns of s (row stride tk), made into probabilities row by row.
void probabilities(const Geometry &g, const float *q, const Operand &qo, const float *k, const Operand &ko,
                   const float *mask, int64_t n, int64_t h, int64_t i0, int64_t rows, int64_t keys, float *s) {
  gemm('N', 'T', rows, keys, g.d, g.scale(), q + qo.at(n, h, i0), qo.ld, k + ko.at(n, h, 0), ko.ld, 0.f, s, g.tk);
  softmax_rows(g, mask, n, h, i0, rows, keys, s);
}

class AttentionForward final : public Op {
 public:
  AttentionForward(const nnrt_op_desc &d, int threads)
      : g_(check(d, 3)), q_(operand(d.inputs[0])), k_(operand(d.inputs[1])), v_(operand(d.inputs[2])),
        o_(operand(d.outputs[0])), threads_(threads) {
    require_dims(d.outputs[0], g_.n, g_.heads, g_.tq, g_.dv);
    scratch_ = layout.add_buffer(static_cast<size_t>(threads_) * kBlock * g_.tk * sizeof(float));
  }

  void run(const Run &r) const override {
    const nnrt_op_args &a = r.args();
    const float *q = static_cast<const float *>(a.inputs[0]), *k = static_cast<const float *>(a.inputs[1]),
                *v = static_cast<const float *>(a.inputs[2]);
    const float *mask = g_.masked ? static_cast<const float *>(a.inputs[3]) : nullptr;
    float *o = static_cast<float *>(a.outputs[0]);
    float *scratch = static_cast<float *>(r.buffer_data(scratch_));
    const int64_t blocks = g_.blocks(), tasks = g_.n * g_.heads * blocks;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t b = t % blocks, h = t / blocks % g_.heads, n = t / blocks / g_.heads;
      const int64_t i0 = b * kBlock, rows = std::min(kBlock, g_.tq - i0);
      const int64_t keys = g_.visible(i0 + rows - 1);  // the block's last row sees the most
      float *s = scratch + static_cast<int64_t>(omp_get_thread_num()) * kBlock * g_.tk;
      const int64_t first = g_.visible(i0);  // keys every row of the block sees
      probabilities(g_, q, q_, k, k_, mask, n, h, i0, rows, keys, s);
      const float *vh = v + v_.at(n, h, 0);
      float *oh = o + o_.at(n, h, i0);
      const bool exact = keys > first && !finite_rows(vh + first * v_.ld, v_.ld, keys - first, g_.dv);
      gemm('N', 'N', rows, g_.dv, exact ? first : keys, 1.f, s, g_.tk, vh, v_.ld, 0.f, oh, o_.ld);
      if (exact) triangle_into_rows(g_, i0, rows, first, 1.f, s, oh, o_.ld, vh, v_.ld, g_.dv);
    }
  }

 private:
  Geometry g_;
  Operand q_, k_, v_, o_;
  int threads_;
  int scratch_ = 0;
};

class AttentionBackward final : public Op {
 public:
  AttentionBackward(const nnrt_op_desc &d, int threads)
      : g_(check(d, 4)), q_(operand(d.inputs[0])), k_(operand(d.inputs[1])), v_(operand(d.inputs[2])),
        dout_(operand(d.inputs[3])), dq_(operand(d.outputs[0])), dk_(operand(d.outputs[1])), dv_(operand(d.outputs[2])),
        threads_(threads) {
    require_dims(d.inputs[3], g_.n, g_.heads, g_.tq, g_.dv);
    require_dims(d.outputs[0], g_.n, g_.heads, g_.tq, g_.d);
    require_dims(d.outputs[1], g_.n, g_.heads, g_.tk, g_.d);
    require_dims(d.outputs[2], g_.n, g_.heads, g_.tk, g_.dv);
    scratch_ = layout.add_buffer(static_cast<size_t>(threads_) * 2 * kBlock * g_.tk * sizeof(float));
  }

  void run(const Run &r) const override {
    const nnrt_op_args &a = r.args();
    const float *q = static_cast<const float *>(a.inputs[0]), *k = static_cast<const float *>(a.inputs[1]),
                *v = static_cast<const float *>(a.inputs[2]), *dout = static_cast<const float *>(a.inputs[3]);
    const float *mask = g_.masked ? static_cast<const float *>(a.inputs[4]) : nullptr;
    float *dq = static_cast<float *>(a.outputs[0]), *dk = static_cast<float *>(a.outputs[1]),
          *dv = static_cast<float *>(a.outputs[2]);
    float *scratch = static_cast<float *>(r.buffer_data(scratch_));
    const int64_t heads = g_.n * g_.heads;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t t = 0; t < heads; ++t) {
      const int64_t n = t / g_.heads, h = t % g_.heads;
      float *p = scratch + static_cast<int64_t>(omp_get_thread_num()) * 2 * kBlock * g_.tk, *ds = p + kBlock * g_.tk;
      for (int64_t j = 0; j < g_.tk; ++j) {
        std::memset(dk + dk_.at(n, h, j), 0, static_cast<size_t>(g_.d) * sizeof(float));
        std::memset(dv + dv_.at(n, h, j), 0, static_cast<size_t>(g_.dv) * sizeof(float));
      }
      for (int64_t i0 = 0; i0 < g_.tq; i0 += kBlock) {
        const int64_t rows = std::min(kBlock, g_.tq - i0), keys = g_.visible(i0 + rows - 1);
        probabilities(g_, q, q_, k, k_, mask, n, h, i0, rows, keys, p);
        // dp = dout v^T, then the score gradient where a row sees the key and 0 where it does not.
        gemm('N', 'T', rows, keys, g_.dv, 1.f, dout + dout_.at(n, h, i0), dout_.ld, v + v_.at(n, h, 0), v_.ld, 0.f, ds,
             g_.tk);
        score_grad_rows(g_, i0, rows, keys, p, ds);
        const int64_t first = g_.visible(i0);
        const float *kh = k + k_.at(n, h, 0), *qb = q + q_.at(n, h, i0), *dob = dout + dout_.at(n, h, i0);
        float *dqb = dq + dq_.at(n, h, i0), *dkh = dk + dk_.at(n, h, 0), *dvh = dv + dv_.at(n, h, 0);
        // dq = alpha ds k; dk += alpha ds^T q; dv += p^T dout (see triangle_into_rows()).
        bool exact = keys > first && !finite_rows(kh + first * k_.ld, k_.ld, keys - first, g_.d);
        gemm('N', 'N', rows, g_.d, exact ? first : keys, g_.scale(), ds, g_.tk, kh, k_.ld, 0.f, dqb, dq_.ld);
        if (exact) triangle_into_rows(g_, i0, rows, first, g_.scale(), ds, dqb, dq_.ld, kh, k_.ld, g_.d);
        exact = keys > first && !finite_rows(qb, q_.ld, rows, g_.d);
        gemm('T', 'N', exact ? first : keys, g_.d, rows, g_.scale(), ds, g_.tk, qb, q_.ld, 1.f, dkh, dk_.ld);
        if (exact) triangle_into_keys(g_, i0, rows, first, g_.scale(), ds, qb, q_.ld, dkh, dk_.ld, g_.d);
        exact = keys > first && !finite_rows(dob, dout_.ld, rows, g_.dv);
        gemm('T', 'N', exact ? first : keys, g_.dv, rows, 1.f, p, g_.tk, dob, dout_.ld, 1.f, dvh, dv_.ld);
        if (exact) triangle_into_keys(g_, i0, rows, first, 1.f, p, dob, dout_.ld, dvh, dv_.ld, g_.dv);
      }
    }
  }

 private:
  Geometry g_;
  Operand q_, k_, v_, dout_, dq_, dk_, dv_;
  int threads_;
  int scratch_ = 0;
};

// The OpenMP threads the op runs on: the bound its builder set (OmpThreadLimit).
int team_size() { return std::max(1, omp_get_max_threads()); }

}  // namespace

std::unique_ptr<Op> make_attention(const Build &b) {
  check_common(b.desc, 3, 4, 1, 1);
  if (b.plan_only) {
    AttentionForward probe(b.desc, 1);  // refuses what it does not take
    return nullptr;
  }
  return std::make_unique<AttentionForward>(b.desc, team_size());
}

std::unique_ptr<Op> make_attention_backward(const Build &b) {
  check_common(b.desc, 4, 5, 3, 3);
  if (b.plan_only) {
    AttentionBackward probe(b.desc, 1);
    return nullptr;
  }
  return std::make_unique<AttentionBackward>(b.desc, team_size());
}

}  // namespace nnrt::onednn
