// ONNX Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool and
// BatchNormalization onto nnrt's conv2d, conv2d_transpose, pooling and batchnorm layers (2-D, NCHW,
// the batch in dim 0).
#include "onnx_import.h"

namespace nnrt::io::onnx_format {

namespace {

// The spatial window attributes shared by Conv and the pools, resolved to nnrt's explicit
// [top, left, bottom, right] padding.
struct Window {
  std::vector<int64_t> kernel, stride{1, 1}, dilation{1, 1}, pads{0, 0, 0, 0};
};

const Value &image_input(Importer &im) {
  const Value &x = im.runtime_input(0);
  if (!im.batch()) im.unsupported("it needs the batch in dim 0 (import without {\"batch\": false})");
  if (x.shape.rank != 3) im.unsupported("nnrt runs it on 2-D images [N, C, H, W]; the input has rank ", x.shape.rank + 1);
  return x;
}

Window read_window(Importer &im, const Shape &x, std::vector<int64_t> kernel) {
  Window w;
  w.kernel = std::move(kernel);
  if (w.kernel.size() != 2) im.unsupported("only 2-D windows are supported, got kernel_shape of ", w.kernel.size(), " dims");
  w.stride = im.attr_ints("strides", {1, 1});
  w.dilation = im.attr_ints("dilations", {1, 1});
  w.pads = im.attr_ints("pads", {0, 0, 0, 0});
  if (w.stride.size() != 2 || w.dilation.size() != 2 || w.pads.size() != 4) {
    im.corrupt("strides, dilations and pads must have 2, 2 and 4 values for a 2-D window");
  }
  for (int i = 0; i < 2; ++i) {
    if (w.kernel[i] < 1 || w.stride[i] < 1 || w.dilation[i] < 1) im.corrupt("kernel, strides and dilations must be >= 1");
  }
  for (int64_t p : w.pads)
    if (p < 0) im.corrupt("pads must be >= 0");
  std::string auto_pad = im.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    w.pads = {0, 0, 0, 0};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int i = 0; i < 2; ++i) {
      int64_t in = x[1 + i], out = (in + w.stride[i] - 1) / w.stride[i];
      int64_t span = w.dilation[i] * (w.kernel[i] - 1) + 1;
      int64_t total = std::max<int64_t>((out - 1) * w.stride[i] + span - in, 0);
      int64_t small = total / 2, large = total - small;  // the odd one at the end (UPPER) or start
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads[i + 2] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad != "NOTSET") {
    im.corrupt("auto_pad \"", auto_pad, "\" is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  return w;
}

void conv(Importer &im) {
  im.check_attrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  im.check_outputs(1);
  const Value &x = image_input(im);
  const std::vector<int64_t> &w_dims = im.constant_input(1, "the weight").dims;
  std::optional<Int8Layer> int8 = int8_layer(im, 0, 1, 0, w_dims.empty() ? 0 : w_dims[0]);
  HostTensor w = im.take_constant(1, "the weight");
  if (w.dims.size() != 4) im.unsupported("only 2-D convolutions are supported; the weight has ", w.dims.size(), " dims");
  std::vector<int64_t> kernel = im.attr_ints("kernel_shape", {w.dims[2], w.dims[3]});
  if (kernel.size() != 2 || kernel[0] != w.dims[2] || kernel[1] != w.dims[3]) im.corrupt("kernel_shape disagrees with the weight");
  Window win = read_window(im, x.shape, kernel);
  int64_t group = im.attr_int("group", 1);
  if (group < 1 || group > INT32_MAX) im.corrupt("group ", group, " must be >= 1");
  Json attrs = {{"filters", w.dims[0]}, {"kernel", win.kernel}, {"stride", win.stride}, {"dilation", win.dilation},
                {"padding", win.pads}, {"groups", group}, {"bias", im.has_input(2)}, {"init", "zeros"}};
  int64_t filters = w.dims[0];
  std::vector<std::pair<std::string, HostTensor>> params;
  if (int8) {
    // A QDQ convolution (onnx_import_quantize.cpp): nnrt's int8 conv2d with its integer weights.
    attrs["int8"] = int8->config;
    params.emplace_back("weight_scale", float_values(w.name + ".scale", {filters}, int8->scales));
    params.emplace_back("weight", float_values(w.name, w.dims, int8->weight));
  } else {
    params.emplace_back("weight", std::move(w));
  }
  if (im.has_input(2)) {
    HostTensor b = im.take_constant(2, "the bias");
    if (b.numel() != filters) im.corrupt("the bias has ", b.numel(), " values for ", filters, " filters");
    params.emplace_back("bias", std::move(b));
  }
  im.emit("conv2d", attrs, {int8 ? int8->input : im.node().input(0)}, std::move(params), im.node().output(0));
}

}  // namespace

namespace {

// Python's floor division, as the ONNX spec's padding formulas use it (they may go negative).
int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

// ConvTranspose: nnrt's conv2d_transpose (PyTorch's ConvTranspose2d), whose weight layout
// [C, M / group, kh, kw] is ONNX's. An "output_shape" (or auto_pad SAME_*, which asks for input *
// stride) is resolved to explicit pads as the spec does; a size past the natural one becomes
// output_padding (rows that no input reaches).
void conv_transpose(Importer &im) {
  im.check_attrs({"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"});
  im.check_outputs(1);
  const Value &x = image_input(im);
  HostTensor w = im.take_constant(1, "the weight");
  if (w.dims.size() != 4) im.unsupported("only 2-D transposed convolutions are supported; the weight has ", w.dims.size(), " dims");
  std::vector<int64_t> kernel = im.attr_ints("kernel_shape", {w.dims[2], w.dims[3]});
  if (kernel.size() != 2 || kernel[0] != w.dims[2] || kernel[1] != w.dims[3]) im.corrupt("kernel_shape disagrees with the weight");
  // read_window's SAME pads are a convolution's; they are replaced below.
  Window win = read_window(im, x.shape, kernel);
  int64_t group = im.attr_int("group", 1);
  if (group < 1 || group > INT32_MAX) im.corrupt("group ", group, " must be >= 1");
  if (w.dims[0] != x.shape[0]) im.shape_mismatch("the weight ", to_string(Shape::of(w.dims)), " is for ", w.dims[0], " input channels, the input has ", x.shape[0]);
  std::vector<int64_t> output_padding = im.attr_ints("output_padding", {0, 0});
  if (output_padding.size() != 2) im.corrupt("output_padding must have 2 values for a 2-D window");
  for (int64_t p : output_padding)
    if (p < 0) im.corrupt("output_padding must be >= 0");
  std::string auto_pad = im.attr_string("auto_pad", "NOTSET");
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (im.has_attr("output_shape") || same) {
    std::vector<int64_t> out = im.attr_ints("output_shape", {});
    if (out.size() == 4) out.erase(out.begin(), out.begin() + 2);  // older models give N and C too
    if (!im.has_attr("output_shape")) out = {x.shape[1] * win.stride[0], x.shape[2] * win.stride[1]};
    if (out.size() != 2) im.corrupt("output_shape must have 2 values for a 2-D window");
    for (int i = 0; i < 2; ++i) {
      int64_t span = win.dilation[i] * (kernel[i] - 1) + 1;
      int64_t total = win.stride[i] * (x.shape[1 + i] - 1) + output_padding[i] + span - out[i];
      int64_t begin = auto_pad == "SAME_UPPER" ? floor_div(total, 2) : total - floor_div(total, 2);
      int64_t end = total - begin;
      if (begin < 0) im.unsupported("output_shape ", to_string(Shape::of(out)), " needs rows before the first input's");
      if (end < 0) output_padding[i] -= end, end = 0;
      win.pads[i] = begin;
      win.pads[i + 2] = end;
    }
  }
  Json attrs = {{"filters", w.dims[1] * group}, {"kernel", win.kernel}, {"stride", win.stride},
                {"dilation", win.dilation}, {"padding", win.pads}, {"output_padding", output_padding},
                {"groups", group}, {"bias", im.has_input(2)}, {"init", "zeros"}};
  int64_t filters = w.dims[1] * group;
  std::vector<std::pair<std::string, HostTensor>> params;
  params.emplace_back("weight", std::move(w));
  if (im.has_input(2)) {
    HostTensor b = im.take_constant(2, "the bias");
    if (b.numel() != filters) im.corrupt("the bias has ", b.numel(), " values for ", filters, " output channels");
    params.emplace_back("bias", std::move(b));
  }
  im.emit("conv2d_transpose", attrs, {im.node().input(0)}, std::move(params), im.node().output(0));
}

void pool(Importer &im, const char *type) {
  bool average = std::string(type) == "avgpool2d";
  if (average) im.check_attrs({"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
  else im.check_attrs({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  im.check_outputs(1);
  const Value &x = image_input(im);
  if (!im.has_attr("kernel_shape")) im.corrupt("kernel_shape is required");
  Window win = read_window(im, x.shape, im.attr_ints("kernel_shape", {}));
  if (win.dilation[0] != 1 || win.dilation[1] != 1) im.unsupported("dilated pooling is not supported");
  if (im.attr_int("ceil_mode", 0)) {
    // nnrt rounds the output size down; ceil_mode is exact when rounding up gives the same size.
    for (int i = 0; i < 2; ++i) {
      int64_t span = x.shape[1 + i] + win.pads[i] + win.pads[i + 2] - win.kernel[i];
      if (span >= 0 && span % win.stride[i] != 0) im.unsupported("ceil_mode = 1 with a partial last window is not supported");
    }
  }
  Json attrs = {{"kernel", win.kernel}, {"stride", win.stride}, {"padding", win.pads}};
  if (average) attrs["count_include_pad"] = im.attr_int("count_include_pad", 0) != 0;
  im.emit(type, attrs, {im.node().input(0)}, {}, im.node().output(0));
}

void global_pool(Importer &im, const char *type) {
  im.check_attrs({});
  im.check_outputs(1);
  const Value &x = image_input(im);
  std::string pooled = im.emit(type, Json::object(), {im.node().input(0)}, {}, "");
  // nnrt's global pooling gives [C]; ONNX keeps [C, 1, 1].
  im.emit("reshape", {{"shape", {x.shape[0], 1, 1}}}, {pooled}, {}, im.node().output(0));
}

void batch_normalization(Importer &im) {
  im.check_attrs({"epsilon", "momentum", "spatial", "training_mode", "consumed_inputs", "is_test"});
  im.check_outputs(1);
  if (im.attr_int("training_mode", 0)) im.unsupported("training_mode = 1 is not supported (it computes batch statistics)");
  if (im.attr_int("spatial", 1) != 1) im.unsupported("spatial = 0 is not supported");
  const Value &x = im.runtime_input(0);
  if (!im.batch()) im.unsupported("it needs the batch in dim 0 (import without {\"batch\": false})");
  if (x.shape.rank != 1 && x.shape.rank != 3) im.unsupported("nnrt normalizes [N, C] or [N, C, H, W]; the input has rank ", x.shape.rank + 1);
  int64_t channels = x.shape[0];
  std::vector<std::pair<std::string, HostTensor>> params;
  const char *names[] = {"weight", "bias", "running_mean", "running_var"};
  const char *what[] = {"the scale", "the bias", "the mean", "the variance"};
  for (int i = 0; i < 4; ++i) {
    HostTensor t = im.take_constant(i + 1, what[i]);
    if (t.numel() != channels) im.corrupt(what[i], " has ", t.numel(), " values for ", channels, " channels");
    params.emplace_back(names[i], std::move(t));
  }
  double eps = im.attr_float("epsilon", 1e-5);
  if (!(eps > 0)) im.unsupported("epsilon ", eps, " must be positive");
  // ONNX's momentum weighs the running value (0.9); nnrt's, as PyTorch's, the batch's (0.1).
  double momentum = 1.0 - im.attr_float("momentum", 0.9);
  if (!(momentum >= 0 && momentum <= 1)) im.corrupt("momentum must lie in [0, 1]");
  im.emit("batchnorm", {{"eps", eps}, {"momentum", momentum}}, {im.node().input(0)}, std::move(params), im.node().output(0));
}

}  // namespace

void register_conv_ops(std::map<std::string, Importer::Translator> &t) {
  t["Conv"] = conv;
  t["ConvTranspose"] = conv_transpose;
  t["MaxPool"] = [](Importer &im) { pool(im, "maxpool2d"); };
  t["AveragePool"] = [](Importer &im) { pool(im, "avgpool2d"); };
  t["GlobalAveragePool"] = [](Importer &im) { global_pool(im, "global_avgpool2d"); };
  t["GlobalMaxPool"] = [](Importer &im) { global_pool(im, "global_maxpool2d"); };
  t["BatchNormalization"] = batch_normalization;
}

}  // namespace nnrt::io::onnx_format
