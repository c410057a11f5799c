// The output layer: a dense layer, an activation and a loss. Training computes the loss from its
// pre-activation where the pair allows a stable fused form (softmax + nll is cross-entropy on the
// logits, sigmoid + bce is bce-with-logits), so its backward pass starts from the gradient with
// respect to the pre-activation rather than the output.
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
  Init init;
  int64_t in_features = 0;

  // True for the class losses (labels are class indices or distributions).
  bool class_loss() const { return loss_alg == NNRT_LOSS_SOFTMAX_CROSS_ENTROPY || loss_alg == NNRT_LOSS_NLL; }

  Shape build(const std::vector<Shape> &inputs) override;
  std::vector<ParamSpec> param_specs() const override;
  // Saves {flattened input, pre-activation z, output y}; returns y.
  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override;
  // `dout` is the gradient with respect to the pre-activation z (see loss_gradient).
  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &out,
                const Saved &saved, const Array &dout, std::vector<Array> &din,
                std::vector<Array> &dparams) const override;

  // The mean loss of the batch (rank 0, F32) from a saved forward pass.
  Array loss(Pass &pass, const Saved &saved, const Array &target) const;
  // The gradient of loss() times `scale` with respect to the pre-activation z (F32).
  Array loss_gradient(Pass &pass, const Saved &saved, const Array &target, double scale) const;
  // Checks labels against this layer: class indices need a class loss, targets the output shape.
  void check_target(const Array &target, int64_t batch) const;
};

}  // namespace nnrt::model
