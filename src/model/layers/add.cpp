// add: the elementwise sum of two or more inputs of one shape (residual connections). Its gradient
// is the output's, passed unchanged to every input.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class AddLayer : public Layer {
 public:
  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() < 2) shape_error("takes two or more inputs, got ", inputs.size());
    for (size_t k = 1; k < inputs.size(); ++k) {
      if (inputs[k] != inputs[0]) {
        shape_error("inputs must have one shape, but input 0 is ", to_string(inputs[0]), " and input ", k, " is ",
                    to_string(inputs[k]));
      }
    }
    return inputs[0];
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    Array sum = ops::add(pass.ctx, in[0], in[1]);
    for (size_t k = 2; k < in.size(); ++k) ops::binary_into(pass.ctx, NNRT_BINARY_ADD, sum, in[k], sum);
    return sum;
  }

  StepSupport step_support() const override { return {StepKind::kPerPosition, ""}; }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    // Sharing dout is safe: gradients are never updated in place.
    for (size_t k = 0; k < in.size(); ++k)
      if (pass.needs_input_grad(k)) din[k] = dout;
  }
};

}  // namespace

std::unique_ptr<Layer> make_add(JsonReader &) { return std::make_unique<AddLayer>(); }

}  // namespace nnrt::model
