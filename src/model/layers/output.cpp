#include "model/layers/output.h"

#include <algorithm>

#include "core/dtype.h"

namespace nnrt::model {

Shape OutputLayer::build(const std::vector<Shape> &inputs) {
  if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
  const Shape &x = inputs[0];
  if (flatten || x.rank <= 1) {
    in_features = x.numel();
    positions = 1;
    out_shape = Shape{units};
    return out_shape;
  }
  in_features = x[x.rank - 1];
  positions = x.numel() / std::max<int64_t>(in_features, 1);
  out_shape = x;
  out_shape[out_shape.rank - 1] = units;
  return out_shape;
}

Shape OutputLayer::label_shape() const {
  Shape s = out_shape;
  --s.rank;
  return s;
}

namespace {

// [batch, s...]
Shape batch_of(int64_t batch, const Shape &s) {
  Shape out{batch};
  for (int32_t i = 0; i < s.rank; ++i) out.dims[out.rank++] = s[i];
  return out;
}

}  // namespace

std::vector<ParamSpec> OutputLayer::param_specs() const {
  std::vector<ParamSpec> p = {{"weight", Shape{units, in_features}, init, in_features, units}};
  if (bias) p.push_back({"bias", Shape{units}, Init{}, in_features, units});
  return p;
}

Array OutputLayer::forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params,
                           Saved &saved) const {
  Context &ctx = pass.ctx;
  // One row per example, or per position of each example; the activation (softmax) runs per row.
  // The rows come from the input, not from `positions`: generation runs it on fewer positions.
  Array x = ops::reshape(ctx, in[0], {-1, in_features});
  Array z = ops::matmul(ctx, x, ops::transpose(params[0], {1, 0}), bias ? &params[1] : nullptr);
  Array y = activation.forward(ctx, z);
  saved.arrays = {x, z, y};
  if (positions == 1) return y;
  std::vector<int64_t> dims = in[0].shape().vec();
  dims.back() = units;
  return ops::reshape(ctx, y, dims);
}

StepSupport OutputLayer::step_support() const {
  if (flatten || out_shape.rank < 2) return {StepKind::kRefused, "it makes one prediction of the whole example (\"flatten\": true)"};
  return {StepKind::kPerPosition, ""};
}

void OutputLayer::check_target(const Array &target, int64_t batch) const {
  bool indices = target.dtype() == NNRT_DTYPE_I32 || target.dtype() == NNRT_DTYPE_I64;
  Shape per_example = indices ? label_shape() : out_shape, expected = batch_of(batch, per_example);
  if (indices) {
    if (!class_loss()) {
      fail(NNRT_ERR_INVALID_ARGUMENT, where(), ": loss \"", loss_name, "\" needs float targets shaped ",
           to_string(batch_of(batch, out_shape)), ", got class indices");
    }
    if (target.shape() != expected) {
      if (positions == 1) fail(NNRT_ERR_SHAPE, where(), ": expected ", batch, " class labels, got ", to_string(target.shape()));
      fail(NNRT_ERR_SHAPE, where(), ": expected class labels shaped ", to_string(expected), " (one per position of ",
           batch, " examples of ", to_string(per_example), "), got ", to_string(target.shape()));
    }
    return;
  }
  if (!dtype_is_float(target.dtype())) {
    fail(NNRT_ERR_DTYPE, where(), ": labels must be class indices (i32, i64) or float targets, got ",
         dtype_name(target.dtype()));
  }
  if (target.shape() != expected) {
    fail(NNRT_ERR_SHAPE, where(), ": expected targets shaped ", to_string(expected), ", got ", to_string(target.shape()));
  }
}

Array OutputLayer::target_rows(Context &ctx, const Array &target) const {
  // Labels as the rows the loss sees: [rows] class indices or [rows, units] F32 targets.
  int64_t rows = target.rank() > 0 ? target.dim(0) * positions : 0;
  if (!dtype_is_float(target.dtype())) return positions == 1 ? target : ops::reshape(ctx, target, {rows});
  Array t = as_dtype(ctx, target, NNRT_DTYPE_F32);
  return positions == 1 ? t : ops::reshape(ctx, t, {rows, units});
}

Array OutputLayer::loss(Pass &pass, const Saved &saved, const Array &target) const {
  Context &ctx = pass.ctx;
  // Losses are computed in F32 whatever the activations' dtype: half precision would lose them.
  const Array &pred = loss_on_logits ? saved.arrays[1] : saved.arrays[2];
  return ops::loss(ctx, loss_alg, as_dtype(ctx, pred, NNRT_DTYPE_F32), target_rows(ctx, target));
}

Array OutputLayer::loss_gradient(Pass &pass, const Saved &saved, const Array &target, double scale) const {
  Context &ctx = pass.ctx;
  Array t = target_rows(ctx, target);
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
  Array dz = as_dtype(ctx, ops::reshape(ctx, dout, {x.dim(0), units}), x.dtype());
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
  l->flatten = config.get_bool("flatten", true);
  return l;
}

}  // namespace nnrt::model
