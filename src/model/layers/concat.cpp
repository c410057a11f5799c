// concat: joins its inputs along one per-example dim ("axis", default 0: the channels of [C, H, W]
// or the features of [F]; negative counts from the end). The other dims must match. The gradient
// of each input is its slice of the output's.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class ConcatLayer : public Layer {
 public:
  int64_t axis = 0;  // as configured
  int32_t dim = 0;   // the per-example dim it resolves to
  std::vector<int64_t> sizes;  // each input's extent along dim

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.empty()) shape_error("takes one or more inputs, got none");
    const Shape &first = inputs[0];
    if (axis < -first.rank || axis >= first.rank) {
      shape_error("axis ", axis, " is out of range for examples shaped ", to_string(first));
    }
    dim = static_cast<int32_t>(axis < 0 ? axis + first.rank : axis);
    Shape out = first;
    out[dim] = 0;
    sizes.clear();
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Shape &s = inputs[k];
      bool fits = s.rank == first.rank;
      for (int32_t i = 0; fits && i < s.rank; ++i) fits = i == dim || s[i] == first[i];
      if (!fits) {
        shape_error("inputs must match in every dim but ", dim, ", but input 0 is ", to_string(first), " and input ",
                    k, " is ", to_string(s));
      }
      sizes.push_back(s[dim]);
      out[dim] += s[dim];
    }
    return out;
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    return ops::concat(pass.ctx, in, dim + 1);
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    int64_t at = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      // A slice is a strided view; the layers that read it may need dense memory.
      if (pass.needs_input_grad(k)) din[k] = ops::contiguous(pass.ctx, dout.slice(dim + 1, at, sizes[k]));
      at += sizes[k];
    }
  }
};

}  // namespace

std::unique_ptr<Layer> make_concat(JsonReader &config) {
  auto l = std::make_unique<ConcatLayer>();
  l->axis = config.get_int("axis", 0);
  return l;
}

}  // namespace nnrt::model
