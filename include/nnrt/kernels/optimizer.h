// The per-element rules of NNRT_OP_OPTIMIZER_UPDATE, in exactly the order nnrt_backend.h gives:
// scale the gradient, clip it, add the L2 and L1 terms, apply decoupled weight decay, then the
// optimizer's own rule (nnrt_optimizer_alg). Everything is f32, as the op's tensors are.
#pragma once

#include "nnrt/kernels/fmath.h"
#include "nnrt/kernels/kernel_common.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::kernels {

// The constants of one update call, derived once from the attributes and the per-call scalars
// (see make_optimizer_step). Bias corrections are computed in double, then rounded once.
struct OptimizerStep {
  float lr;
  float grad_scale;
  float clip_value;  // 0: no clipping
  float l1, l2;
  float decay;  // lr * weight_decay
  float momentum;
  bool nesterov;
  float beta1, one_minus_beta1;
  float beta2, one_minus_beta2;
  float eps;
  float bias_correction1;  // 1 - beta1^t
  float bias_correction2;  // 1 - beta2^t
};

NNRT_HD OptimizerStep make_optimizer_step(const nnrt_op_attrs &attrs, double lr, double t,
                                          double grad_scale) {
  OptimizerStep s;
  s.lr = static_cast<float>(lr);
  s.grad_scale = static_cast<float>(grad_scale);
  s.clip_value = static_cast<float>(attrs.clip_value);
  s.l1 = static_cast<float>(attrs.l1);
  s.l2 = static_cast<float>(attrs.l2);
  s.decay = static_cast<float>(lr * attrs.weight_decay);
  s.momentum = static_cast<float>(attrs.momentum);
  s.nesterov = (attrs.flags & NNRT_FLAG_NESTEROV) != 0;
  s.beta1 = static_cast<float>(attrs.beta1);
  s.one_minus_beta1 = static_cast<float>(1.0 - attrs.beta1);
  s.beta2 = static_cast<float>(attrs.beta2);
  s.one_minus_beta2 = static_cast<float>(1.0 - attrs.beta2);
  s.eps = static_cast<float>(attrs.eps);
  s.bias_correction1 = static_cast<float>(1.0 - ::pow(attrs.beta1, t));
  s.bias_correction2 = static_cast<float>(1.0 - ::pow(attrs.beta2, t));
  return s;
}

// The common steps: returns the gradient the rule sees, and applies decoupled weight decay to p.
// Terms whose coefficient is 0 are skipped rather than multiplied by 0, so that an infinite
// parameter does not turn the gradient into NaN when no regularization was asked for.
NNRT_HD float optimizer_common(float g, float &p, const OptimizerStep &s) {
  g = g * s.grad_scale;
  if (s.clip_value > 0.0f) g = g < -s.clip_value ? -s.clip_value : (g > s.clip_value ? s.clip_value : g);
  if (s.l2 != 0.0f) g += s.l2 * p;
  if (s.l1 != 0.0f) g += s.l1 * k_sign(p);
  if (s.decay != 0.0f) p -= s.decay * p;
  return g;
}

template <int Alg>
NNRT_HD void optimizer_update(float grad, float &p, float &s0, float &s1, const OptimizerStep &s) {
  float g = optimizer_common(grad, p, s);
  if constexpr (Alg == NNRT_OPTIMIZER_SGD) {
    (void)s1;
    if (s.momentum > 0.0f) {
      s0 = s.momentum * s0 + g;  // velocity
      float step = s.nesterov ? g + s.momentum * s0 : s0;
      p -= s.lr * step;
    } else {
      p -= s.lr * g;
    }
  } else if constexpr (Alg == NNRT_OPTIMIZER_ADAGRAD) {
    (void)s1;
    s0 += g * g;
    p -= s.lr * g / (k_sqrt(s0) + s.eps);
  } else if constexpr (Alg == NNRT_OPTIMIZER_ADAM || Alg == NNRT_OPTIMIZER_ADAMW) {
    s0 = s.beta1 * s0 + s.one_minus_beta1 * g;
    s1 = s.beta2 * s1 + s.one_minus_beta2 * (g * g);
    p -= s.lr * (s0 / s.bias_correction1) / (k_sqrt(s1 / s.bias_correction2) + s.eps);
  } else if constexpr (Alg == NNRT_OPTIMIZER_RMSPROP) {
    (void)s1;
    s0 = s.beta1 * s0 + s.one_minus_beta1 * (g * g);  // beta1 is rho
    p -= s.lr * g / (k_sqrt(s0) + s.eps);
  } else if constexpr (Alg == NNRT_OPTIMIZER_ADAMAX) {
    s0 = s.beta1 * s0 + s.one_minus_beta1 * g;
    s1 = k_max_nan(s.beta2 * s1, k_fabs(g) + s.eps);
    p -= s.lr / s.bias_correction1 * s0 / s1;
  } else {
    static_assert(Alg < 0, "not an nnrt_optimizer_alg");
  }
}

}  // namespace nnrt::kernels
