// The output layer: a dense layer, an activation and a loss. Training computes the loss from its
// pre-activation where the pair allows a stable fused form (softmax + nll is cross-entropy on the
// logits, sigmoid + bce is bce-with-logits), so its backward pass starts from the gradient with
// respect to the pre-activation rather than the output.
//
// With "flatten": false it is applied to each position of the example's leading dims, as dense is
// ([T, in] -> [T, units]: a language model's next-token logits at every position), and takes one
// label per position ([N, T] class indices, or [N, T, units] targets). The loss is then the mean
// over every position of every example: each position is one row of the [rows, units] matrices
// the loss ops see.
#pragma once

#include "model/activation.h"
#include "model/layer.h"

namespace nnrt::model {

class OutputLayer : public Layer {
 public:
  int64_t units = 0;
  Activation activation;
  std::string loss_name;
  nnrt_loss_alg loss_alg = NNRT_LOSS_MSE;
  bool loss_on_logits = false;  // the loss takes the pre-activation (fused form)
  bool bias = true;
  bool flatten = true;  // false: per position of the leading dims
  Init init;
  int64_t in_features = 0;
  int64_t positions = 1;  // rows per example: 1, or the product of the leading dims
  Shape out_shape;        // per example: [units], or the leading dims and units

  // True for the class losses (labels are class indices or distributions).
  bool class_loss() const { return loss_alg == NNRT_LOSS_SOFTMAX_CROSS_ENTROPY || loss_alg == NNRT_LOSS_NLL; }

  Shape build(const std::vector<Shape> &inputs) override;
  std::vector<ParamSpec> param_specs() const override;
  // One example's labels as class indices: rank 0 (one index) or the leading dims (one per position).
  Shape label_shape() const;

  // Saves {input rows [N * positions, in], pre-activation z, output y} (z and y as rows); returns y
  // shaped [N, out_shape...].
  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override;
  // Per position with "flatten": false over [T, in] examples.
  StepSupport step_support() const override;
  // `dout` is the gradient with respect to the pre-activation z as rows (see loss_gradient).
  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &out,
                const Saved &saved, const Array &dout, std::vector<Array> &din,
                std::vector<Array> &dparams) const override;

  // The mean loss of the batch (rank 0, F32) from a saved forward pass.
  Array loss(Pass &pass, const Saved &saved, const Array &target) const;
  // The gradient of loss() times `scale` with respect to the pre-activation z (F32, as rows).
  Array loss_gradient(Pass &pass, const Saved &saved, const Array &target, double scale) const;
  // Checks labels against this layer: class indices need a class loss and are [batch,
  // label_shape...]; targets are [batch, out_shape...].
  void check_target(const Array &target, int64_t batch) const;

 private:
  Array target_rows(Context &ctx, const Array &target) const;
};

}  // namespace nnrt::model
