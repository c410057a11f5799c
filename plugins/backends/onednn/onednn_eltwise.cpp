// NNRT_OP_UNARY and NNRT_OP_UNARY_BACKWARD through oneDNN's eltwise primitive.
//
// oneDNN's eltwise reads and writes one layout (forward: src and dst share a descriptor; backward:
// diff_dst and diff_src do). When nnrt's input is laid out differently from the output (a
// transposed or broadcast view), the input is first reordered into the output's layout, in the
// output buffer itself (forward, then computed in place) or in a workspace buffer (backward).
#include "onednn_common.h"

namespace nnrt::onednn {
namespace {

using dnnl::algorithm;

// The backward algorithm for an nnrt unary alg, with NNRT_FLAG_USE_DST when `use_dst`. Refused
// where oneDNN's gradient differs from nnrt's at a kink or on non-finite inputs (measured by the
// conformance suite's nan-inf cases): relu and leaky relu (at x = 0 oneDNN takes the x > 0 side;
// a NaN or infinite dy where the gradient is 0 gives NaN, nnrt gives 0), elu and abs (NaN x),
// exp (NaN becomes +inf), clip (0 at the bounds, nnrt passes the gradient on [alpha, beta]), hard
// sigmoid and hard swish (NaN x gives NaN; nnrt's gradient, PyTorch's, is 0 and dy).
EltwiseAlg eltwise_backward_alg(int32_t unary_alg, double alpha, double beta, bool use_dst) {
  switch (unary_alg) {
    case NNRT_UNARY_RELU:
    case NNRT_UNARY_LEAKY_RELU: refuse("unary backward: oneDNN's relu gradient differs at 0 and on NaN or inf");
    case NNRT_UNARY_ELU: refuse("unary backward: oneDNN's elu gradient drops NaN");
    case NNRT_UNARY_ABS: refuse("unary backward: oneDNN's abs gradient does not keep NaN");
    case NNRT_UNARY_EXP: refuse("oneDNN's exp turns NaN into +inf");
    case NNRT_UNARY_CLIP: refuse("unary backward: oneDNN's clip gradient is 0 at the bounds, nnrt's is not");
    case NNRT_UNARY_HARD_SIGMOID:
    case NNRT_UNARY_HARD_SWISH: refuse("unary backward: oneDNN's hard sigmoid and hard swish gradients do not keep NaN x out");
    default: break;
  }
  EltwiseAlg e = eltwise_forward_alg(unary_alg, alpha, beta);
  if (!use_dst) return e;
  switch (unary_alg) {
    case NNRT_UNARY_SIGMOID: return {algorithm::eltwise_logistic_use_dst_for_bwd, 0.f, 0.f};
    case NNRT_UNARY_TANH: return {algorithm::eltwise_tanh_use_dst_for_bwd, 0.f, 0.f};
    case NNRT_UNARY_LINEAR: return e;  // the derivative is alpha whatever the second input is
    default: refuse("unary backward: NNRT_FLAG_USE_DST is not defined for this alg");
  }
}

class UnaryOp : public Op {
 public:
  UnaryOp(const nnrt_tensor_desc &x, const nnrt_tensor_desc &y, const EltwiseAlg &e, bool plan_only)
      : x_(memory_desc(x)), y_(memory_desc(y)), reorder_first_(!same_layout(x, y) || has_zero_stride(x)) {
    dnnl::eltwise_forward::primitive_desc pd =
        eltwise_forward_pd(dnnl::prop_kind::forward_inference, e, y_, base_attr());
    layout.need_scratchpad(pd);
    if (reorder_first_) {
      dnnl::reorder::primitive_desc rpd(cpu_engine(), x_, cpu_engine(), y_, base_attr());
      layout.need_scratchpad(rpd);
      if (!plan_only) reorder_ = dnnl::reorder(rpd);
    }
    if (!plan_only) {
      log_impl("unary", pd);
      eltwise_ = dnnl::eltwise_forward(pd);
    }
  }

  void run(const Run &r) const override {
    dnnl::memory y = r.output(y_, 0);
    dnnl::memory src = y;
    if (reorder_first_)
      r.execute(reorder_, {{DNNL_ARG_FROM, r.input(x_, 0)}, {DNNL_ARG_TO, y}});
    else
      src = r.input(y_, 0);  // same layout as y (and possibly the same buffer)
    r.execute(eltwise_, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, y}});
  }

