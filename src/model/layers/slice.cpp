// slice: "length" consecutive entries from "start" along per-example dim "axis" of each example
// (ONNX's Gather of one index, PyTorch's y[:, t:t+1]). The gradient lands in those entries; the
// others get zeros.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class SliceLayer : public Layer {
 public:
  int64_t axis = 0, start = 0, length = 1;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (axis >= x.rank) shape_error("axis ", axis, " is out of range for examples shaped ", to_string(x));
    if (start + length > x[static_cast<int32_t>(axis)]) {
      shape_error("entries ", start, "..", start + length - 1, " do not fit dim ", axis, " of examples shaped ", to_string(x));
    }
    Shape out = x;
    out[static_cast<int32_t>(axis)] = length;
    return out;
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    return ops::contiguous(pass.ctx, in[0].slice(static_cast<int32_t>(axis) + 1, start, length));
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (!pass.needs_input_grad(0)) return;
    din[0] = ops::zeros(pass.ctx, dout.dtype(), in[0].shape());
    ops::copy_into(pass.ctx, dout, din[0].slice(static_cast<int32_t>(axis) + 1, start, length));
  }
};

}  // namespace

std::unique_ptr<Layer> make_slice(JsonReader &config) {
  auto l = std::make_unique<SliceLayer>();
  l->axis = config.require_int("axis", 0, NNRT_MAX_DIMS - 2);
  l->start = config.require_int("start", 0, INT64_MAX / 2);
  l->length = config.get_int("length", 1, 1, INT64_MAX / 2);
  return l;
}

}  // namespace nnrt::model
