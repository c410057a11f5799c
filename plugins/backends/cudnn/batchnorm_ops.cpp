// BATCHNORM and BATCHNORM_BACKWARD as CUDA kernels (kernels.h) on the shared per-element formulas
// of kernels/batchnorm.h: one block per channel, the channel's sums by a fixed tree, so results are
// deterministic in every mode.
#include "kernels.h"
#include "lines.h"
#include "ops.h"

namespace nnrt::cudnn {

namespace {

// Every dim of x but dim 1 (channels).
uint32_t channel_line_mask(const nnrt_tensor_desc &x) { return ((1u << x.ndim) - 1u) & ~2u; }

class BatchnormOp final : public Op {
 public:
  explicit BatchnormOp(const nnrt_op_desc &d)
      : training_((d.attrs.flags & NNRT_FLAG_TRAINING) != 0), eps_(d.attrs.eps), dtype_(d.inputs[0].dtype) {
    const int64_t *strides[2] = {d.outputs[0].strides, d.inputs[0].strides};
    const bool moves[2] = {true, true};
    lines_ = make_lines<2>(d.inputs[0], channel_line_mask(d.inputs[0]), strides, moves);
    gamma_stride_ = d.inputs[1].strides[0];
    beta_stride_ = d.inputs[2].strides[0];
    mean_stride_ = training_ ? d.outputs[1].strides[0] : d.inputs[3].strides[0];
    var_stride_ = training_ ? d.outputs[2].strides[0] : d.inputs[4].strides[0];
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    gpu::BatchnormForward p{};
    p.training = training_;
    p.eps = eps_;
    p.gamma = static_cast<const float *>(a.inputs[1]);
    p.beta = static_cast<const float *>(a.inputs[2]);
    if (training_) {
      p.mean_out = static_cast<float *>(a.outputs[1]);
      p.var_out = static_cast<float *>(a.outputs[2]);
    } else {
      p.mean_in = static_cast<const float *>(a.inputs[3]);
      p.var_in = static_cast<const float *>(a.inputs[4]);
    }
    p.gamma_stride = gamma_stride_;
    p.beta_stride = beta_stride_;
    p.mean_stride = mean_stride_;
    p.var_stride = var_stride_;
    check_cuda(gpu::batchnorm(dtype_, p, a.outputs[0], a.inputs[0], lines_, s), "batchnorm kernel");
  }

 private:
  bool training_;
  double eps_;
  int32_t dtype_;
  int64_t gamma_stride_, beta_stride_, mean_stride_, var_stride_;
  gpu::Lines<2> lines_;
};

class BatchnormBackwardOp final : public Op {
 public:
  explicit BatchnormBackwardOp(const nnrt_op_desc &d) : eps_(d.attrs.eps), dtype_(d.inputs[0].dtype) {
    const int64_t *strides[3] = {d.outputs[0].strides, d.inputs[0].strides, d.inputs[1].strides};
    const bool moves[3] = {true, true, true};
    lines_ = make_lines<3>(d.inputs[0], channel_line_mask(d.inputs[0]), strides, moves);
    mean_stride_ = d.inputs[2].strides[0];
    var_stride_ = d.inputs[3].strides[0];
    gamma_stride_ = d.inputs[4].strides[0];
    dgamma_stride_ = d.outputs[1].strides[0];
    dbeta_stride_ = d.outputs[2].strides[0];
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    gpu::BatchnormBackward p{};
    p.eps = eps_;
    p.mean = static_cast<const float *>(a.inputs[2]);
    p.var = static_cast<const float *>(a.inputs[3]);
    p.gamma = static_cast<const float *>(a.inputs[4]);
    p.dgamma = static_cast<float *>(a.outputs[1]);
    p.dbeta = static_cast<float *>(a.outputs[2]);
    p.mean_stride = mean_stride_;
    p.var_stride = var_stride_;
    p.gamma_stride = gamma_stride_;
    p.dgamma_stride = dgamma_stride_;
    p.dbeta_stride = dbeta_stride_;
    check_cuda(gpu::batchnorm_backward(dtype_, p, a.outputs[0], a.inputs[0], a.inputs[1], lines_, s),
               "batchnorm backward kernel");
  }

 private:
  double eps_;
  int32_t dtype_;
  int64_t mean_stride_, var_stride_, gamma_stride_, dgamma_stride_, dbeta_stride_;
  gpu::Lines<3> lines_;
};

// "" when t is F32 [channels].
std::string check_channel_vector(const nnrt_tensor_desc &t, const char *name, int64_t channels) {
  if (t.dtype == NNRT_DTYPE_F32 && t.ndim == 1 && t.dims[0] == channels) return "";
  return std::string(name) + " must be F32 [C] with C = " + std::to_string(channels);
}

}  // namespace

std::string batchnorm_refusal(const nnrt_op_desc &d) {
  const bool backward = d.kind == NNRT_OP_BATCHNORM_BACKWARD;
  const bool training = !backward && (d.attrs.flags & NNRT_FLAG_TRAINING) != 0;
  const int inputs = backward || !training ? 5 : 3, outputs = backward || training ? 3 : 1;
  std::string e = check_counts(d, inputs, inputs, outputs, outputs);
  if (!e.empty()) return e;
  const nnrt_tensor_desc &x = d.inputs[0];
  if (!is_float(x.dtype)) return "batchnorm needs a float x";
  if (x.ndim < 2) return "batchnorm needs x of rank >= 2 ([N, C, ...])";
  if (!(d.attrs.eps >= 0)) return "eps must be >= 0";
  const nnrt_tensor_desc &y = d.outputs[0];  // y, or dx
  if (y.dtype != x.dtype || !same_dims(y, x)) return "the output must match x in dtype and dims";
  const int64_t channels = x.dims[1];
  if (backward) {
    if (d.inputs[1].dtype != x.dtype || !same_dims(d.inputs[1], x)) return "dy must match x in dtype and dims";
    const char *names[] = {"mean", "var", "gamma"};
    for (int i = 0; i < 3; ++i)
      if (!(e = check_channel_vector(d.inputs[2 + i], names[i], channels)).empty()) return e;
    if (!(e = check_channel_vector(d.outputs[1], "dgamma", channels)).empty()) return e;
    return check_channel_vector(d.outputs[2], "dbeta", channels);
  }
  const char *names[] = {"gamma", "beta", "mean", "var"};
  for (int i = 1; i < d.n_inputs; ++i)
    if (!(e = check_channel_vector(d.inputs[i], names[i - 1], channels)).empty()) return e;
  for (int i = 1; i < d.n_outputs; ++i)
    if (!(e = check_channel_vector(d.outputs[i], names[i + 1], channels)).empty()) return e;
  return "";
}

std::unique_ptr<Op> create_batchnorm_op(const nnrt_op_desc &d) {
  if (d.kind == NNRT_OP_BATCHNORM) return std::make_unique<BatchnormOp>(d);
  return std::make_unique<BatchnormBackwardOp>(d);
}

}  // namespace nnrt::cudnn
