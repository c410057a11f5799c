// lstm: one LSTM layer over examples [T, F] (PyTorch's nn.LSTM with batch_first and one layer),
// starting from a zero state. "units" H; "return_sequences" gives every step's hidden state [T, H]
// instead of the last one [H]. Examples [..., T, F] hold several sequences each (an ONNX LSTM's
// batch inside one example): they run as more sequences of the batch, giving [..., T, H] or
// [..., H]. Parameters in PyTorch's names and layouts, gates in its order (input, forget, cell,
// output): weight_ih_l0 [4H, F], weight_hh_l0 [4H, H], bias_ih_l0 [4H],
// bias_hh_l0 [4H], all uniform in +-1/sqrt(H) unless "init" sets the weights'.
//
//   z_t = x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh       [N, 4H] = [i | f | g | o] before activation
//   i, f, o = sigmoid(.), g = tanh(.);  c_t = f * c_{t-1} + i * g;  h_t = o * tanh(c_t)
#include <cmath>

#include "model/layer.h"

namespace nnrt::model {
namespace {

enum Gate { kInput = 0, kForget = 1, kCell = 2, kOutput = 3 };

// Step t of a batch of sequences [N, T, K] as a [N, K] view.
Array step_of(const Array &seq, int64_t t) {
  Array s = seq.slice(1, t, 1);
  Strides strides{};
  strides[0] = s.strides()[0];
  strides[1] = s.strides()[2];
  return s.view(Shape{s.dim(0), s.dim(2)}, strides, s.offset());
}

// What the forward pass keeps per step: the activated gates [N, 4H], the cell state c_t,
// tanh(c_t) and the hidden state h_t.
struct StepState {
  static constexpr size_t kArrays = 4;
  Array act, c, tanh_c, h;
};

class LstmLayer : public Layer {
 public:
  int64_t units = 0, features = 0, steps = 0;
  int64_t per_example = 1;  // sequences per example: the product of the dims before [T, F]
  Shape out_shape;
  bool return_sequences = false;
  bool custom_init = false;  // "init" given: it sets the weights' (else PyTorch's default)
  Init weight_init;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (x.rank < 2) shape_error("expects examples shaped [time, features] (or [..., time, features]), got ", to_string(x));
    steps = x[x.rank - 2];
    features = x[x.rank - 1];
    std::vector<int64_t> out(x.dims.begin(), x.dims.begin() + (x.rank - 2));
    per_example = 1;
    for (int64_t d : out) per_example *= d;
    if (return_sequences) out.push_back(steps);
    out.push_back(units);
    out_shape = Shape::of(out);
    return out_shape;
  }

