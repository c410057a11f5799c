// layer_norm and rms_norm: each example normalized over its last "normalized_dims" dims (default 1),
// as PyTorch's LayerNorm(normalized_shape) and RMSNorm. layer_norm subtracts the mean and divides by
// the standard deviation; rms_norm divides by the root mean square. With "affine" (default true)
// the result is scaled by the parameter weight (ones at first) and, with "bias" (default true for
// layer_norm, false for rms_norm), shifted by bias (zeros); both F32 with the normalized dims.
// Training and inference compute the same thing (no running statistics); training keeps each
// row's mean and variance for the backward pass.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class LayerNormLayer : public Layer {
 public:
  nnrt_norm_alg alg = NNRT_NORM_LAYER;
  int64_t normalized_dims = 1;
  double eps = 1e-5;
  bool affine = true, bias = true;
  Shape normalized;
  int32_t example_rank = 0;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (normalized_dims > x.rank) {
      shape_error("normalizes the last ", normalized_dims, " dims, but examples are shaped ", to_string(x));
    }
    example_rank = x.rank;
    normalized = Shape::of(x.dims.data() + (x.rank - normalized_dims), static_cast<int32_t>(normalized_dims));
    return x;
  }

  std::vector<ParamSpec> param_specs() const override {
    std::vector<ParamSpec> specs;
    if (affine) specs.push_back({"weight", normalized, Init{Init::kConstant, 1}});
    if (affine && bias) specs.push_back({"bias", normalized, Init{}});
    return specs;
  }

  ops::LayernormParams params_for(const Array &x) const {
    ops::LayernormParams p;
    p.alg = alg;
    p.axis = static_cast<int32_t>(x.rank() - normalized_dims);
    p.eps = eps;
    return p;
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override {
    const Array *gamma = affine ? &params[0] : nullptr, *beta = affine && bias ? &params[1] : nullptr;
    ops::LayernormStats s = ops::layernorm(pass.ctx, in[0], gamma, beta, params_for(in[0]), pass.training);
    if (pass.training) saved.arrays = {s.mean, s.var};
    return s.y;
  }

  StepSupport step_support() const override {
    if (normalized_dims >= example_rank) return {StepKind::kRefused, "it normalizes over the positions too (\"normalized_dims\")"};
    return {StepKind::kPerPosition, ""};
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &,
                const Saved &saved, const Array &dout, std::vector<Array> &din, std::vector<Array> &dparams) const override {
    if (saved.arrays.empty()) fail(NNRT_ERR_INTERNAL, where(), ": backward needs a training forward pass");
    ops::LayernormGrads g = ops::layernorm_backward(pass.ctx, in[0], dout, saved.arrays[0], saved.arrays[1],
                                                    affine ? &params[0] : nullptr, params_for(in[0]), affine);
    if (pass.needs_input_grad(0)) din[0] = g.dx;
    if (affine) dparams[0] = g.dgamma;
    if (affine && bias) dparams[1] = g.dbeta;
  }
};

std::unique_ptr<Layer> make_norm(JsonReader &config, nnrt_norm_alg alg) {
  auto l = std::make_unique<LayerNormLayer>();
  l->alg = alg;
  l->normalized_dims = config.get_int("normalized_dims", 1, 1, NNRT_MAX_DIMS - 1);
  l->eps = config.get_number("eps", 1e-5, 0);
  l->affine = config.get_bool("affine", true);
  const bool bias_given = config.has("bias");
  l->bias = config.get_bool("bias", alg == NNRT_NORM_LAYER && l->affine);
  if (bias_given && l->bias && !l->affine) {
    fail(NNRT_ERR_INVALID_ARGUMENT, config.name("bias"), ": a bias needs \"affine\": true (the default)");
  }
  return l;
}

}  // namespace

std::unique_ptr<Layer> make_layer_norm(JsonReader &config) { return make_norm(config, NNRT_NORM_LAYER); }
std::unique_ptr<Layer> make_rms_norm(JsonReader &config) { return make_norm(config, NNRT_NORM_RMS); }

}  // namespace nnrt::model
