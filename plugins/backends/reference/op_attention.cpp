// NNRT_OP_ATTENTION and NNRT_OP_ATTENTION_BACKWARD: scaled dot-product attention over [N, H, T, D]
// tensors of any strides, float dtypes, computed one query row at a time.
//
// Forward, for each (n, h, i): the row's scores s_j = alpha * q_i . k_j + mask_ij over the keys it
// sees, softmax (nnrt/kernels/attention.h), then o_i = sum_j p_j v_j. A row's scores are the only
// scratch: Tk values per slot of the pool, so memory grows with the sequence, never with its square.
//
// Backward runs the rows of one (n, h) on one slot, because every row adds into the same dk and dv:
// the row's p is computed again as in the forward pass, then dp_j = dout_i . v_j, the score gradient
// ds (attention.h), dq_i = alpha * sum_j ds_j k_j, and dk_j += alpha * ds_j q_i, dv_j += p_j dout_i
// into accumulators of the compute type (f32 for bf16 and f16), stored once the head is done.
//
// Products accumulate in f32 (f64 for f64) in index order, so results do not depend on the thread
// count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "dtype.h"
#include "op_kernel.h"
#include "validate.h"
#include "nnrt/kernels/attention.h"

namespace nnrt::reference {
namespace {

// The strides of a [N, H, T, D] operand, and the element (n, h, t, d) of it.
struct Strides4 {
  int64_t s[4] = {};
  explicit Strides4(const nnrt_tensor_desc &t) {
    for (int d = 0; d < 4; ++d) s[d] = t.strides[d];
  }
  Strides4() = default;
  int64_t at(int64_t n, int64_t h, int64_t t, int64_t d) const { return n * s[0] + h * s[1] + t * s[2] + d * s[3]; }
};

struct Geometry : kernels::AttentionSizes {
  Strides4 q, k, v, mask;
};

Geometry geometry_of(const nnrt_op_desc &desc, int mask_index) {
  Geometry g;
  static_cast<kernels::AttentionSizes &>(g) = kernels::attention_sizes(desc, mask_index);
  g.q = Strides4(desc.inputs[0]);
  g.k = Strides4(desc.inputs[1]);
  g.v = Strides4(desc.inputs[2]);
  if (g.masked) g.mask = Strides4(desc.inputs[mask_index]);
  return g;
}

// Row i of head (n, h): its scores over the keys it sees, turned into probabilities in s[0, tk).
template <class T, class A>
void probabilities(const Geometry &g, const T *q, const T *k, const T *mask, int64_t n, int64_t h, int64_t i, A *s) {
  const int64_t visible = kernels::attention_visible(g.alg, i, g.tq, g.tk);
  const A alpha = static_cast<A>(g.alpha);
  for (int64_t j = 0; j < visible; ++j) {
    A dot = 0;
    for (int64_t c = 0; c < g.d; ++c) dot += load(q + g.q.at(n, h, i, c)) * load(k + g.k.at(n, h, j, c));
    s[j] = alpha * dot + (mask ? static_cast<A>(load(mask + g.mask.at(n, h, i, j))) : A(0));
  }
  kernels::attention_softmax_row(s, visible, g.tk);
}

class AttentionKernel final : public OpKernel {
 public:
  explicit AttentionKernel(const OpSetup &setup)
      : exec_(setup.exec), g_(geometry_of(setup.desc, 3)), o_(setup.desc.outputs[0]), dtype_(setup.desc.inputs[0].dtype) {
    slots_ = std::max(1, exec_.threads);
    workspace_bytes_ = static_cast<size_t>(slots_) * static_cast<size_t>(g_.tk) * compute_size();
  }

