// conv2d: a 2-D convolution over [C, H, W] examples (NCHW batches), with stride, padding ("same",
// "valid", one int, [h, w] or [top, left, bottom, right]), dilation, groups and a fused activation
// ("activation", as the activation layer's, relu6 included).
// Weight [filters, C / groups, kh, kw] as PyTorch's nn.Conv2d. With an "int8" object
// (nnrt_model_quantize) the weight is I8 and the convolution integer (int8_weights.h).
#include "core/checked_math.h"
#include "model/activation.h"
#include "model/layer.h"
#include "model/layers/conv_window.h"
#include "model/layers/int8_weights.h"

namespace nnrt::model {
namespace {

class Conv2dLayer : public Layer {
 public:
  int64_t filters = 0, in_channels = 0;
  int32_t kernel[2] = {1, 1};
  bool same_padding = false;
  ops::Conv2dParams p;
  Activation activation;
  Init init;
  bool bias = true;
  std::optional<Int8Layer> int8;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (x.rank != 3) shape_error("expects examples shaped [channels, height, width], got ", to_string(x));
    in_channels = x[0];
    if (same_padding) {
      // Output size ceil(H / stride), the padding split with the extra row or column at the end.
      for (int i = 0; i < 2; ++i) {
        int64_t in = x[1 + i], out = in / p.stride[i] + (in % p.stride[i] != 0);
        int64_t span = static_cast<int64_t>(p.dilation[i]) * (kernel[i] - 1) + 1;
        int64_t total = std::max<int64_t>(checked_mul(out - 1, p.stride[i], "padding \"same\"") + span - in, 0);
        p.pad[i] = checked_int32(total / 2, "padding \"same\"");
        p.pad[i + 2] = checked_int32(total - total / 2, "padding \"same\"");
      }
    }
    if (in_channels % p.groups != 0 || filters % p.groups != 0) {
      shape_error("groups (", p.groups, ") must divide the input channels (", in_channels, ") and filters (", filters, ")");
    }
    try {
      Shape out = ops::conv2d_output_shape(with_batch(1, x), weight_shape(), p);
      return Shape{out[1], out[2], out[3]};
    } catch (const Error &e) {
      shape_error(e.what());
    }
  }

  Shape weight_shape() const { return Shape{filters, in_channels / p.groups, kernel[0], kernel[1]}; }

  std::vector<ParamSpec> param_specs() const override {
    std::vector<ParamSpec> specs = conv_param_specs(weight_shape(), filters, in_channels / p.groups, filters, init, bias);
    if (int8) int8->adapt(specs, filters);
    return specs;
  }

  std::string why_not_trainable() const override { return int8 ? kInt8NotTrainable : ""; }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override {
    const Array *b = bias ? &params[1] : nullptr;
    // Images stay channels-last from here to the next layer that needs another layout (pooling
    // and the gradients follow their input; flatten and dense copy to NCHW order): oneDNN's
    // fastest convolution and pooling kernels read NHWC, and NCHW costs a reorder at every
    // convolution (LeNet predict at batch 64: 2.9x less oneDNN time on AVX-512, 3.5x with
    // DNNL_MAX_CPU_ISA=AVX2). Training does the same on a CPU, where the oneDNN plugin's own
    // channels-last max pooling makes the backward pass cheap too (LeNet training, AVX2, 1 thread:
    // the reorders were a sixth of oneDNN's time). On a GPU training stays NCHW: channels-last
    // backward passes have never run on one.
    ops::Conv2dParams q = p;
    q.channels_last = !pass.training || pass.ctx.device()->host_memory();
    if (int8) {
      const bool fuse = activation.fusable_forward();
      if (fuse) {
        q.fused = activation.fused_alg();
        q.alpha = activation.alpha;
        q.beta = activation.beta;
      }
      Array y = ops::conv2d_int8(pass.ctx, int8->quantized_input(pass.ctx, in[0]), int8->input, params[0],
                                 params.back(), b, int8->weights_7bit(), q);
      return as_dtype(pass.ctx, fuse ? y : activation.forward(pass.ctx, y), pass.dtype);  // the pass's float type
    }
    // Where nothing back-propagates, any elementwise activation runs as the convolution's post-op
    // (relu6, whose gradient needs the input, included): one pass over the output instead of two.
    if (activation.fusable() || (!pass.training && activation.fusable_forward())) {
      q.fused = activation.fused_alg();
      q.alpha = activation.alpha;
      q.beta = activation.beta;
      return ops::conv2d(pass.ctx, in[0], params[0], b, q);
    }
    Array z = ops::conv2d(pass.ctx, in[0], params[0], b, q);
    saved.arrays = {z};
    return activation.forward(pass.ctx, z);
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &out,
                const Saved &saved, const Array &dout, std::vector<Array> &din, std::vector<Array> &dparams) const override {
    Context &ctx = pass.ctx;
    if (int8) fail(NNRT_ERR_UNSUPPORTED, where(), ": ", kInt8NotTrainable);
    Array dz = activation.backward(ctx, dout, activation.fusable() ? Array() : saved.arrays[0], out);
    if (pass.needs_input_grad(0)) din[0] = ops::conv2d_backward_data(ctx, dz, params[0], in[0].shape(), p);
    auto grads = ops::conv2d_backward_weights(ctx, in[0], dz, params[0].shape(), bias, p);
    dparams[0] = grads.first;
    if (bias) dparams[1] = grads.second;
  }
};

}  // namespace

std::unique_ptr<Layer> make_conv2d(JsonReader &config) {
  auto l = std::make_unique<Conv2dLayer>();
  l->filters = config.require_int("filters", 1);
  ConvWindow w = read_conv_window(config, true);
  l->kernel[0] = w.kernel[0];
  l->kernel[1] = w.kernel[1];
  l->same_padding = w.same_padding;
  l->p = w.p;
  l->activation = read_activation(config, "activation", "identity");
  l->init = read_init(config, "init", Init{Init::kXavier});
  l->bias = config.get_bool("bias", true);
  l->int8 = read_int8_layer(config);
  return l;
}

}  // namespace nnrt::model
