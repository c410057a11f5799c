#include "model/init.h"

#include <cmath>
#include <map>

#include "backend/ops.h"
#include "core/error.h"

namespace nnrt::model {

namespace {
const std::map<std::string, Init::Kind> &init_names() {
  static const std::map<std::string, Init::Kind> names = {
      {"xavier", Init::kXavier}, {"xavier_uniform", Init::kXavierUniform}, {"he", Init::kHe},
      {"relu", Init::kHe},       {"lecun", Init::kLecun},                   {"normal", Init::kNormal},
      {"uniform", Init::kUniform}, {"zeros", Init::kZeros},                 {"constant", Init::kConstant},
  };
  return names;
}

Init::Kind kind_of(const std::string &name, const std::string &where) {
  auto it = init_names().find(name);
  if (it == init_names().end()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, where, ": unknown initialiser \"", name,
         "\" (expected xavier, xavier_uniform, he, relu, lecun, normal, uniform, zeros or constant)");
  }
  return it->second;
}
}  // namespace

Init read_init(JsonReader &config, const std::string &key, Init fallback) {
  if (!config.has(key)) return fallback;
  Init init;
  if (config.raw(key).is_string()) {
    init.kind = kind_of(config.get_string(key, ""), config.name(key));
    if (init.kind == Init::kNormal) init.b = 0.01;
    if (init.kind == Init::kUniform) init.a = -0.05, init.b = 0.05;
    return init;
  }
  JsonReader o = config.get_object(key);
  init.kind = kind_of(o.require_string("type"), o.name("type"));
  switch (init.kind) {
    case Init::kNormal:
      init.a = o.get_number("mean", 0);
      init.b = o.get_number("std", 0.01, 0);
      break;
    case Init::kUniform:
      init.a = o.get_number("low", -0.05);
      init.b = o.get_number("high", 0.05);
      if (init.a > init.b) fail(NNRT_ERR_INVALID_ARGUMENT, o.where(), ": low (", init.a, ") exceeds high (", init.b, ")");
      break;
    case Init::kConstant: init.a = o.get_number("value", 0); break;
    default: break;
  }
  o.finish();
  return init;
}

Array initialise(Context &ctx, const Init &init, const Shape &shape, int64_t fan_in, int64_t fan_out, uint64_t seed) {
  double in = static_cast<double>(fan_in > 0 ? fan_in : 1), out = static_cast<double>(fan_out > 0 ? fan_out : 1);
  switch (init.kind) {
    case Init::kXavier:
      return ops::random(ctx, NNRT_RANDOM_NORMAL, NNRT_DTYPE_F32, shape, seed, 0, 0, std::sqrt(2.0 / (in + out)));
    case Init::kXavierUniform: {
      double a = std::sqrt(6.0 / (in + out));
      return ops::random(ctx, NNRT_RANDOM_UNIFORM, NNRT_DTYPE_F32, shape, seed, 0, -a, a);
    }
    case Init::kHe:
      return ops::random(ctx, NNRT_RANDOM_NORMAL, NNRT_DTYPE_F32, shape, seed, 0, 0, std::sqrt(2.0 / in));
    case Init::kLecun:
      return ops::random(ctx, NNRT_RANDOM_NORMAL, NNRT_DTYPE_F32, shape, seed, 0, 0, std::sqrt(1.0 / in));
    case Init::kNormal: return ops::random(ctx, NNRT_RANDOM_NORMAL, NNRT_DTYPE_F32, shape, seed, 0, init.a, init.b);
    case Init::kUniform: return ops::random(ctx, NNRT_RANDOM_UNIFORM, NNRT_DTYPE_F32, shape, seed, 0, init.a, init.b);
    case Init::kZeros: return ops::zeros(ctx, NNRT_DTYPE_F32, shape);
    case Init::kConstant: return ops::full(ctx, NNRT_DTYPE_F32, shape, init.a);
  }
  fail(NNRT_ERR_INTERNAL, "unknown initialiser");
}

}  // namespace nnrt::model
