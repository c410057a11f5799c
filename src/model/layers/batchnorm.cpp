// batchnorm: batch normalization per channel (dim 0 of an example: [C] features or [C, H, W]
// images), as PyTorch's BatchNorm1d/2d. Training normalizes with the batch's statistics and moves
// the running ones towards them ("momentum", default 0.1, with the unbiased variance); inference
// uses the running statistics. Params: weight (gamma), bias (beta), and the state running_mean,
// running_var, all F32 [C] whatever dtype the activations are computed in.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class BatchnormLayer : public Layer {
 public:
  double eps = 1e-5, momentum = 0.1;
  int64_t channels = 0;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (x.rank < 1) shape_error("expects examples shaped [channels] or [channels, height, width], got ", to_string(x));
    channels = x[0];
    return x;
  }

  std::vector<ParamSpec> param_specs() const override {
    Shape c{channels};
    return {{"weight", c, Init{Init::kConstant, 1}},
            {"bias", c, Init{}},
            {"running_mean", c, Init{}, 0, 0, false},
            {"running_var", c, Init{Init::kConstant, 1}, 0, 0, false}};
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override {
    Context &ctx = pass.ctx;
    const Array &x = in[0];
    const Array &gamma = params[0], &beta = params[1], &running_mean = params[2], &running_var = params[3];
    if (!pass.training) return ops::batchnorm_inference(ctx, x, gamma, beta, running_mean, running_var, eps);

    ops::BatchnormStats s = ops::batchnorm_training(ctx, x, gamma, beta, eps);
    saved.arrays = {s.mean, s.var};
    // The running variance estimates the population's, so it takes the unbiased batch variance
    // (n / (n - 1)); with one value per channel there is nothing to correct and the factor is 1.
    int64_t n = x.numel() / channels;
    double unbias = n > 1 ? static_cast<double>(n) / static_cast<double>(n - 1) : 1.0;
    move_towards(ctx, running_mean, s.mean, 1.0);
    move_towards(ctx, running_var, s.var, unbias);
    return s.y;
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &,
                const Saved &saved, const Array &dout, std::vector<Array> &din, std::vector<Array> &dparams) const override {
    if (saved.arrays.empty()) fail(NNRT_ERR_INTERNAL, where(), ": backward needs a training forward pass");
    ops::BatchnormGrads g = ops::batchnorm_backward(pass.ctx, in[0], dout, saved.arrays[0], saved.arrays[1], params[0], eps);
    if (pass.needs_input_grad(0)) din[0] = g.dx;
    dparams[0] = g.dgamma;
    dparams[1] = g.dbeta;
  }

 private:
  // running = (1 - momentum) * running + momentum * factor * batch, in place: the running
  // statistics are the model's own arrays, updated under the trainer's exclusive lock.
  void move_towards(Context &ctx, const Array &running, const Array &batch, double factor) const {
    Array step = ops::scale(ctx, batch, momentum * factor);
    ops::unary_into(ctx, NNRT_UNARY_LINEAR, running, running, 1.0 - momentum);
    ops::binary_into(ctx, NNRT_BINARY_ADD, running, step, running);
  }
};

}  // namespace

std::unique_ptr<Layer> make_batchnorm(JsonReader &config) {
  auto l = std::make_unique<BatchnormLayer>();
  l->eps = config.get_number("eps", 1e-5, 0);
  if (l->eps <= 0) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("eps"), ": expected a positive number, got ", l->eps);
  l->momentum = config.get_number("momentum", 0.1, 0, 1);
  return l;
}

}  // namespace nnrt::model
