#include "model/layers/output.h"

#include "core/dtype.h"

namespace nnrt::model {

Shape OutputLayer::build(const std::vector<Shape> &inputs) {
  if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
  in_features = inputs[0].numel();
  return Shape{units};
}

std::vector<ParamSpec> OutputLayer::param_specs() const {
  std::vector<ParamSpec> p = {{"weight", Shape{units, in_features}, init, in_features, units}};
  if (bias) p.push_back({"bias", Shape{units}, Init{}, in_features, units});
  return p;
}

Array OutputLayer::forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params,
                           Saved &saved) const {
  Context &ctx = pass.ctx;
  Array x = ops::reshape(ctx, in[0], {in[0].dim(0), in_features});
  Array z = ops::matmul(ctx, x, ops::transpose(params[0], {1, 0}), bias ? &params[1] : nullptr);
  Array y = activation.forward(ctx, z);
  saved.arrays = {x, z, y};
  return y;
}

void OutputLayer::check_target(const Array &target, int64_t batch) const {
  bool indices = target.dtype() == NNRT_DTYPE_I32 || target.dtype() == NNRT_DTYPE_I64;
  if (indices) {
    if (!class_loss()) {
      fail(NNRT_ERR_INVALID_ARGUMENT, where(), ": loss \"", loss_name, "\" needs float targets shaped [", batch, ", ",
           units, "], got class indices");
    }
    if (target.shape() != Shape{batch}) {
      fail(NNRT_ERR_SHAPE, where(), ": expected ", batch, " class labels, got ", to_string(target.shape()));
    }
    return;
  }
  if (!dtype_is_float(target.dtype())) {
    fail(NNRT_ERR_DTYPE, where(), ": labels must be class indices (i32, i64) or float targets, got ",
         dtype_name(target.dtype()));
  }
  if (target.shape() != Shape{batch, units}) {
    fail(NNRT_ERR_SHAPE, where(), ": expected targets shaped [", batch, ", ", units, "], got ", to_string(target.shape()));
  }
}

Array OutputLayer::loss(Pass &pass, const Saved &saved, const Array &target) const {
  Context &ctx = pass.ctx;
  // Losses are computed in F32 whatever the activations' dtype: half precision would lose them.
  const Array &pred = loss_on_logits ? saved.arrays[1] : saved.arrays[2];
  Array t = dtype_is_float(target.dtype()) ? as_dtype(ctx, target, NNRT_DTYPE_F32) : target;
  return ops::loss(ctx, loss_alg, as_dtype(ctx, pred, NNRT_DTYPE_F32), t);
}

Array OutputLayer::loss_gradient(Pass &pass, const Saved &saved, const Array &target, double scale) const {
  Context &ctx = pass.ctx;
  Array t = dtype_is_float(target.dtype()) ? as_dtype(ctx, target, NNRT_DTYPE_F32) : target;
  if (loss_on_logits) return ops::loss_backward(ctx, loss_alg, as_dtype(ctx, saved.arrays[1], NNRT_DTYPE_F32), t, scale);
  Array z = as_dtype(ctx, saved.arrays[1], NNRT_DTYPE_F32), y = as_dtype(ctx, saved.arrays[2], NNRT_DTYPE_F32);
  Array dy = ops::loss_backward(ctx, loss_alg, y, t, scale);
  return activation.backward(ctx, dy, z, y);
}

void OutputLayer::backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &,
                           const Saved &saved, const Array &dout, std::vector<Array> &din,
                           std::vector<Array> &dparams) const {
  Context &ctx = pass.ctx;
  const Array &x = saved.arrays[0];
  Array dz = as_dtype(ctx, dout, x.dtype());
  if (pass.needs_input_grad(0)) din[0] = ops::reshape(ctx, ops::matmul(ctx, dz, params[0]), in[0].shape().vec());
  dparams[0] = ops::matmul(ctx, ops::transpose(dz, {1, 0}), x);
  if (bias) dparams[1] = ops::reduce(ctx, NNRT_REDUCE_SUM, dz, 1u, false);
}

std::unique_ptr<Layer> make_output(JsonReader &config) {
  auto l = std::make_unique<OutputLayer>();
  l->units = config.require_int("units", 1);
  l->activation = read_activation(config, "activation", "softmax");
  l->loss_name = config.require_string("loss");
  const std::string &loss = l->loss_name;
  const Activation &a = l->activation;
  if (loss == "nll" || loss == "cross_entropy" || loss == "mcxent" || loss == "negativeloglikelihood") {
    // With softmax (or log_softmax) the pair is cross-entropy on the logits; with identity the
    // outputs are taken to be log-probabilities already.
    if (a.softmax || a.log_softmax) {
      l->loss_alg = NNRT_LOSS_SOFTMAX_CROSS_ENTROPY;
      l->loss_on_logits = true;
    } else if (a.alg == NNRT_UNARY_IDENTITY) {
      l->loss_alg = NNRT_LOSS_NLL;
    } else {
      fail(NNRT_ERR_INVALID_ARGUMENT, config.name("loss"), ": \"", loss,
           "\" needs the softmax, log_softmax or identity activation, got \"", a.name, "\"");
    }
  } else if (loss == "bce" || loss == "xent" || loss == "binary_cross_entropy") {
    if (a.alg == NNRT_UNARY_SIGMOID && !a.softmax && !a.log_softmax) {
      l->loss_alg = NNRT_LOSS_BCE_WITH_LOGITS;
      l->loss_on_logits = true;
    } else if (a.alg == NNRT_UNARY_IDENTITY && !a.softmax && !a.log_softmax) {
      l->loss_alg = NNRT_LOSS_BCE;  // outputs are probabilities already
    } else {
      fail(NNRT_ERR_INVALID_ARGUMENT, config.name("loss"), ": \"bce\" needs the sigmoid (or identity) activation, got \"",
           a.name, "\"");
    }
  } else if (loss == "mse") {
    l->loss_alg = NNRT_LOSS_MSE;
  } else if (loss == "l1" || loss == "mae") {
    l->loss_alg = NNRT_LOSS_L1;
  } else {
    fail(NNRT_ERR_INVALID_ARGUMENT, config.name("loss"), ": unknown loss \"", loss,
         "\" (expected nll / cross_entropy, mse, l1, bce)");
  }
  l->init = read_init(config, "init", Init{Init::kXavier});
  l->bias = config.get_bool("bias", true);
  return l;
}

}  // namespace nnrt::model
