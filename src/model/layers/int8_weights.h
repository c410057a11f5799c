// What a quantized dense or conv2d layer (one nnrt_model_quantize made) adds to its float self:
// the config's "int8" object, the parameters' dtypes, and the forward pass's first step.
//
//   "int8": {"input_dtype": "u8" | "i8", "input_scale": s > 0, "input_zero_point": z,
//            "weight_bits": 7 | 8}
//
// The layer's weight becomes I8 (within [-63, 63] for 7 bits), and a parameter "weight_scale"
// (F32, one per output unit or filter) follows the others: real weight = weight_scale * weight.
// Such a layer runs inference only.
#pragma once

#include <optional>
#include <vector>

#include "backend/ops.h"
#include "core/json_options.h"
#include "model/layer.h"

namespace nnrt::model {

struct Int8Layer {
  ops::Quantization input;  // how the layer's input is rounded to 8 bits
  int32_t weight_bits = 7;

  // The bound ParamSpec::max_abs puts on the weights: 63 for 7 bits, none (0) for 8.
  int32_t max_abs() const { return weight_bits == 7 ? 63 : 0; }
  bool weights_7bit() const { return weight_bits == 7; }
  // The float specs made int8: the weight I8, "weight_scale" [units] appended, nothing trainable.
  void adapt(std::vector<ParamSpec> &specs, int64_t units) const;
  // The input as F32 (whatever the pass's float type), rounded to 8 bits.
  Array quantized_input(Context &ctx, const Array &x) const;
};

// The config's "int8" object, when there is one (the message names the key of a wrong value).
std::optional<Int8Layer> read_int8_layer(JsonReader &config);

// Layer::why_not_trainable of a quantized layer.
inline constexpr const char *kInt8NotTrainable =
    "it is quantized to int8 (nnrt_model_quantize), which runs inference only: train the float model and quantize it again";

}  // namespace nnrt::model
