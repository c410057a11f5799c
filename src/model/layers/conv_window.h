// The window keys conv2d and conv2d_transpose share: "kernel", "stride", "dilation", "groups" and
// "padding" (one int, [h, w], [top, left, bottom, right], or the strings "valid" and, where the
// layer allows it, "same"), read into the convolution op's parameters.
#pragma once

#include "backend/ops.h"
#include "core/json_options.h"
#include "model/layer.h"

namespace nnrt::model {

struct ConvWindow {
  int32_t kernel[2] = {1, 1};
  bool same_padding = false;  // "same": the layer resolves it at build from the input size
  ops::Conv2dParams p;
};

// Throws NNRT_ERR_INVALID_ARGUMENT naming the key; "same" only when allow_same.
ConvWindow read_conv_window(JsonReader &config, bool allow_same);

// A convolution's parameters: the weight (with `init`) and, when `bias`, a bias of `filters`
// values, both with the fans of `weight` given by the layer (in and out channels per kernel tap).
std::vector<ParamSpec> conv_param_specs(const Shape &weight, int64_t filters, int64_t fan_in_channels,
                                        int64_t fan_out_channels, const Init &init, bool bias);

}  // namespace nnrt::model