  std::vector<ParamSpec> param_specs() const override {
    double bound = 1.0 / std::sqrt(static_cast<double>(units));
    Init pytorch{Init::kUniform, -bound, bound};
    Init w = custom_init ? weight_init : pytorch;
    int64_t gates = 4 * units;
    return {{"weight_ih_l0", Shape{gates, features}, w, features, gates},
            {"weight_hh_l0", Shape{gates, units}, w, units, gates},
            {"bias_ih_l0", Shape{gates}, pytorch, units, gates},
            {"bias_hh_l0", Shape{gates}, pytorch, units, gates}};
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override {
    Context &ctx = pass.ctx;
    const Array &x = in[0];
    int64_t n = x.dim(0) * per_example;
    nnrt_dtype dtype = x.dtype();
    // The input projections of every step in one matmul: [N * T, F] x [F, 4H] -> [N, T, 4H].
    Array x2d = ops::reshape(ctx, x, {n * steps, features});
    Array bias = ops::add(ctx, params[2], params[3]);
    Array xw = ops::reshape(ctx, ops::matmul(ctx, x2d, ops::transpose(params[0], {1, 0}), &bias),
                            {n, steps, 4 * units});
    Array w_hh_t = ops::transpose(params[1], {1, 0});
    Array sequence = return_sequences ? ops::empty(ctx, dtype, Shape{n, steps, units}) : Array();

    saved.arrays = {x2d};
    Array h, c;
    for (int64_t t = 0; t < steps; ++t) {
      Array z = t == 0 ? step_of(xw, 0) : ops::add(ctx, ops::matmul(ctx, h, w_hh_t), step_of(xw, t));
      Array act = ops::empty(ctx, dtype, Shape{n, 4 * units});
      ops::unary_into(ctx, NNRT_UNARY_SIGMOID, gates(z, kInput, 2), gates(act, kInput, 2));  // i and f
      ops::unary_into(ctx, NNRT_UNARY_TANH, gates(z, kCell), gates(act, kCell));
      ops::unary_into(ctx, NNRT_UNARY_SIGMOID, gates(z, kOutput), gates(act, kOutput));
      Array ig = ops::mul(ctx, gates(act, kInput), gates(act, kCell));
      c = t == 0 ? ig : ops::add(ctx, ops::mul(ctx, gates(act, kForget), c), ig);
      Array tanh_c = ops::unary(ctx, NNRT_UNARY_TANH, c);
      h = ops::mul(ctx, gates(act, kOutput), tanh_c);
      if (return_sequences) ops::copy_into(ctx, h, step_of(sequence, t));
      saved.arrays.insert(saved.arrays.end(), {act, c, tanh_c, h});
    }
    Array y = return_sequences ? sequence : h;
    return per_example == 1 && out_shape.rank <= 2 ? y : ops::reshape(ctx, y, with_batch(x.dim(0), out_shape).vec());
  }

  // Back-propagation through time, from the last step to the first. The per-step work is what
  // the recurrence forces; the weight gradients and dx come from three matmuls over all steps.
  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &,
                const Saved &saved, const Array &dout_example, std::vector<Array> &din, std::vector<Array> &dparams) const override {
    Context &ctx = pass.ctx;
    const Array &x2d = saved.arrays[0];
    int64_t n = in[0].dim(0) * per_example;
    Array dout = ops::reshape(ctx, dout_example, return_sequences ? std::vector<int64_t>{n, steps, units}
                                                                  : std::vector<int64_t>{n, units});
    nnrt_dtype dtype = x2d.dtype();
    std::vector<Array> dz_steps(steps), h_prev_steps(steps);
    Array dh_next, dc_next;  // from step t + 1 into step t
    for (int64_t t = steps - 1; t >= 0; --t) {
      StepState s = state(saved, t);
      Array dh = return_sequences ? step_of(dout, t) : (t == steps - 1 ? dout : Array());
      if (!dh.defined()) dh = dh_next;
      else if (dh_next.defined()) dh = ops::add(ctx, dh, dh_next);

      // h = o * tanh(c): into the output gate and the cell.
      Array da = ops::empty(ctx, dtype, Shape{n, 4 * units});  // gradient w.r.t. the activated gates
      ops::binary_into(ctx, NNRT_BINARY_MUL, dh, s.tanh_c, gates(da, kOutput));
      Array dc = ops::unary_backward(ctx, NNRT_UNARY_TANH, ops::mul(ctx, dh, gates(s.act, kOutput)), s.tanh_c, true);
      if (dc_next.defined()) ops::binary_into(ctx, NNRT_BINARY_ADD, dc, dc_next, dc);
      // c = f * c_prev + i * g
      ops::binary_into(ctx, NNRT_BINARY_MUL, dc, gates(s.act, kCell), gates(da, kInput));
      if (t > 0) ops::binary_into(ctx, NNRT_BINARY_MUL, dc, state(saved, t - 1).c, gates(da, kForget));
      else ops::fill_into(ctx, gates(da, kForget), 0);
      ops::binary_into(ctx, NNRT_BINARY_MUL, dc, gates(s.act, kInput), gates(da, kCell));
      // Through the activations: sigmoid for i, f, o, then the cell gate's tanh over its block.
      Array dz = ops::unary_backward(ctx, NNRT_UNARY_SIGMOID, da, s.act, true);
      ops::copy_into(ctx, ops::unary_backward(ctx, NNRT_UNARY_TANH, gates(da, kCell), gates(s.act, kCell), true),
                     gates(dz, kCell));

      dz_steps[t] = ops::reshape(ctx, dz, {n, 1, 4 * units});
      if (t > 0) {
        dc_next = ops::mul(ctx, dc, gates(s.act, kForget));
        dh_next = ops::matmul(ctx, dz, params[1]);
        h_prev_steps[t] = ops::reshape(ctx, state(saved, t - 1).h, {n, 1, units});
      } else {
        h_prev_steps[t] = ops::zeros(ctx, dtype, Shape{n, 1, units});  // the zero initial state
      }
    }
    // Every step at once: dz [N * T, 4H] against x [N * T, F] and h_prev [N * T, H].
    Array dz = ops::reshape(ctx, ops::concat(ctx, dz_steps, 1), {n * steps, 4 * units});
    Array h_prev = ops::reshape(ctx, ops::concat(ctx, h_prev_steps, 1), {n * steps, units});
    Array dz_t = ops::transpose(dz, {1, 0});
    if (pass.needs_input_grad(0)) din[0] = ops::reshape(ctx, ops::matmul(ctx, dz, params[0]), in[0].shape().vec());
    dparams[0] = ops::matmul(ctx, dz_t, x2d);
    dparams[1] = ops::matmul(ctx, dz_t, h_prev);
    dparams[2] = ops::reduce(ctx, NNRT_REDUCE_SUM, dz, 1u, false);
    // Both biases have the same gradient; each gets its own array, as a trainer may update
    // gradients in place.
    dparams[3] = ops::cast(ctx, dparams[2], dparams[2].dtype());
  }

 private:
  // Gate block k (and the count - 1 after it) of a [N, 4H] array, as a view.
  Array gates(const Array &a, Gate k, int64_t count = 1) const { return a.slice(1, k * units, count * units); }

  static StepState state(const Saved &saved, int64_t t) {
    const Array *a = &saved.arrays[1 + StepState::kArrays * static_cast<size_t>(t)];
    return StepState{a[0], a[1], a[2], a[3]};
  }
};

}  // namespace

std::unique_ptr<Layer> make_lstm(JsonReader &config) {
  auto l = std::make_unique<LstmLayer>();
  l->units = config.require_int("units", 1, INT64_MAX / 4);  // four gates of `units` each
  l->return_sequences = config.get_bool("return_sequences", false);
  l->custom_init = config.has("init");
  l->weight_init = read_init(config, "init", Init{});
  return l;
}

}  // namespace nnrt::model
