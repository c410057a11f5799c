// adam: moment estimates with bias correction ("beta1" 0.9, "beta2" 0.999, "eps" 1e-8).
#include "train/optimizer.h"

namespace nnrt::train {

void read_adam(JsonReader &o, ops::OptimizerRule &rule) {
  rule.alg = NNRT_OPTIMIZER_ADAM;
  rule.beta1 = o.get_number("beta1", 0.9, 0, 0.999999);
  rule.beta2 = o.get_number("beta2", 0.999, 0, 0.999999);
  rule.eps = o.get_number("eps", 1e-8, 0);
}

}  // namespace nnrt::train
