// rmsprop: a running mean of squared gradients with decay "rho" (0.99, as PyTorch's alpha);
// "eps" 1e-8.
#include "train/optimizer.h"

namespace nnrt::train {

void read_rmsprop(JsonReader &o, ops::OptimizerRule &rule) {
  rule.alg = NNRT_OPTIMIZER_RMSPROP;
  rule.beta1 = o.get_number("rho", 0.99, 0, 0.999999);
  rule.eps = o.get_number("eps", 1e-8, 0);
}

}  // namespace nnrt::train