 private:
  md x_, y_;
  bool reorder_first_;
  dnnl::reorder reorder_;
  dnnl::eltwise_forward eltwise_;
};

class UnaryBackwardOp : public Op {
 public:
  UnaryBackwardOp(const nnrt_op_desc &d, const EltwiseAlg &e, bool plan_only)
      : s_arg_(reads_forward_output(e.alg) ? DNNL_ARG_DST : DNNL_ARG_SRC) {
    const nnrt_tensor_desc &dy = d.inputs[0], &s = d.inputs[1], &dx = d.outputs[0];
    dx_ = memory_desc(dx);
    // dy must be laid out like dx; s may have any layout but a broadcast one.
    dy_ = Bridge::to_inner(memory_desc(dy), same_layout(dy, dx) && !has_zero_stride(dy) ? memory_desc(dy) : dx_,
                           layout, plan_only);
    s_ = Bridge::to_inner(memory_desc(s), has_zero_stride(s) ? dx_ : memory_desc(s), layout, plan_only);
    dnnl::eltwise_forward::primitive_desc hint =
        eltwise_forward_pd(dnnl::prop_kind::forward_training, e, s_.inner(), dnnl::primitive_attr());
    dnnl::eltwise_backward::primitive_desc pd = eltwise_backward_pd(e, dx_, s_.inner(), hint, base_attr());
    require(pd.diff_dst_desc() == dx_, "unary backward: oneDNN wants dy in another layout");
    layout.need_scratchpad(pd);
    if (!plan_only) {
      log_impl("unary backward", pd);
      eltwise_ = dnnl::eltwise_backward(pd);
    }
  }

  void run(const Run &r) const override {
    dnnl::memory dy = dy_.in(r, 0);
    dnnl::memory s = s_.in(r, 1);
    // dy's memory carries dy's own descriptor; the primitive reads it with dx's, which is the
    // same layout (checked when building).
    dnnl::memory diff_dst(dx_, cpu_engine(), dy.get_data_handle());
    r.execute(eltwise_, {{DNNL_ARG_DIFF_DST, diff_dst}, {s_arg_, s}, {DNNL_ARG_DIFF_SRC, r.output(dx_, 0)}});
  }

 private:
  // The *_use_dst_for_bwd algorithms take the forward output as DNNL_ARG_DST.
  static bool reads_forward_output(algorithm a) {
    return a == algorithm::eltwise_logistic_use_dst_for_bwd || a == algorithm::eltwise_tanh_use_dst_for_bwd;
  }

  int s_arg_;
  md dx_;
  Bridge dy_, s_;
  dnnl::eltwise_backward eltwise_;
};

void check_unary_shapes(const nnrt_tensor_desc &a, const nnrt_tensor_desc &b, const char *what) {
  require(a.ndim == b.ndim, what);
  for (int i = 0; i < a.ndim; ++i) require(a.dims[i] == b.dims[i], what);
}

}  // namespace

std::unique_ptr<Op> make_unary(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 1, 1, 1, 1);
  require_compute_dtype({&d.inputs[0], &d.outputs[0]});
  check_unary_shapes(d.inputs[0], d.outputs[0], "unary: input and output dims differ");
  EltwiseAlg e = eltwise_forward_alg(d.attrs.alg, d.attrs.alpha, d.attrs.beta);
  auto op = std::make_unique<UnaryOp>(d.inputs[0], d.outputs[0], e, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

std::unique_ptr<Op> make_unary_backward(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 2, 2, 1, 1);
  require_compute_dtype({&d.inputs[0], &d.inputs[1], &d.outputs[0]});
  check_unary_shapes(d.inputs[0], d.outputs[0], "unary backward: dy and dx dims differ");
  check_unary_shapes(d.inputs[1], d.outputs[0], "unary backward: the forward tensor and dx dims differ");
  bool use_dst = (d.attrs.flags & NNRT_FLAG_USE_DST) != 0;
  EltwiseAlg e = eltwise_backward_alg(d.attrs.alg, d.attrs.alpha, d.attrs.beta, use_dst);
  auto op = std::make_unique<UnaryBackwardOp>(d, e, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
