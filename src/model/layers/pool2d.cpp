// maxpool2d and avgpool2d over [C, H, W] examples: "kernel", "stride" (default: the kernel),
// "padding" ([h, w] or [top, left, bottom, right]), and for averages "count_include_pad" (default
// true, as PyTorch).
#include "core/checked_math.h"
#include "model/layer.h"

namespace nnrt::model {
namespace {

class Pool2dLayer : public Layer {
 public:
  ops::Pool2dParams p;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    if (inputs[0].rank != 3) shape_error("expects examples shaped [channels, height, width], got ", to_string(inputs[0]));
    try {
      Shape out = ops::pool2d_output_shape(with_batch(1, inputs[0]), p);
      return Shape{out[1], out[2], out[3]};
    } catch (const Error &e) {
      shape_error(e.what());
    }
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    return ops::pool2d(pass.ctx, in[0], p);
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (pass.needs_input_grad(0)) din[0] = ops::pool2d_backward(pass.ctx, dout, in[0], p);
  }
};

std::unique_ptr<Layer> make_pool(JsonReader &config, nnrt_pool_alg alg) {
  auto l = std::make_unique<Pool2dLayer>();
  l->p.alg = alg;
  if (!config.has("kernel")) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("kernel"), " is required");
  std::vector<int64_t> k = config.get_int_or_list("kernel", {}, 2, 1);
  std::vector<int64_t> s = config.get_int_or_list("stride", k, 2, 1);
  // [h, w] pads both sides alike; [top, left, bottom, right] (as ONNX's pads) need not.
  bool four = config.has("padding") && config.raw("padding").is_array() && config.raw("padding").size() == 4;
  std::vector<int64_t> pad = four ? config.get_int_list("padding", {}) : config.get_int_or_list("padding", {0, 0}, 2, 0);
  for (int i = 0; i < 2; ++i) {
    l->p.kernel[i] = checked_int32(k[i], config.name("kernel").c_str());
    l->p.stride[i] = checked_int32(s[i], config.name("stride").c_str());
    l->p.pad[i] = checked_int32(pad[i], config.name("padding").c_str());
    l->p.pad[i + 2] = checked_int32(pad[four ? i + 2 : i], config.name("padding").c_str());
  }
  for (int64_t v : pad) {
    if (v < 0) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("padding"), ": expected values >= 0, got ", v);
  }
  if (alg != NNRT_POOL_MAX && !config.get_bool("count_include_pad", true)) l->p.alg = NNRT_POOL_AVG_EXCLUDE_PAD;
  return l;
}

}  // namespace

std::unique_ptr<Layer> make_maxpool2d(JsonReader &config) { return make_pool(config, NNRT_POOL_MAX); }
std::unique_ptr<Layer> make_avgpool2d(JsonReader &config) { return make_pool(config, NNRT_POOL_AVG_INCLUDE_PAD); }

}  // namespace nnrt::model
