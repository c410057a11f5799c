// LOSS and LOSS_BACKWARD as CUDA kernels (kernels.h). Class-index targets are checked on the
// device: an index outside [0, C) sets a flag in the workspace, which the run reads back (one small
// copy and a wait) to fail with NNRT_ERR_INVALID_ARGUMENT as every backend does.
#include <cstring>

#include "kernels.h"
#include "ops.h"

namespace nnrt::cudnn {

namespace {

bool class_loss_alg(int32_t alg) { return alg == NNRT_LOSS_SOFTMAX_CROSS_ENTROPY || alg == NNRT_LOSS_NLL; }
bool index_dtype(int32_t dtype) { return dtype == NNRT_DTYPE_I32 || dtype == NNRT_DTYPE_I64; }

gpu::ClassLoss class_geometry(const nnrt_op_desc &d, bool backward) {
  gpu::ClassLoss c;
  std::memset(&c, 0, sizeof c);
  const nnrt_tensor_desc &pred = d.inputs[0], &target = d.inputs[1];
  c.alg = d.attrs.alg;
  c.dtype = pred.dtype;
  c.target_dtype = target.dtype;
  c.rows = pred.dims[0];
  c.classes = pred.dims[1];
  c.pred_row = pred.strides[0];
  c.pred_col = pred.strides[1];
  c.target_row = target.strides[0];
  c.target_col = target.ndim > 1 ? target.strides[1] : 0;
  if (backward) {
    c.dpred_row = d.outputs[0].strides[0];
    c.dpred_col = d.outputs[0].strides[1];
  }
  return c;
}

// The workspace of a class loss: the flag, then the row terms (8-byte aligned).
constexpr size_t kFlagBytes = 16;

void check_indices(const nnrt_op_args &a, const gpu::ClassLoss &c, cudaStream_t s) {
  int bad = 0;
  check_cuda(cudaMemcpyAsync(&bad, a.workspace, sizeof bad, cudaMemcpyDeviceToHost, s), "read the index check");
  check_cuda(cudaStreamSynchronize(s), "wait for the index check");
  if (bad) {
    throw Failure(NNRT_ERR_INVALID_ARGUMENT, "a class index of target is outside the classes [0, " +
                                                 std::to_string(c.classes) + ") of pred");
  }
}

class LossOp final : public Op {
 public:
  explicit LossOp(const nnrt_op_desc &d) : d_(d), class_(class_loss_alg(d.attrs.alg)) {
    if (class_) {
      c_ = class_geometry(d, false);
    } else {
      const int64_t *strides[2] = {d.inputs[0].strides, d.inputs[1].strides};
      std::memset(&all_.outer, 0, sizeof all_.outer);
      std::memset(&all_.inner, 0, sizeof all_.inner);
      all_.count = 1;
      all_.length = kernels::make_strided_index<2>(d.inputs[0].ndim, d.inputs[0].dims, strides, &all_.inner);
    }
  }
  size_t workspace_bytes() const override {
    return class_ ? kFlagBytes + sizeof(double) * static_cast<size_t>(c_.rows) : 0;
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    if (!class_) {
      check_cuda(gpu::elementwise_loss(d_.attrs.alg, d_.inputs[0].dtype, a.outputs[0], a.inputs[0], a.inputs[1], all_, s),
                 "loss kernel");
      return;
    }
    int *flag = static_cast<int *>(a.workspace);
    double *terms = reinterpret_cast<double *>(static_cast<char *>(a.workspace) + kFlagBytes);
    check_cuda(cudaMemsetAsync(flag, 0, sizeof(int), s), "clear the index check");
    check_cuda(gpu::class_loss(c_, a.outputs[0], a.inputs[0], a.inputs[1], terms, flag, s), "class loss kernel");
    if (index_dtype(c_.target_dtype)) check_indices(a, c_, s);
  }

 private:
  nnrt_op_desc d_;
  bool class_;
  gpu::ClassLoss c_{};
  gpu::Lines<2> all_{};
};

class LossBackwardOp final : public Op {
 public:
  explicit LossBackwardOp(const nnrt_op_desc &d) : d_(d), class_(class_loss_alg(d.attrs.alg)) {
    if (class_) {
      c_ = class_geometry(d, true);
    } else {
      const int64_t *strides[3] = {d.outputs[0].strides, d.inputs[0].strides, d.inputs[1].strides};
      std::memset(&index_, 0, sizeof index_);
      n_ = kernels::make_strided_index<3>(d.inputs[0].ndim, d.inputs[0].dims, strides, &index_);
    }
  }
  size_t workspace_bytes() const override { return class_ ? kFlagBytes : 0; }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    if (!class_) {
      check_cuda(gpu::elementwise_loss_backward(d_.attrs.alg, d_.inputs[0].dtype, a.outputs[0], a.inputs[0],
                                                a.inputs[1], a.scalars[NNRT_SCALAR_LOSS_SCALE], index_, n_, s),
                 "loss backward kernel");
      return;
    }
    int *flag = static_cast<int *>(a.workspace);
    check_cuda(cudaMemsetAsync(flag, 0, sizeof(int), s), "clear the index check");
    check_cuda(gpu::class_loss_backward(c_, a.outputs[0], a.inputs[0], a.inputs[1], a.scalars[NNRT_SCALAR_LOSS_SCALE],
                                        flag, s),
               "class loss backward kernel");
    if (index_dtype(c_.target_dtype)) check_indices(a, c_, s);
  }

 private:
  nnrt_op_desc d_;
  bool class_;
  gpu::ClassLoss c_{};
  gpu::Index3 index_{};
  int64_t n_ = 0;
};

}  // namespace

std::string loss_refusal(const nnrt_op_desc &d) {
  const bool backward = d.kind == NNRT_OP_LOSS_BACKWARD;
  std::string e = check_counts(d, 2, 2, 1, 1);
  if (!e.empty()) return e;
  const nnrt_tensor_desc &pred = d.inputs[0], &target = d.inputs[1], &out = d.outputs[0];
  if (d.attrs.alg < NNRT_LOSS_SOFTMAX_CROSS_ENTROPY || d.attrs.alg > NNRT_LOSS_BCE_WITH_LOGITS) return "unknown loss alg";
  if (!is_float(pred.dtype) || out.dtype != pred.dtype) return "losses need a float pred and output of its dtype";
  if (backward ? !same_dims(out, pred) : out.ndim != 0) return "the output has the wrong dims";
  if (!class_loss_alg(d.attrs.alg)) {
    if (target.dtype != pred.dtype || !same_dims(target, pred)) return "target must match pred in dtype and dims";
    return "";
  }
  if (pred.ndim != 2) return "the class losses take pred [N, C]";
  if (index_dtype(target.dtype)) {
    if (target.ndim != 1 || target.dims[0] != pred.dims[0]) return "class indices must be [N]";
  } else if (target.dtype != pred.dtype || !same_dims(target, pred)) {
    return "a target distribution must match pred in dtype and dims";
  }
  return "";
}

std::unique_ptr<Op> create_loss_op(const nnrt_op_desc &d) {
  if (d.kind == NNRT_OP_LOSS) return std::make_unique<LossOp>(d);
  return std::make_unique<LossBackwardOp>(d);
}

}  // namespace nnrt::cudnn
