#include "model/activation.h"

#include "core/error.h"

namespace nnrt::model {

bool Activation::uses_output_for_backward() const {
  if (softmax || log_softmax) return true;
  switch (alg) {
    case NNRT_UNARY_IDENTITY:
    case NNRT_UNARY_RELU:
    case NNRT_UNARY_SIGMOID:
    case NNRT_UNARY_TANH: return true;
    case NNRT_UNARY_LEAKY_RELU:
    case NNRT_UNARY_ELU: return alpha > 0;  // then the output's sign is the input's
    default: return false;
  }
}

Array Activation::forward(Context &ctx, const Array &x) const {
  if (softmax) return ops::softmax(ctx, NNRT_SOFTMAX, x, 1);
  if (log_softmax) return ops::softmax(ctx, NNRT_LOG_SOFTMAX, x, 1);
  if (alg == NNRT_UNARY_IDENTITY) return x;
  return ops::unary(ctx, alg, x, alpha, beta);
}

Array Activation::backward(Context &ctx, const Array &dy, const Array &x, const Array &y) const {
  if (softmax) return ops::softmax_backward(ctx, NNRT_SOFTMAX, dy, y, 1);
  if (log_softmax) return ops::softmax_backward(ctx, NNRT_LOG_SOFTMAX, dy, y, 1);
  if (alg == NNRT_UNARY_IDENTITY) return dy;
  bool from_output = uses_output_for_backward();
  return ops::unary_backward(ctx, alg, dy, from_output ? y : x, from_output, alpha, beta);
}

Activation read_activation(JsonReader &config, const std::string &key, const std::string &fallback) {
  Activation a;
  a.name = config.get_string(key, fallback);
  const std::string &n = a.name;
  if (n == "identity" || n == "linear" || n == "none") a.alg = NNRT_UNARY_IDENTITY;
  else if (n == "relu") a.alg = NNRT_UNARY_RELU;
  else if (n == "relu6") a.alg = NNRT_UNARY_CLIP, a.alpha = 0, a.beta = 6;
  else if (n == "leaky_relu" || n == "leakyrelu") a.alg = NNRT_UNARY_LEAKY_RELU, a.alpha = 0.01;
  else if (n == "elu") a.alg = NNRT_UNARY_ELU, a.alpha = 1.0;
  else if (n == "gelu") a.alg = NNRT_UNARY_GELU;
  else if (n == "gelu_tanh") a.alg = NNRT_UNARY_GELU_TANH;
  else if (n == "silu" || n == "swish") a.alg = NNRT_UNARY_SWISH, a.alpha = 1.0;
  else if (n == "hardswish" || n == "hard_swish") a.alg = NNRT_UNARY_HARD_SWISH, a.alpha = 1.0 / 6, a.beta = 0.5;
  else if (n == "hardsigmoid" || n == "hard_sigmoid") a.alg = NNRT_UNARY_HARD_SIGMOID, a.alpha = 1.0 / 6, a.beta = 0.5;
  else if (n == "softplus") a.alg = NNRT_UNARY_SOFTPLUS;
  else if (n == "erf") a.alg = NNRT_UNARY_ERF;
  else if (n == "sigmoid") a.alg = NNRT_UNARY_SIGMOID;
  else if (n == "tanh") a.alg = NNRT_UNARY_TANH;
  else if (n == "softmax") a.softmax = true;
  else if (n == "log_softmax") a.log_softmax = true;
  else {
    fail(NNRT_ERR_INVALID_ARGUMENT, config.name(key), ": unknown activation \"", n,
         "\" (expected identity, relu, relu6, leaky_relu, elu, gelu, gelu_tanh, silu, swish, hardswish, "
         "hardsigmoid, sigmoid, tanh, softplus, erf, softmax or log_softmax)");
  }
  if (a.alg == NNRT_UNARY_LEAKY_RELU || a.alg == NNRT_UNARY_ELU || a.alg == NNRT_UNARY_HARD_SIGMOID ||
      (a.alg == NNRT_UNARY_SWISH && n == "swish"))
    a.alpha = config.get_number("alpha", a.alpha);
  if (a.alg == NNRT_UNARY_HARD_SIGMOID) a.beta = config.get_number("beta", a.beta);
  return a;
}

}  // namespace nnrt::model
