// dense: y = activation(x W^T + b), with x flattened per example; or, with "flatten": false, applied
// to the last dim of each example ([..., in] -> [..., units]: each token of a sequence alike, as
// PyTorch's nn.Linear on a [N, T, in] input). Weight [units, in] as PyTorch's nn.Linear.
// Activations that can be back-propagated from the output run fused with the matmul, and so do the
// others (GELU after a transformer's first feed-forward product) outside training. With an
// "int8" object (nnrt_model_quantize) the weight is I8 and the product integer (int8_weights.h).
#include "model/activation.h"
#include "model/layer.h"
#include "model/layers/int8_weights.h"

namespace nnrt::model {
namespace {

class DenseLayer : public Layer {
 public:
  int64_t units = 0, in_features = 0;
  Activation activation;
  Init init;
  bool bias = true, flatten = true;
  std::optional<Int8Layer> int8;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (flatten || x.rank == 0) {
      in_features = x.numel();
      return Shape{units};
    }
    in_features = x[x.rank - 1];
    Shape y = x;
    y[y.rank - 1] = units;
    return y;
  }

  std::vector<ParamSpec> param_specs() const override {
    std::vector<ParamSpec> p = {{"weight", Shape{units, in_features}, init, in_features, units}};
    if (bias) p.push_back({"bias", Shape{units}, Init{}, in_features, units});
    if (int8) int8->adapt(p, units);
    return p;
  }

  std::string why_not_trainable() const override { return int8 ? kInt8NotTrainable : ""; }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override {
    Context &ctx = pass.ctx;
    // Rows of in_features: one per example, or one per position of the leading dims.
    Array x = ops::reshape(ctx, in[0], {-1, in_features});
    Array wt = ops::transpose(params[0], {1, 0});
    const Array *b = bias ? &params[1] : nullptr;
    if (int8) {
      // Every elementwise activation runs fused: nothing back-propagates through a quantized layer.
      const bool fuse = activation.fusable_forward();
      Array y = ops::matmul_int8(ctx, int8->quantized_input(ctx, x), int8->input, wt, params.back(), b,
                                 int8->weights_7bit(), fuse ? activation.fused_alg() : NNRT_UNARY_NONE, activation.alpha);
      // In the pass's float type, as the float layer's output (f32 unless the context computes in bf16 or f16).
      return output_shaped(ctx, as_dtype(ctx, fuse ? y : activation.forward(ctx, y), pass.dtype), in[0]);
    }
    // ops::matmul takes one activation parameter: hardsigmoid's beta and relu6's max are not.
    if (activation.fusable() || (!pass.training && activation.fusable_forward() && activation.beta == 0)) {
      saved.arrays = {x};
      return output_shaped(ctx, ops::matmul(ctx, x, wt, b, activation.fused_alg(), activation.alpha), in[0]);
    }
    Array z = ops::matmul(ctx, x, wt, b);
    saved.arrays = {x, z};
    return output_shaped(ctx, activation.forward(ctx, z), in[0]);
  }

  StepSupport step_support() const override {
    if (flatten) return {StepKind::kRefused, "with \"flatten\": true it reads all positions at once"};
    return {StepKind::kPerPosition, ""};
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &out,
                const Saved &saved, const Array &dout, std::vector<Array> &din, std::vector<Array> &dparams) const override {
    Context &ctx = pass.ctx;
    if (int8) fail(NNRT_ERR_UNSUPPORTED, where(), ": ", kInt8NotTrainable);
    const Array &x = saved.arrays[0];
    Array dz = activation.backward(ctx, ops::reshape(ctx, dout, {-1, units}), activation.fusable() ? Array() : saved.arrays[1],
                                   ops::reshape(ctx, out, {-1, units}));
    if (pass.needs_input_grad(0)) din[0] = ops::reshape(ctx, ops::matmul(ctx, dz, params[0]), in[0].shape().vec());
    dparams[0] = ops::matmul(ctx, ops::transpose(dz, {1, 0}), x);
    if (bias) dparams[1] = ops::reduce(ctx, NNRT_REDUCE_SUM, dz, 1u, false);
  }

 private:
  // y [rows, units] as the layer's output: [N, units], or x's shape with units last.
  Array output_shaped(Context &ctx, const Array &y, const Array &x) const {
    if (flatten || x.rank() <= 2) return y;
    std::vector<int64_t> dims = x.shape().vec();
    dims.back() = units;
    return ops::reshape(ctx, y, dims);
  }
};

}  // namespace

std::unique_ptr<Layer> make_dense(JsonReader &config) {
  auto l = std::make_unique<DenseLayer>();
  l->units = config.require_int("units", 1);
  l->activation = read_activation(config, "activation", "identity");
  l->init = read_init(config, "init", Init{Init::kXavier});
  l->bias = config.get_bool("bias", true);
  l->flatten = config.get_bool("flatten", true);
  l->int8 = read_int8_layer(config);
  return l;
}

}  // namespace nnrt::model