  void run(const nnrt_op_args &args) const override {
    visit_float(dtype_, [&](auto type) {
      using T = typename decltype(type)::type;
      using A = compute_t<T>;
      const T *q = input_ptr<T>(args, 0), *k = input_ptr<T>(args, 1), *v = input_ptr<T>(args, 2);
      const T *mask = g_.masked ? input_ptr<T>(args, 3) : nullptr;
      T *o = output_ptr<T>(args, 0);
      A *scratch = static_cast<A *>(args.workspace);
      parallel_slots(exec_, g_.n * g_.heads * g_.tq, slots_, [&](int slot, int64_t row) {
        const int64_t i = row % g_.tq, h = row / g_.tq % g_.heads, n = row / g_.tq / g_.heads;
        A *p = scratch + static_cast<int64_t>(slot) * g_.tk;
        probabilities<T, A>(g_, q, k, mask, n, h, i, p);
        const int64_t visible = kernels::attention_visible(g_.alg, i, g_.tq, g_.tk);
        for (int64_t e = 0; e < g_.dv; ++e) {
          // A NaN row stays NaN: its probabilities are NaN over every key, visible or not.
          const int64_t keys = visible == 0 ? g_.tk : visible;
          A sum = 0;
          for (int64_t j = 0; j < keys; ++j) sum += p[j] * load(v + g_.v.at(n, h, j, e));
          store(o + n * o_.strides[0] + h * o_.strides[1] + i * o_.strides[2] + e * o_.strides[3], sum);
        }
      });
    });
  }

 private:
  size_t compute_size() const { return dtype_ == NNRT_DTYPE_F64 ? sizeof(double) : sizeof(float); }
  Exec exec_;
  Geometry g_;
  nnrt_tensor_desc o_;
  int32_t dtype_;
  int slots_ = 1;
};

class AttentionBackwardKernel final : public OpKernel {
 public:
  explicit AttentionBackwardKernel(const OpSetup &setup)
      : exec_(setup.exec), g_(geometry_of(setup.desc, 4)), dout_(setup.desc.inputs[3]), dq_(setup.desc.outputs[0]),
        dk_(setup.desc.outputs[1]), dv_(setup.desc.outputs[2]), dtype_(setup.desc.inputs[0].dtype) {
    slots_ = std::max(1, exec_.threads);
    workspace_bytes_ = static_cast<size_t>(slots_) * static_cast<size_t>(slot_elements()) * compute_size();
  }

  void run(const nnrt_op_args &args) const override {
    visit_float(dtype_, [&](auto type) {
      using T = typename decltype(type)::type;
      using A = compute_t<T>;
      const T *q = input_ptr<T>(args, 0), *k = input_ptr<T>(args, 1), *v = input_ptr<T>(args, 2);
      const T *dout = input_ptr<T>(args, 3);
      const T *mask = g_.masked ? input_ptr<T>(args, 4) : nullptr;
      T *dq = output_ptr<T>(args, 0), *dk = output_ptr<T>(args, 1), *dv = output_ptr<T>(args, 2);
      const Strides4 sdo(dout_), sdq(dq_), sdk(dk_), sdv(dv_);
      const A alpha = static_cast<A>(g_.alpha);
      A *scratch = static_cast<A *>(args.workspace);
      parallel_slots(exec_, g_.n * g_.heads, slots_, [&](int slot, int64_t head) {
        const int64_t n = head / g_.heads, h = head % g_.heads;
        A *p = scratch + static_cast<int64_t>(slot) * slot_elements();
        A *ds = p + g_.tk, *dk_acc = ds + g_.tk, *dv_acc = dk_acc + g_.tk * g_.d;
        std::fill(dk_acc, dk_acc + g_.tk * (g_.d + g_.dv), A(0));
        for (int64_t i = 0; i < g_.tq; ++i) {
          probabilities<T, A>(g_, q, k, mask, n, h, i, p);
          const int64_t visible = kernels::attention_visible(g_.alg, i, g_.tq, g_.tk);
          const int64_t keys = visible == 0 ? g_.tk : visible;  // a NaN row spreads NaN to every key
          for (int64_t j = 0; j < keys; ++j) {
            A dot = 0;
            for (int64_t e = 0; e < g_.dv; ++e) dot += load(dout + sdo.at(n, h, i, e)) * load(v + g_.v.at(n, h, j, e));
            ds[j] = dot;
            for (int64_t e = 0; e < g_.dv; ++e) dv_acc[j * g_.dv + e] += p[j] * load(dout + sdo.at(n, h, i, e));
          }
          kernels::attention_score_grad_row(p, ds, keys);
          for (int64_t c = 0; c < g_.d; ++c) {
            A sum = 0;
            for (int64_t j = 0; j < keys; ++j) sum += ds[j] * load(k + g_.k.at(n, h, j, c));
            store(dq + sdq.at(n, h, i, c), alpha * sum);
          }
          for (int64_t j = 0; j < keys; ++j)
            for (int64_t c = 0; c < g_.d; ++c) dk_acc[j * g_.d + c] += alpha * ds[j] * load(q + g_.q.at(n, h, i, c));
        }
        for (int64_t j = 0; j < g_.tk; ++j) {
          for (int64_t c = 0; c < g_.d; ++c) store(dk + sdk.at(n, h, j, c), dk_acc[j * g_.d + c]);
          for (int64_t e = 0; e < g_.dv; ++e) store(dv + sdv.at(n, h, j, e), dv_acc[j * g_.dv + e]);
        }
      });
    });
  }

