// adagrad: per-element learning rates from the running sum of squared gradients (eps 1e-10, as
// PyTorch).
#include "train/optimizer.h"

namespace nnrt::train {

void read_adagrad(JsonReader &o, ops::OptimizerRule &rule) {
  rule.alg = NNRT_OPTIMIZER_ADAGRAD;
  rule.eps = o.get_number("eps", 1e-10, 0);
}

}  // namespace nnrt::train
