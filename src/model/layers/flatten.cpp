// flatten: [d1, d2, ...] -> [d1 * d2 * ...] per example; a view when the input is contiguous.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class FlattenLayer : public Layer {
 public:
  int64_t features = 0;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    features = inputs[0].numel();
    return Shape{features};
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    return ops::reshape(pass.ctx, in[0], {in[0].dim(0), features});
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (pass.needs_input_grad(0)) din[0] = ops::reshape(pass.ctx, dout, in[0].shape().vec());
  }
};

}  // namespace

std::unique_ptr<Layer> make_flatten(JsonReader &) { return std::make_unique<FlattenLayer>(); }

}  // namespace nnrt::model
