#include "model/layers/int8_weights.h"

#include "core/error.h"

namespace nnrt::model {

void Int8Layer::adapt(std::vector<ParamSpec> &specs, int64_t units) const {
  for (ParamSpec &s : specs) s.trainable = false;
  specs[0].dtype = NNRT_DTYPE_I8;
  specs[0].max_abs = max_abs();
  specs.push_back({"weight_scale", Shape{units}, Init{Init::kConstant, 1}, 0, 0, false});
}

Array Int8Layer::quantized_input(Context &ctx, const Array &x) const {
  return ops::quantize(ctx, as_dtype(ctx, x, NNRT_DTYPE_F32), input);
}

std::optional<Int8Layer> read_int8_layer(JsonReader &config) {
  if (!config.has("int8")) return std::nullopt;
  JsonReader r = config.get_object("int8");
  Int8Layer q;
  std::string dtype = r.require_string("input_dtype");
  if (dtype != "u8" && dtype != "i8") {
    fail(NNRT_ERR_INVALID_ARGUMENT, r.name("input_dtype"), ": expected \"u8\" or \"i8\", got \"", dtype, "\"");
  }
  q.input.dtype = dtype == "u8" ? NNRT_DTYPE_U8 : NNRT_DTYPE_I8;
  q.input.scale = r.get_number("input_scale", 0, 0);
  if (!(q.input.scale > 0)) fail(NNRT_ERR_INVALID_ARGUMENT, r.name("input_scale"), ": expected a number > 0");
  q.input.zero_point = static_cast<int32_t>(r.get_int("input_zero_point", 0, dtype == "u8" ? 0 : -128, dtype == "u8" ? 255 : 127));
  q.weight_bits = static_cast<int32_t>(r.get_int("weight_bits", 7, 7, 8));
  r.finish();
  return q;
}

}  // namespace nnrt::model
