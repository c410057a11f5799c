// activation: applies one activation function ("activation": "relu", ...; "alpha" for leaky_relu
// and elu). Softmax runs along the channel / feature dim (dim 1 of the batch).
#include "model/activation.h"
#include "model/layer.h"

namespace nnrt::model {
namespace {

class ActivationLayer : public Layer {
 public:
  Activation activation;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    return inputs[0];
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    return activation.forward(pass.ctx, in[0]);
  }

  // softmax and log_softmax run over dim 1 of the batch, the positions of a token sequence.
  StepSupport step_support() const override {
    if (activation.softmax || activation.log_softmax) return {StepKind::kRefused, "its " + activation.name + " runs across the positions"};
    return {StepKind::kPerPosition, ""};
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &out, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (pass.needs_input_grad(0)) din[0] = activation.backward(pass.ctx, dout, in[0], out);
  }
};

}  // namespace

std::unique_ptr<Layer> make_activation(JsonReader &config) {
  auto l = std::make_unique<ActivationLayer>();
  if (!config.has("activation")) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("activation"), " is required");
  l->activation = read_activation(config, "activation", "identity");
  return l;
}

}  // namespace nnrt::model
