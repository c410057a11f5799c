// NNRT_OP_REDUCE through oneDNN's reduction primitive: sum, mean and the sum of squares (oneDNN's
// norm_lp_power_p_sum with p = 2) of f32 or bf16 tensors over any set of dims.
//
// Refused: shapes for which oneDNN would run its reference kernel, max and min (oneDNN's skip NaN
// depending on where it sits; nnrt's propagate it),
// integer dtypes (oneDNN accumulates in f32) and reductions over nothing (every reduced dim
// already 1: oneDNN wants at least one dim to shrink; the reference backend copies).
#include "onednn_common.h"

namespace nnrt::onednn {
namespace {

class ReduceOp : public Op {
 public:
  ReduceOp(dnnl::algorithm alg, float p, const nnrt_tensor_desc &x, const nnrt_tensor_desc &y, bool plan_only)
      : y_(memory_desc(y)) {
    x_ = readable_input(x, dense_desc(x, dnnl_type(x.dtype)), layout, plan_only);
    dnnl::reduction::primitive_desc pd = make_pd<dnnl::reduction>(base_attr(), alg, x_.inner(), y_, p, 0.f);
    // oneDNN 2.6 has jit reductions for a few layouts only; elsewhere its reference kernel runs
    // one thread per output element and calls powf per input for the sum of squares. nnrt's
    // reference backend is vectorized and parallel over any layout: leave such shapes to it.
    if (is_reference_impl(pd)) refuse("reduce: oneDNN has only its reference kernel for this shape");
    layout.need_scratchpad(pd);
    if (!plan_only) {
      log_impl("reduce", pd);
      reduction_ = dnnl::reduction(pd);
    }
  }

  void run(const Run &r) const override {
    r.execute(reduction_, {{DNNL_ARG_SRC, x_.in(r, 0)}, {DNNL_ARG_DST, r.output(y_, 0)}});
  }

 private:
  md y_;
  Bridge x_;
  dnnl::reduction reduction_;
};

}  // namespace

std::unique_ptr<Op> make_reduce(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 1, 1, 1, 1);
  const nnrt_tensor_desc &x = d.inputs[0], &y = d.outputs[0];
  require_compute_dtype({&x, &y});
  require(x.ndim == y.ndim, "reduce: the output must have the input's rank");
  bool shrinks = false;
  for (int i = 0; i < x.ndim; ++i) {
    bool reduced = (d.attrs.axes_mask >> i) & 1u;
    require(y.dims[i] == (reduced ? 1 : x.dims[i]), "reduce: output dims do not match axes_mask");
    shrinks = shrinks || (reduced && x.dims[i] > 1);
  }
  require(shrinks, "reduce: nothing to reduce");

  dnnl::algorithm alg;
  float p = 0.f;
  switch (d.attrs.alg) {
    case NNRT_REDUCE_SUM: alg = dnnl::algorithm::reduction_sum; break;
    case NNRT_REDUCE_MEAN: alg = dnnl::algorithm::reduction_mean; break;
    case NNRT_REDUCE_MAX:
    case NNRT_REDUCE_MIN: refuse("reduce: oneDNN's max and min skip NaN, nnrt's propagate it");
    case NNRT_REDUCE_SUM_SQUARES: alg = dnnl::algorithm::reduction_norm_lp_power_p_sum; p = 2.f; break;
    default: refuse("reduce: unknown alg [" + std::to_string(d.attrs.alg) + "]");
  }
  auto op = std::make_unique<ReduceOp>(alg, p, x, y, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
