// dense: y = activation(x W^T + b), with x flattened per example. Weight [units, in] as PyTorch's
// nn.Linear. Activations that can be back-propagated from the output run fused with the matmul.
#include "model/activation.h"
#include "model/layer.h"

namespace nnrt::model {
namespace {

class DenseLayer : public Layer {
 public:
  int64_t units = 0, in_features = 0;
  Activation activation;
  Init init;
  bool bias = true;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    in_features = inputs[0].numel();
    return Shape{units};
  }

  std::vector<ParamSpec> param_specs() const override {
    std::vector<ParamSpec> p = {{"weight", Shape{units, in_features}, init, in_features, units}};
    if (bias) p.push_back({"bias", Shape{units}, Init{}, in_features, units});
    return p;
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override {
    Context &ctx = pass.ctx;
    Array x = ops::reshape(ctx, in[0], {in[0].dim(0), in_features});
    Array wt = ops::transpose(params[0], {1, 0});
    const Array *b = bias ? &params[1] : nullptr;
    if (activation.fusable()) {
      saved.arrays = {x};
      return ops::matmul(ctx, x, wt, b, activation.fused_alg(), activation.alpha);
    }
    Array z = ops::matmul(ctx, x, wt, b);
    saved.arrays = {x, z};
    return activation.forward(ctx, z);
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &out,
                const Saved &saved, const Array &dout, std::vector<Array> &din, std::vector<Array> &dparams) const override {
    Context &ctx = pass.ctx;
    const Array &x = saved.arrays[0];
    Array dz = activation.backward(ctx, dout, activation.fusable() ? Array() : saved.arrays[1], out);
    if (pass.needs_input_grad(0)) din[0] = ops::reshape(ctx, ops::matmul(ctx, dz, params[0]), in[0].shape().vec());
    dparams[0] = ops::matmul(ctx, ops::transpose(dz, {1, 0}), x);
    if (bias) dparams[1] = ops::reduce(ctx, NNRT_REDUCE_SUM, dz, 1u, false);
  }
};

}  // namespace

std::unique_ptr<Layer> make_dense(JsonReader &config) {
  auto l = std::make_unique<DenseLayer>();
  l->units = config.require_int("units", 1);
  l->activation = read_activation(config, "activation", "identity");
  l->init = read_init(config, "init", Init{Init::kXavier});
  l->bias = config.get_bool("bias", true);
  return l;
}

}  // namespace nnrt::model
