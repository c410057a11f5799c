// clip: clamps every element to ["min", "max"] (either may be left out: unbounded). The gradient
// passes where the input lies inside the range.
#include <limits>

#include "model/layer.h"

namespace nnrt::model {
namespace {

class ClipLayer : public Layer {
 public:
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    return inputs[0];
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    return ops::unary(pass.ctx, NNRT_UNARY_CLIP, in[0], lo, hi);
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (pass.needs_input_grad(0)) din[0] = ops::unary_backward(pass.ctx, NNRT_UNARY_CLIP, dout, in[0], false, lo, hi);
  }
};

}  // namespace

std::unique_ptr<Layer> make_clip(JsonReader &config) {
  auto l = std::make_unique<ClipLayer>();
  l->lo = config.get_number("min", l->lo);
  l->hi = config.get_number("max", l->hi);
  if (l->lo > l->hi) fail(NNRT_ERR_INVALID_ARGUMENT, config.where(), ": min ", l->lo, " is above max ", l->hi);
  return l;
}

}  // namespace nnrt::model
