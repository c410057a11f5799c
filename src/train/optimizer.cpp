#include "train/optimizer.h"

#include <map>

#include "core/error.h"

namespace nnrt::train {

OptimizerConfig read_optimizer(JsonReader &o) {
  using Reader = void (*)(JsonReader &, ops::OptimizerRule &);
  static const std::map<std::string, Reader> readers = {
      {"sgd", read_sgd},   {"adagrad", read_adagrad}, {"adam", read_adam},
      {"adamw", read_adamw}, {"rmsprop", read_rmsprop}, {"adamax", read_adamax},
  };
  OptimizerConfig c;
  c.type = o.get_string("type", "sgd");
  auto it = readers.find(c.type);
  if (it == readers.end()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, o.name("type"), ": unknown optimizer \"", c.type,
         "\" (expected sgd, adagrad, adam, adamw, rmsprop or adamax)");
  }
  if (o.has("learning_rate") && o.raw("learning_rate").is_number() && o.raw("learning_rate").get<double>() < 0) {
    fail(NNRT_ERR_INVALID_ARGUMENT, o.name("learning_rate"), ": must not be negative, got ",
         o.raw("learning_rate").get<double>());
  }
  c.learning_rate = o.get_number("learning_rate", 0.01, 0);
  it->second(o, c.rule);
  o.finish();
  return c;
}

}  // namespace nnrt::train
