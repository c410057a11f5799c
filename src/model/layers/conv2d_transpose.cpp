// conv2d_transpose: the transposed 2-D convolution of PyTorch's nn.ConvTranspose2d over [C, H, W]
// examples, with stride, padding (one int, [h, w] or [top, left, bottom, right]), output_padding,
// dilation, groups and an activation. Weight [C, filters / groups, kh, kw] as PyTorch's.
//
// It is the adjoint of a convolution from the output's space to the input's, with the same weight:
// its forward pass is that convolution's backward-data, its input gradient that convolution's
// forward, and its weight gradient that convolution's backward-weights with input and output
// swapped. So it runs on every backend's convolution kernels, and needs none of its own.
//
//   out = (in - 1) * stride - pad_begin - pad_end + dilation * (kernel - 1) + 1 + output_padding
#include "core/checked_math.h"
#include "model/activation.h"
#include "model/layer.h"
#include "model/layers/conv_window.h"

namespace nnrt::model {
namespace {

class Conv2dTransposeLayer : public Layer {
 public:
  int64_t filters = 0, in_channels = 0;
  int32_t kernel[2] = {1, 1};
  int32_t output_padding[2] = {0, 0};
  ops::Conv2dParams p;  // of the convolution from the output's space to the input's
  Activation activation;
  Init init;
  bool bias = true;
  Shape out_example;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (x.rank != 3) shape_error("expects examples shaped [channels, height, width], got ", to_string(x));
    in_channels = x[0];
    if (in_channels % p.groups != 0 || filters % p.groups != 0) {
      shape_error("groups (", p.groups, ") must divide the input channels (", in_channels, ") and filters (", filters, ")");
    }
    out_example = Shape{filters, 0, 0};
    for (int i = 0; i < 2; ++i) {
      // Rows past the last window (output_padding) are reached by no input; they must be fewer
      // than a stride, or the convolution back would fit more windows than the input has.
      // (PyTorch also allows fewer than the dilation at stride 1; that has no convolution form.)
      if (output_padding[i] >= p.stride[i]) {
        shape_error("output_padding (", output_padding[i], ") must be smaller than the stride (", p.stride[i], ")");
      }
      int64_t span = checked_add(checked_mul(p.dilation[i], kernel[i] - 1, "dilation"), 1, "dilation");
      int64_t size = checked_add(checked_mul(x[1 + i] - 1, p.stride[i], "stride"), span + output_padding[i], "size") -
                     p.pad[i] - p.pad[i + 2];
      if (size < 1) shape_error("the padding leaves no output along ", i == 0 ? "H" : "W", " for input ", to_string(x));
      out_example.dims[1 + i] = size;
    }
    // The convolution back from the output must give the input's size exactly.
    Shape back;
    try {
      back = ops::conv2d_output_shape(with_batch(1, out_example), weight_shape(), p);
    } catch (const Error &e) {
      shape_error(e.what());
    }
    if (back[2] != x[1] || back[3] != x[2]) {
      shape_error("output ", to_string(out_example), " does not convolve back to the input ", to_string(x));
    }
    return out_example;
  }

  // [in, out / groups, kh, kw]: the weight of the convolution back from the output, as PyTorch's.
  Shape weight_shape() const { return Shape{in_channels, filters / p.groups, kernel[0], kernel[1]}; }

  std::vector<ParamSpec> param_specs() const override {
    // PyTorch's fans of a ConvTranspose2d weight: its dim 1 and dim 0 (times the kernel area).
    return conv_param_specs(weight_shape(), filters, filters / p.groups, in_channels, init, bias);
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override {
    Context &ctx = pass.ctx;
    Array z = ops::conv2d_backward_data(ctx, in[0], params[0], with_batch(in[0].dim(0), out_example), p);
    if (bias) ops::binary_into(ctx, NNRT_BINARY_ADD, z, ops::reshape(ctx, params[1], {filters, 1, 1}), z);
    if (!activation.uses_output_for_backward()) saved.arrays = {z};
    return activation.forward(ctx, z);
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &out,
                const Saved &saved, const Array &dout, std::vector<Array> &din, std::vector<Array> &dparams) const override {
    Context &ctx = pass.ctx;
    Array dz = activation.backward(ctx, dout, saved.arrays.empty() ? Array() : saved.arrays[0], out);
    if (pass.needs_input_grad(0)) din[0] = ops::conv2d(ctx, dz, params[0], nullptr, p);
    dparams[0] = ops::conv2d_backward_weights(ctx, dz, in[0], params[0].shape(), false, p).first;
    if (bias) dparams[1] = ops::reduce(ctx, NNRT_REDUCE_SUM, dz, 0b1101u, false);
  }
};

}  // namespace

std::unique_ptr<Layer> make_conv2d_transpose(JsonReader &config) {
  auto l = std::make_unique<Conv2dTransposeLayer>();
  l->filters = config.require_int("filters", 1);
  ConvWindow w = read_conv_window(config, false);
  l->kernel[0] = w.kernel[0];
  l->kernel[1] = w.kernel[1];
  l->p = w.p;
  std::vector<int64_t> op = config.get_int_or_list("output_padding", {0, 0}, 2, 0);
  for (int i = 0; i < 2; ++i) l->output_padding[i] = checked_int32(op[i], config.name("output_padding").c_str());
  l->activation = read_activation(config, "activation", "identity");
  l->init = read_init(config, "init", Init{Init::kXavier});
  l->bias = config.get_bool("bias", true);
  return l;
}

}  // namespace nnrt::model
