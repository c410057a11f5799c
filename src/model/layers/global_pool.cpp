// global_avgpool2d and global_maxpool2d: [C, H, W] -> [C], the average or maximum of each channel.
// A pool2d whose one window covers the whole image, so every backend's pooling runs it.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class GlobalPoolLayer : public Layer {
 public:
  ops::Pool2dParams p;
  int64_t channels = 0;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (x.rank != 3) shape_error("expects examples shaped [channels, height, width], got ", to_string(x));
    if (x[1] > INT32_MAX || x[2] > INT32_MAX) shape_error("an image of ", to_string(x), " is too large to pool");
    channels = x[0];
    for (int i = 0; i < 2; ++i) p.kernel[i] = p.stride[i] = static_cast<int32_t>(x[1 + i]);
    return Shape{channels};
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    Array pooled = ops::pool2d(pass.ctx, in[0], p);  // [N, C, 1, 1]
    return ops::reshape(pass.ctx, pooled, {in[0].dim(0), channels});
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (!pass.needs_input_grad(0)) return;
    Array dy = ops::reshape(pass.ctx, dout, {in[0].dim(0), channels, 1, 1});
    din[0] = ops::pool2d_backward(pass.ctx, dy, in[0], p);
  }
};

std::unique_ptr<Layer> make_global_pool(nnrt_pool_alg alg) {
  auto l = std::make_unique<GlobalPoolLayer>();
  l->p.alg = alg;
  return l;
}

}  // namespace

std::unique_ptr<Layer> make_global_avgpool2d(JsonReader &) { return make_global_pool(NNRT_POOL_AVG_INCLUDE_PAD); }
std::unique_ptr<Layer> make_global_maxpool2d(JsonReader &) { return make_global_pool(NNRT_POOL_MAX); }

}  // namespace nnrt::model
