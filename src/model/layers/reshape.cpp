// reshape: gives each example a new shape ("shape", one dim may be -1 to take what is left) with
// the same elements in the same row-major order; a view when the input is contiguous.
#include "core/checked_math.h"
#include "model/layer.h"

namespace nnrt::model {
namespace {

class ReshapeLayer : public Layer {
 public:
  std::vector<int64_t> target;  // as configured, maybe with a -1
  Shape out_shape;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &in_shape = inputs[0];
    int64_t known = 1;
    int32_t free_dim = -1;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i] == -1) free_dim = static_cast<int32_t>(i);
      else known = checked_mul(known, target[i], "reshape: the element count of \"shape\"");
    }
    std::vector<int64_t> dims = target;
    bool fits = free_dim < 0 || in_shape.numel() % known == 0;
    if (fits && free_dim >= 0) dims[free_dim] = in_shape.numel() / known;
    if (!fits || checked_numel(Shape::of(dims), "reshape") != in_shape.numel()) {
      shape_error("cannot reshape examples shaped ", to_string(in_shape), " (", in_shape.numel(), " elements) into ",
                  to_string(Shape::of(target)));
    }
    out_shape = Shape::of(dims);
    return out_shape;
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    return ops::reshape(pass.ctx, in[0], with_batch(in[0].dim(0), out_shape).vec());
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (pass.needs_input_grad(0)) din[0] = ops::reshape(pass.ctx, dout, in[0].shape().vec());
  }
};

}  // namespace

std::unique_ptr<Layer> make_reshape(JsonReader &config) {
  auto l = std::make_unique<ReshapeLayer>();
  if (!config.has("shape")) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("shape"), " is required");
  l->target = config.get_int_list("shape", {});
  if (l->target.empty() || l->target.size() >= NNRT_MAX_DIMS) {
    fail(NNRT_ERR_INVALID_ARGUMENT, config.name("shape"), ": expected 1 to ", NNRT_MAX_DIMS - 1, " dims, got ",
         l->target.size());
  }
  int free_dims = 0;
  for (int64_t d : l->target) {
    if (d == -1) ++free_dims;
    else if (d <= 0) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("shape"), ": dims must be positive (or one -1), got ", d);
  }
  if (free_dims > 1) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("shape"), ": at most one dim may be -1, got ", free_dims);
  return l;
}

}  // namespace nnrt::model