 private:
  // p and ds (a row each), and the head's dk and dv accumulators.
  int64_t slot_elements() const { return 2 * g_.tk + g_.tk * (g_.d + g_.dv); }
  size_t compute_size() const { return dtype_ == NNRT_DTYPE_F64 ? sizeof(double) : sizeof(float); }
  Exec exec_;
  Geometry g_;
  nnrt_tensor_desc dout_, dq_, dk_, dv_;
  int32_t dtype_;
  int slots_ = 1;
};

// q, k, v (and mask) as the kind's documentation has them; mask_index is where the mask would be.
void expect_attention_operands(const nnrt_op_desc &d, int mask_index) {
  const nnrt_tensor_desc &q = d.inputs[0], &k = d.inputs[1], &v = d.inputs[2];
  expect_dtype(q, "input q", kFloatDtypes);
  expect_rank(q, "input q", 4);
  expect_same_dtype(k, "input k", q, "input q");
  expect_same_dtype(v, "input v", q, "input q");
  expect_dims(k, "input k", {q.dims[0], q.dims[1], k.ndim == 4 ? k.dims[2] : 0, q.dims[3]});
  expect_dims(v, "input v", {q.dims[0], q.dims[1], k.dims[2], v.ndim == 4 ? v.dims[3] : 0});
  if (d.n_inputs > mask_index) {
    const nnrt_tensor_desc &m = d.inputs[mask_index];
    expect_same_dtype(m, "input mask", q, "input q");
    expect_dims(m, "input mask", {q.dims[0], q.dims[1], q.dims[2], k.dims[2]});
  }
  if (d.attrs.alg != NNRT_ATTENTION_FULL && d.attrs.alg != NNRT_ATTENTION_CAUSAL)
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_attention_alg (FULL 1, CAUSAL 2)", d.attrs.alg);
  expect_attr(std::isfinite(d.attrs.alpha), "alpha (the scale) must be finite, got %g", d.attrs.alpha);
}

}  // namespace

KernelPtr create_attention(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  expect_attention_operands(d, 3);
  const nnrt_tensor_desc &q = d.inputs[0];
  expect_same_dtype(d.outputs[0], "output o", q, "input q");
  expect_dims(d.outputs[0], "output o", {q.dims[0], q.dims[1], q.dims[2], d.inputs[2].dims[3]});
  return std::make_unique<AttentionKernel>(setup);
}

KernelPtr create_attention_backward(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  expect_attention_operands(d, 4);
  const nnrt_tensor_desc &q = d.inputs[0];
  expect_same_dtype(d.inputs[3], "input dout", q, "input q");
  expect_dims(d.inputs[3], "input dout", {q.dims[0], q.dims[1], q.dims[2], d.inputs[2].dims[3]});
  const char *names[3] = {"output dq", "output dk", "output dv"};
  for (int i = 0; i < 3; ++i) {
    expect_same_dtype(d.outputs[i], names[i], q, "input q");
    expect_same_dims(d.outputs[i], names[i], d.inputs[i], i == 0 ? "input q" : i == 1 ? "input k" : "input v");
  }
  return std::make_unique<AttentionBackwardKernel>(setup);
}

}  // namespace nnrt::reference
