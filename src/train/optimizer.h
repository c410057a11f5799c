// Optimizers as trainers configure them. The per-element rules live in include/nnrt/kernels/optimizer.h and
// run as one fused op per parameter; each file in optimizers/ reads one optimizer's settings.
#pragma once

#include <string>

#include "backend/ops.h"
#include "core/json_options.h"

namespace nnrt::train {

struct OptimizerConfig {
  std::string type = "sgd";
  double learning_rate = 0.01;
  ops::OptimizerRule rule;
};

// Reads the trainer option "optimizer" ({"type": ..., "learning_rate": ..., ...}); the trainer's
// own l1 / l2 / weight_decay / clip_value are applied by the caller. Throws
// NNRT_ERR_INVALID_ARGUMENT naming the key for unknown types, keys and out-of-range values.
OptimizerConfig read_optimizer(JsonReader &optimizer);

// One reader per optimizer type (optimizers/<type>.cpp). Each reads its own keys from `o` and sets
// the rule; learning_rate and type are read by read_optimizer.
void read_sgd(JsonReader &o, ops::OptimizerRule &rule);
void read_adagrad(JsonReader &o, ops::OptimizerRule &rule);
void read_adam(JsonReader &o, ops::OptimizerRule &rule);
void read_adamw(JsonReader &o, ops::OptimizerRule &rule);
void read_rmsprop(JsonReader &o, ops::OptimizerRule &rule);
void read_adamax(JsonReader &o, ops::OptimizerRule &rule);

}  // namespace nnrt::train
