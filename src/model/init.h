// Weight initialisers. Random ones draw from the counter-based generator, so a model seed gives
// the same weights on every backend and thread count.
#pragma once

#include <cstdint>
#include <string>

#include "backend/array.h"
#include "backend/context.h"
#include "core/json_options.h"

namespace nnrt::model {

struct Init {
  enum Kind {
    kXavier,         // normal, std sqrt(2 / (fan_in + fan_out))  (Glorot)
    kXavierUniform,  // uniform in +-sqrt(6 / (fan_in + fan_out))
    kHe,             // normal, std sqrt(2 / fan_in)  (also "relu")
    kLecun,          // normal, std sqrt(1 / fan_in)
    kNormal,         // normal(mean, std)
    kUniform,        // uniform(low, high)
    kZeros,
    kConstant,       // value
  };
  Kind kind = kZeros;
  double a = 0, b = 0;  // normal: mean, std; uniform: low, high; constant: value
};

// Reads "init" as a name ("xavier", ...) or an object ({"type": "normal", "mean": 0, "std": 0.01},
// {"type": "uniform", "low": -0.1, "high": 0.1}, {"type": "constant", "value": 1}).
Init read_init(JsonReader &config, const std::string &key, Init fallback);

// A new F32 array of `shape` filled by the initialiser.
Array initialise(Context &ctx, const Init &init, const Shape &shape, int64_t fan_in, int64_t fan_out, uint64_t seed);

}  // namespace nnrt::model
