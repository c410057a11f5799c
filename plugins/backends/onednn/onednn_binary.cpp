// NNRT_OP_BINARY through oneDNN's binary primitive: add, sub, mul, div of f32 or bf16 tensors,
// with broadcasting. nnrt hands broadcast operands over with stride 0; oneDNN wants dims of 1.
//
// Refused: MAX and MIN (oneDNN's max/min return the other operand when one is NaN, nnrt
// propagates NaN) and integer dtypes (oneDNN computes them in f32 and rounds the result, so large
// values, overflow and integer division differ from nnrt's wrapping, truncating arithmetic).
#include "onednn_common.h"

namespace nnrt::onednn {
namespace {

class BinaryOp : public Op {
 public:
  BinaryOp(dnnl::algorithm alg, const md &a, const md &b, const md &c, bool swapped, bool plan_only)
      : a_(a), b_(b), c_(c), swapped_(swapped) {
    dnnl::binary::primitive_desc pd = make_pd<dnnl::binary>(base_attr(), alg, swapped ? b : a, swapped ? a : b, c);
    layout.need_scratchpad(pd);
    if (!plan_only) {
      log_impl("binary", pd);
      binary_ = dnnl::binary(pd);
    }
  }

  void run(const Run &r) const override {
    dnnl::memory a = r.input(a_, 0), b = r.input(b_, 1);
    r.execute(binary_, {{DNNL_ARG_SRC_0, swapped_ ? b : a}, {DNNL_ARG_SRC_1, swapped_ ? a : b},
                        {DNNL_ARG_DST, r.output(c_, 0)}});
  }

 private:
  md a_, b_, c_;
  bool swapped_;
  dnnl::binary binary_;
};

}  // namespace

std::unique_ptr<Op> make_binary(const Build &bd) {
  const nnrt_op_desc &d = bd.desc;
  check_common(d, 2, 2, 1, 1);
  const nnrt_tensor_desc &a = d.inputs[0], &b = d.inputs[1], &c = d.outputs[0];
  require_compute_dtype({&a, &b, &c});
  require(a.ndim == c.ndim && b.ndim == c.ndim, "binary: operands must have the output's rank");
  for (int i = 0; i < c.ndim; ++i)
    require(a.dims[i] == c.dims[i] && b.dims[i] == c.dims[i], "binary: operands must have the output's dims");

  dnnl::algorithm alg;
  bool commutative = false;
  switch (d.attrs.alg) {
    case NNRT_BINARY_ADD: alg = dnnl::algorithm::binary_add; commutative = true; break;
    case NNRT_BINARY_SUB: alg = dnnl::algorithm::binary_sub; break;
    case NNRT_BINARY_MUL: alg = dnnl::algorithm::binary_mul; commutative = true; break;
    case NNRT_BINARY_DIV: alg = dnnl::algorithm::binary_div; break;
    case NNRT_BINARY_MAX:
    case NNRT_BINARY_MIN: refuse("binary: oneDNN's max/min do not propagate NaN");
    default: refuse("binary: unknown alg [" + std::to_string(d.attrs.alg) + "]");
  }
  // oneDNN's fast kernels broadcast only the second operand; a + b and a * b are exactly b + a
  // and b * a, so a broadcast first operand of those swaps places.
  bool swapped = commutative && has_zero_stride(a) && !has_zero_stride(b);
  auto op = std::make_unique<BinaryOp>(alg, broadcast_desc(a), broadcast_desc(b), memory_desc(c), swapped,
                                       bd.plan_only);
  return bd.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
