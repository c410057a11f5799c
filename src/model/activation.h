// Activation functions as layers use them: by name, forward, and backward from what was saved.
#pragma once

#include <string>

#include "backend/ops.h"
#include "core/json_options.h"

namespace nnrt::model {

struct Activation {
  std::string name = "identity";
  nnrt_unary_alg alg = NNRT_UNARY_IDENTITY;  // unused for softmax / log_softmax
  bool softmax = false, log_softmax = false;
  double alpha = 0, beta = 0;  // as the alg reads them (relu6: clip's min 0 and max 6)

  // Whether the backward pass can work from the output alone (so the input need not be kept), and
  // so whether a convolution or matmul can apply it fused.
  bool uses_output_for_backward() const;
  // Whether a convolution or matmul can apply it as a fused post-op (and back-propagate through it
  // from the output alone).
  bool fusable() const { return !softmax && !log_softmax && uses_output_for_backward(); }
  // Whether it can run as a fused post-op where nothing back-propagates (inference): every
  // elementwise one.
  bool fusable_forward() const { return !softmax && !log_softmax; }
  // The value for nnrt_op_attrs.fused (NNRT_UNARY_NONE for identity).
  nnrt_unary_alg fused_alg() const { return alg == NNRT_UNARY_IDENTITY ? NNRT_UNARY_NONE : alg; }

  Array forward(Context &ctx, const Array &x) const;
  // dx from dy, given the forward input x (may be undefined when uses_output_for_backward) and
  // output y.
  Array backward(Context &ctx, const Array &dy, const Array &x, const Array &y) const;
};

// Reads an activation name at `key` ("relu", "relu6", "leaky_relu", "elu", "gelu", "gelu_tanh",
// "silu"/"swish", "hardswish", "hardsigmoid", "sigmoid", "tanh", "softplus", "erf", "softmax",
// "log_softmax", "identity"/"linear"), with "alpha" for leaky_relu (0.01), elu (1), swish (1:
// x * sigmoid(alpha x)) and hardsigmoid (1/6, and "beta" 0.5), as nnrt_model_create documents.
// relu6 is min(max(x, 0), 6), MobileNets' activation (ONNX's Clip(0, 6)).
Activation read_activation(JsonReader &config, const std::string &key, const std::string &fallback);

}  // namespace nnrt::model
