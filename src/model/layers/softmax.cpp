// softmax: softmax (or with "log": true, log-softmax) of each example along "axis" (a per-example
// dim, default -1). With "flatten": true it runs over all dims from "axis" on taken as one, as ONNX
// Softmax before opset 13 does.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class SoftmaxLayer : public Layer {
 public:
  int64_t axis = -1;
  int32_t dim = 0;  // resolved per-example dim
  bool log = false, flatten = false;
  int64_t inner = 1;  // with flatten: the elements from dim on

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (x.rank < 1) shape_error("expects examples with at least one dim, got ", to_string(x));
    if (axis < -x.rank || axis >= x.rank) shape_error("axis ", axis, " is out of range for examples shaped ", to_string(x));
    dim = static_cast<int32_t>(axis < 0 ? axis + x.rank : axis);
    inner = 1;
    for (int32_t i = dim; i < x.rank; ++i) inner *= x[i];
    return x;
  }

  nnrt_softmax_alg alg() const { return log ? NNRT_LOG_SOFTMAX : NNRT_SOFTMAX; }

  // With flatten, x as [outer, inner]; else x itself.
  Array view(Context &ctx, const Array &x) const {
    return flatten ? ops::reshape(ctx, x, {x.numel() / inner, inner}) : x;
  }
  int32_t batch_axis() const { return flatten ? 1 : dim + 1; }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    Array y = ops::softmax(pass.ctx, alg(), view(pass.ctx, in[0]), batch_axis());
    return ops::reshape(pass.ctx, y, in[0].shape().vec());
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &out, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (!pass.needs_input_grad(0)) return;
    Context &ctx = pass.ctx;
    Array g = ops::softmax_backward(ctx, alg(), view(ctx, dout), view(ctx, out), batch_axis());
    din[0] = ops::reshape(ctx, g, in[0].shape().vec());
  }
};

}  // namespace

std::unique_ptr<Layer> make_softmax(JsonReader &config) {
  auto l = std::make_unique<SoftmaxLayer>();
  l->axis = config.get_int("axis", -1);
  l->log = config.get_bool("log", false);
  l->flatten = config.get_bool("flatten", false);
  return l;
}

}  // namespace nnrt::model
