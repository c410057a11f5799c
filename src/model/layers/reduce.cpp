// reduce: the sum or mean ("op") of each example over "axes" (per-example dims; negative counts
// from the end; empty: all), keeping them as size 1 when "keepdims" (default true). The gradient
// is the output's, spread over what was reduced (divided by the count for the mean).
#include "model/layer.h"

namespace nnrt::model {
namespace {

class ReduceLayer : public Layer {
 public:
  bool mean = false, keepdims = true;
  std::vector<int64_t> axes;
  uint32_t mask = 0;  // over batch dims (bit 0 = batch, never set)
  int64_t count = 1;
  Shape kept;         // the output with reduced dims kept as 1 (per example)

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    mask = 0;
    std::vector<int64_t> all;
    for (int32_t i = 0; i < x.rank; ++i) all.push_back(i);
    for (int64_t a : axes.empty() ? all : axes) {
      if (a < -x.rank || a >= x.rank) shape_error("axis ", a, " is out of range for examples shaped ", to_string(x));
      int32_t d = static_cast<int32_t>(a < 0 ? a + x.rank : a);
      if (mask & (1u << (d + 1))) shape_error("axis ", a, " is given twice");
      mask |= 1u << (d + 1);
    }
    kept = x;
    count = 1;
    Shape out;
    for (int32_t i = 0; i < x.rank; ++i) {
      if (mask & (1u << (i + 1))) {
        count *= x[i];
        kept[i] = 1;
        if (keepdims) out.dims[out.rank++] = 1;
      } else {
        out.dims[out.rank++] = x[i];
      }
    }
    return out;
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    Array r = ops::reduce(pass.ctx, mean ? NNRT_REDUCE_MEAN : NNRT_REDUCE_SUM, in[0], mask, true);
    return keepdims ? r : ops::reshape(pass.ctx, r, out_dims(in[0].dim(0)));
  }

  std::vector<int64_t> out_dims(int64_t n) const {
    std::vector<int64_t> d = {n};
    for (int32_t i = 0; i < kept.rank; ++i)
      if (!(mask & (1u << (i + 1)))) d.push_back(kept[i]);
    return d;
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (!pass.needs_input_grad(0)) return;
    Context &ctx = pass.ctx;
    Array g = ops::reshape(ctx, dout, with_batch(in[0].dim(0), kept).vec());
    if (mean) g = ops::scale(ctx, g, 1.0 / static_cast<double>(count));
    din[0] = ops::add(ctx, ops::zeros(ctx, g.dtype(), in[0].shape()), g);
  }
};

}  // namespace

std::unique_ptr<Layer> make_reduce(JsonReader &config) {
  auto l = std::make_unique<ReduceLayer>();
  std::string op = config.get_string("op", "");
  if (op != "sum" && op != "mean") fail(NNRT_ERR_INVALID_ARGUMENT, config.name("op"), ": expected \"sum\" or \"mean\", got \"", op, "\"");
  l->mean = op == "mean";
  l->axes = config.get_int_list("axes", {});
  l->keepdims = config.get_bool("keepdims", true);
  return l;
}

}  // namespace nnrt::model
