// ONNX export of convolutions, pooling and batch normalization (their import:
// onnx_import_conv.cpp).
#include <algorithm>

#include "onnx_export.h"

namespace nnrt::io::onnx_format {

namespace {

// An int or [a, b] config value as two ints.
std::vector<int64_t> pair_of(const Json &attrs, const char *key, std::vector<int64_t> fallback) {
  if (!attrs.contains(key)) return fallback;
  const Json &v = attrs[key];
  if (v.is_number_integer()) return {v.get<int64_t>(), v.get<int64_t>()};
  return v.get<std::vector<int64_t>>();
}

// A conv2d's or pool's "padding" as ONNX pads [top, left, bottom, right].
std::vector<int64_t> pads_of(const Json &attrs, const Shape &in, const std::vector<int64_t> &kernel,
                             const std::vector<int64_t> &stride, const std::vector<int64_t> &dilation) {
  if (!attrs.contains("padding")) return {0, 0, 0, 0};
  const Json &p = attrs["padding"];
  if (p.is_string()) {
    if (p.get<std::string>() == "valid") return {0, 0, 0, 0};
    std::vector<int64_t> pads(4);  // "same": as the conv2d layer computes it, the odd one at the end
    for (int i = 0; i < 2; ++i) {
      int64_t n = in[1 + i], out = (n + stride[i] - 1) / stride[i];
      int64_t span = dilation[i] * (kernel[i] - 1) + 1;
      int64_t total = std::max<int64_t>((out - 1) * stride[i] + span - n, 0);
      pads[i] = total / 2;
      pads[i + 2] = total - total / 2;
    }
    return pads;
  }
  if (p.is_array() && p.size() == 4) return p.get<std::vector<int64_t>>();
  std::vector<int64_t> hw = pair_of(attrs, "padding", {0, 0});
  return {hw[0], hw[1], hw[0], hw[1]};
}

// conv2d as Conv, conv2d_transpose as ConvTranspose, then its fused activation. Both weights are
// in ONNX's layouts already (Conv [M, C / group, kh, kw], ConvTranspose [C, M / group, kh, kw]); a
// transposed convolution's padding is always explicit.
void conv(Exporter &ex, bool transposed) {
  const Json &a = ex.attrs();
  const std::string &name = ex.name(), &out = ex.output();
  std::vector<int64_t> k = pair_of(a, "kernel", {}), s = pair_of(a, "stride", {1, 1}), d = pair_of(a, "dilation", {1, 1});
  std::vector<std::string> ci = {ex.inputs()[0], ex.param(name + ".weight")};
  if (a.value("bias", true)) ci.push_back(ex.param(name + ".bias"));
  std::string act = a.value("activation", "identity");
  std::string z = act == "identity" || act == "linear" ? out : name + "/conv";
  onnx::NodeProto &c = ex.add(transposed ? "ConvTranspose" : "Conv", ci, z);
  Exporter::set_ints(c, "kernel_shape", k);
  Exporter::set_ints(c, "strides", s);
  Exporter::set_ints(c, "dilations", d);
  Exporter::set_ints(c, "pads", pads_of(a, ex.in_shape(), k, s, d));
  Exporter::set_int(c, "group", a.value("groups", 1));
  if (transposed) Exporter::set_ints(c, "output_padding", pair_of(a, "output_padding", {0, 0}));
  if (z != out) write_activation(ex, act, z, out);
}

// maxpool2d as MaxPool, avgpool2d as AveragePool.
void pool(Exporter &ex, bool average) {
  const Json &a = ex.attrs();
  std::vector<int64_t> k = pair_of(a, "kernel", {}), s = pair_of(a, "stride", k);
  onnx::NodeProto &p = ex.add(average ? "AveragePool" : "MaxPool", {ex.inputs()[0]}, ex.output());
  Exporter::set_ints(p, "kernel_shape", k);
  Exporter::set_ints(p, "strides", s);
  Exporter::set_ints(p, "pads", pads_of(a, ex.in_shape(), k, s, {1, 1}));
  if (average) Exporter::set_int(p, "count_include_pad", a.value("count_include_pad", true) ? 1 : 0);
}

// global_avgpool2d, global_maxpool2d: ONNX keeps [N, C, 1, 1], nnrt gives [N, C].
void global_pool(Exporter &ex, const char *op) {
  std::string pooled = ex.name() + "/pool";
  ex.add(op, {ex.inputs()[0]}, pooled);
  Exporter::set_int(ex.add("Flatten", {pooled}, ex.output()), "axis", 1);
}

void batchnorm(Exporter &ex) {
  const Json &a = ex.attrs();
  const std::string &name = ex.name();
  onnx::NodeProto &b = ex.add("BatchNormalization", {ex.inputs()[0], ex.param(name + ".weight"), ex.param(name + ".bias"),
                                                     ex.param(name + ".running_mean"), ex.param(name + ".running_var")},
                              ex.output());
  Exporter::set_float(b, "epsilon", a.value("eps", 1e-5));
  // nnrt's momentum, as PyTorch's, weighs the batch (0.1); ONNX's the running value (0.9).
  Exporter::set_float(b, "momentum", 1.0 - a.value("momentum", 0.1));
}

}  // namespace

void register_conv_layers(std::map<std::string, Exporter::LayerWriter> &t) {
  t["conv2d"] = [](Exporter &ex) { conv(ex, false); };
  t["conv2d_transpose"] = [](Exporter &ex) { conv(ex, true); };
  t["maxpool2d"] = [](Exporter &ex) { pool(ex, false); };
  t["avgpool2d"] = [](Exporter &ex) { pool(ex, true); };
  t["global_avgpool2d"] = [](Exporter &ex) { global_pool(ex, "GlobalAveragePool"); };
  t["global_maxpool2d"] = [](Exporter &ex) { global_pool(ex, "GlobalMaxPool"); };
  t["batchnorm"] = batchnorm;
}

}  // namespace nnrt::io::onnx_format
