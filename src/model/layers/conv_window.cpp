#include "model/layers/conv_window.h"

#include "core/checked_math.h"

namespace nnrt::model {

ConvWindow read_conv_window(JsonReader &config, bool allow_same) {
  ConvWindow w;
  if (!config.has("kernel")) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("kernel"), " is required");
  std::vector<int64_t> k = config.get_int_or_list("kernel", {}, 2, 1);
  w.kernel[0] = checked_int32(k[0], config.name("kernel").c_str());
  w.kernel[1] = checked_int32(k[1], config.name("kernel").c_str());
  std::vector<int64_t> s = config.get_int_or_list("stride", {1, 1}, 2, 1);
  std::vector<int64_t> d = config.get_int_or_list("dilation", {1, 1}, 2, 1);
  for (int i = 0; i < 2; ++i) {
    w.p.stride[i] = checked_int32(s[i], config.name("stride").c_str());
    w.p.dilation[i] = checked_int32(d[i], config.name("dilation").c_str());
  }
  if (config.has("padding") && config.raw("padding").is_string()) {
    std::string mode = config.get_string("padding", "");
    if (mode == "same" && allow_same) w.same_padding = true;
    else if (mode != "valid") {
      fail(NNRT_ERR_INVALID_ARGUMENT, config.name("padding"), ": expected ", allow_same ? "\"same\", " : "",
           "\"valid\" or ints, got \"", mode, "\"");
    }
  } else if (config.has("padding") && config.raw("padding").is_array() && config.raw("padding").size() == 4) {
    std::vector<int64_t> pad = config.get_int_list("padding", {});
    for (int i = 0; i < 4; ++i) {
      if (pad[i] < 0) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("padding"), ": expected values >= 0");
      w.p.pad[i] = checked_int32(pad[i], config.name("padding").c_str());
    }
  } else {
    std::vector<int64_t> pad = config.get_int_or_list("padding", {0, 0}, 2, 0);
    w.p.pad[0] = w.p.pad[2] = checked_int32(pad[0], config.name("padding").c_str());
    w.p.pad[1] = w.p.pad[3] = checked_int32(pad[1], config.name("padding").c_str());
  }
  w.p.groups = static_cast<int32_t>(config.get_int("groups", 1, 1, INT32_MAX));
  return w;
}

std::vector<ParamSpec> conv_param_specs(const Shape &weight, int64_t filters, int64_t fan_in_channels,
                                        int64_t fan_out_channels, const Init &init, bool bias) {
  int64_t area = weight[2] * weight[3];
  int64_t fan_in = fan_in_channels * area, fan_out = fan_out_channels * area;
  std::vector<ParamSpec> s = {{"weight", weight, init, fan_in, fan_out}};
  if (bias) s.push_back({"bias", Shape{filters}, Init{}, fan_in, fan_out});
  return s;
}

}  // namespace nnrt::model
