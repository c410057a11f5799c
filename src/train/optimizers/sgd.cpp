// sgd: plain, with momentum ("momentum" in [0, 1)), or Nesterov ("nesterov": true), as PyTorch.
#include "core/error.h"
#include "train/optimizer.h"

namespace nnrt::train {

void read_sgd(JsonReader &o, ops::OptimizerRule &rule) {
  rule.alg = NNRT_OPTIMIZER_SGD;
  rule.momentum = o.get_number("momentum", 0, 0, 0.999999);
  rule.nesterov = o.get_bool("nesterov", false);
  if (rule.nesterov && rule.momentum <= 0) fail(NNRT_ERR_INVALID_ARGUMENT, o.name("nesterov"), ": needs momentum > 0");
}

}  // namespace nnrt::train
