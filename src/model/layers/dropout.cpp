// dropout: while training, zeroes each element with probability "rate" and scales the rest by
// 1 / (1 - rate) (inverted dropout, as PyTorch); at inference it passes its input through.
// Masks come from the counter-based generator keyed by the layer's seed, so they are the same on
// every backend and thread count, and the same again when a step is repeated.
#include "model/layer.h"

namespace nnrt::model {
namespace {

// Each training step draws from its own window of the layer's random stream: step k uses the
// counters [k * 2^32, k * 2^32 + elements). A fixed window, rather than one the size of the
// batch, keeps the windows apart when batch sizes differ (the last batch of an epoch).
constexpr uint64_t kCountersPerStep = uint64_t(1) << 32;

class DropoutLayer : public Layer {
 public:
  double rate = 0.5;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    return inputs[0];
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &saved) const override {
    if (!pass.training || rate == 0) return in[0];
    auto [y, mask] = ops::dropout(pass.ctx, in[0], rate, seed, pass.step * kCountersPerStep);
    saved.arrays = {mask};
    return y;
  }

  // Generation runs without training: the identity.
  StepSupport step_support() const override { return {StepKind::kPerPosition, ""}; }

  void backward(Pass &pass, const std::vector<Array> &, const std::vector<Array> &, const Array &, const Saved &saved,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (!pass.needs_input_grad(0)) return;
    din[0] = saved.arrays.empty() ? dout : ops::dropout_backward(pass.ctx, dout, saved.arrays[0], rate);
  }
};

}  // namespace

std::unique_ptr<Layer> make_dropout(JsonReader &config) {
  auto l = std::make_unique<DropoutLayer>();
  if (!config.has("rate")) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("rate"), " is required");
  l->rate = config.get_number("rate", 0.5);
  if (!(l->rate >= 0 && l->rate < 1)) {
    fail(NNRT_ERR_INVALID_ARGUMENT, config.name("rate"), ": expected a probability in [0, 1), got ", l->rate);
  }
  return l;
}

}  // namespace nnrt::model
