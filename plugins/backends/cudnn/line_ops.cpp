// REDUCE, SOFTMAX and SOFTMAX_BACKWARD: one GPU block per line (kernels.h, Lines). The lines are
// laid out once, at creation, from the descriptor.
#include <cstring>

#include "kernels.h"
#include "lines.h"
#include "ops.h"

namespace nnrt::cudnn {

namespace {

class ReduceOp final : public Op {
 public:
  explicit ReduceOp(const nnrt_op_desc &d) : alg_(d.attrs.alg), dtype_(d.inputs[0].dtype) {
    lines_ = reduce_lines(d.inputs[0], d.outputs[0].strides, d.attrs.axes_mask);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    check_cuda(gpu::reduce(alg_, dtype_, a.outputs[0], a.inputs[0], lines_, s), "reduce kernel");
  }

 private:
  int32_t alg_, dtype_;
  gpu::Lines<2> lines_;
};

class SoftmaxOp final : public Op {
 public:
  explicit SoftmaxOp(const nnrt_op_desc &d) : log_(d.attrs.alg == NNRT_LOG_SOFTMAX), dtype_(d.inputs[0].dtype) {
    const int64_t *strides[2] = {d.outputs[0].strides, d.inputs[0].strides};
    const bool moves[2] = {true, true};
    lines_ = make_lines<2>(d.inputs[0], 1u << d.attrs.axis, strides, moves);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    check_cuda(gpu::softmax(log_, dtype_, a.outputs[0], a.inputs[0], lines_, s), "softmax kernel");
  }

 private:
  bool log_;
  int32_t dtype_;
  gpu::Lines<2> lines_;
};

class SoftmaxBackwardOp final : public Op {
 public:
  explicit SoftmaxBackwardOp(const nnrt_op_desc &d)
      : log_(d.attrs.alg == NNRT_LOG_SOFTMAX), dtype_(d.inputs[0].dtype) {
    const int64_t *strides[3] = {d.outputs[0].strides, d.inputs[0].strides, d.inputs[1].strides};
    const bool moves[3] = {true, true, true};
    lines_ = make_lines<3>(d.inputs[0], 1u << d.attrs.axis, strides, moves);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    check_cuda(gpu::softmax_backward(log_, dtype_, a.outputs[0], a.inputs[0], a.inputs[1], lines_, s),
               "softmax backward kernel");
  }

 private:
  bool log_;
  int32_t dtype_;
  gpu::Lines<3> lines_;
};

}  // namespace

gpu::Lines<2> reduce_lines(const nnrt_tensor_desc &x, const int64_t *y_strides, uint32_t mask) {
  const int64_t *strides[2] = {y_strides, x.strides};
  const bool moves[2] = {false, true};
  return make_lines<2>(x, mask, strides, moves);
}

std::string line_refusal(const nnrt_op_desc &d) {
  std::string e;
  if (d.kind == NNRT_OP_REDUCE) {
    if (!(e = check_counts(d, 1, 1, 1, 1)).empty()) return e;
    const nnrt_tensor_desc &x = d.inputs[0], &y = d.outputs[0];
    if (!is_float(x.dtype) || y.dtype != x.dtype) return "integer reductions run on the reference backend";
    if (d.attrs.alg < NNRT_REDUCE_SUM || d.attrs.alg > NNRT_REDUCE_SUM_SQUARES) return "unknown reduce alg";
    if (x.ndim < 32 && (d.attrs.axes_mask >> x.ndim) != 0) return "axes_mask names a dim x does not have";
    if (y.ndim != x.ndim) return "y must have x's rank";
    int64_t reduced = 1;
    for (int i = 0; i < x.ndim; ++i) {
      const bool r = (d.attrs.axes_mask >> i) & 1u;
      if (y.dims[i] != (r ? 1 : x.dims[i])) return "y's dims are not x's with the reduced dims set to 1";
      if (r) reduced *= x.dims[i];
    }
    if (reduced == 0 && (d.attrs.alg == NNRT_REDUCE_MAX || d.attrs.alg == NNRT_REDUCE_MIN))
      return "an empty MAX or MIN has no identity";
    return "";
  }
  const bool backward = d.kind == NNRT_OP_SOFTMAX_BACKWARD;
  if (!(e = check_counts(d, backward ? 2 : 1, backward ? 2 : 1, 1, 1)).empty()) return e;
  if (d.attrs.alg != NNRT_SOFTMAX && d.attrs.alg != NNRT_LOG_SOFTMAX) return "unknown softmax alg";
  const nnrt_tensor_desc &x = d.inputs[0];
  if (d.attrs.axis < 0 || d.attrs.axis >= x.ndim) return "the axis is outside x's dims";
  if (!is_float(x.dtype)) return "softmax needs a float dtype";
  for (int i = 0; i < d.n_inputs; ++i)
    if (d.inputs[i].dtype != x.dtype || !same_dims(d.inputs[i], x)) return "inputs differ in dtype or dims";
  if (d.outputs[0].dtype != x.dtype || !same_dims(d.outputs[0], x)) return "output differs from x in dtype or dims";
  return "";
}

std::unique_ptr<Op> create_line_op(const nnrt_op_desc &d) {
  if (d.kind == NNRT_OP_REDUCE) return std::make_unique<ReduceOp>(d);
  if (d.kind == NNRT_OP_SOFTMAX) return std::make_unique<SoftmaxOp>(d);
  return std::make_unique<SoftmaxBackwardOp>(d);
}

}  // namespace nnrt::cudnn
