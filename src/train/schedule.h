// Learning-rate schedules, by epoch.
#pragma once

#include <cstdint>
#include <map>

#include "core/json_options.h"

namespace nnrt::train {

class Schedule {
 public:
  // Reads a "schedule" object: {"type": "step", "gamma": 0.5, "every_epochs": 2},
  // {"type": "exponential", "gamma": 0.9}, {"type": "cosine", "epochs": 10, "warmup_epochs": 1,
  // "min_learning_rate": 0}, {"type": "map", "values": {"0": 0.1, "5": 0.01}}. Throws
  // NNRT_ERR_INVALID_ARGUMENT naming the key.
  static Schedule read(JsonReader &schedule);

  // The learning rate for a 0-based epoch, from the optimizer's base rate.
  double rate(double base, int32_t epoch) const;

 private:
  enum Kind { kConstant, kStep, kExponential, kCosine, kMap };
  Kind kind_ = kConstant;
  double gamma_ = 1;
  int64_t every_ = 1;
  int64_t epochs_ = 1, warmup_ = 0;
  double min_rate_ = 0;
  std::map<int64_t, double> values_;
};

}  // namespace nnrt::train
