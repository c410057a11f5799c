// adamw: adam with decoupled weight decay (Loshchilov & Hutter); the trainer's "weight_decay"
// defaults to 0.01 for it, as PyTorch's AdamW.
#include "train/optimizer.h"

namespace nnrt::train {

void read_adamw(JsonReader &o, ops::OptimizerRule &rule) {
  read_adam(o, rule);
  rule.alg = NNRT_OPTIMIZER_ADAMW;
  rule.weight_decay = 0.01;
}

}  // namespace nnrt::train
