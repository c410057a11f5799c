// The layer interface: one small class per layer kind (src/model/layers/), each with a build step
// (shape inference and parameter specs), a forward pass and a backward pass written in ops.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/ops.h"
#include "core/error.h"
#include "core/json_options.h"
#include "model/init.h"

namespace nnrt::model {

// A parameter a layer owns, named "<layer>.<suffix>" in the model.
struct ParamSpec {
  std::string suffix;  // "weight", "bias", "running_mean", "weight_ih_l0"
  Shape shape;
  Init init;
  int64_t fan_in = 0, fan_out = 0;  // for the scaled initialisers
  bool trainable = true;            // batchnorm's running statistics are state, not trained
  nnrt_dtype dtype = NNRT_DTYPE_F32;  // I8 for a quantized layer's weight (zeros until written)
  int32_t max_abs = 0;              // I8: the largest magnitude a value may have (63 for 7 bits)
};

// What one forward or backward pass runs with.
struct Pass {
  Context &ctx;
  bool training = false;
  uint64_t step = 0;               // the trainer's iteration: makes dropout masks differ per step
  nnrt_dtype dtype = NNRT_DTYPE_F32;  // the float type activations are computed in
  // During backward: which inputs of the current layer need a gradient (a model input does not, so
  // the first convolution skips its costly backward-data pass).
  std::vector<bool> need_input_grad;
  bool needs_input_grad(size_t k) const { return k >= need_input_grad.size() || need_input_grad[k]; }
};

// What a layer's forward pass keeps for its backward pass.
struct Saved {
  std::vector<Array> arrays;
};

// Incremental decoding (generation with a key/value cache, model/decoder.h) runs a token model on
// only the newest positions of one sequence. How a layer takes part:
enum class StepKind {
  kRefused,      // it cannot: it mixes positions in a way that needs all of them (the reason says how)
  kPerPosition,  // each position alone: forward() runs as it is on [1, n, ...], n the new positions
  kCached,       // it mixes positions or needs their index: forward_step() with a StepState
};
struct StepSupport {
  StepKind kind = StepKind::kRefused;
  std::string why;  // for kRefused: what stops it, for the message naming the layer
};

// What a kCached layer keeps between the steps of one sequence (an attention layer's keys and
// values), owned by the decoder.
struct StepState {
  std::vector<Array> arrays;
};

class Layer {
 public:
  virtual ~Layer() = default;

  std::string name;      // from the config's "name", else "layer<i>" / the node name
  std::string type;      // "conv2d"
  uint64_t seed = 0;     // per-layer seed (dropout), derived from the model seed
  int32_t index = 0;     // position in the graph

  // Called once at build with the per-example shapes of the inputs (no batch dim). Returns the
  // per-example output shape; throws NNRT_ERR_SHAPE naming the layer and the shapes.
  virtual Shape build(const std::vector<Shape> &inputs) = 0;

  // The parameters this layer owns, in the order forward() and backward() receive them.
  virtual std::vector<ParamSpec> param_specs() const { return {}; }

  // Inputs and output carry the batch dim in front.
  virtual Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params,
                        Saved &saved) const = 0;

  // Given dout (the gradient of the loss with respect to the output), fills din[i] for every
  // input (left undefined when an input takes no gradient) and dparams[j] for every trainable
  // parameter (left undefined for state).
  virtual void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &out,
                        const Saved &saved, const Array &dout, std::vector<Array> &din,
                        std::vector<Array> &dparams) const = 0;

  // Why the layer cannot be trained (a quantized layer: "it is quantized to int8 ..."), or empty.
  virtual std::string why_not_trainable() const { return {}; }

  // Whether and how the layer runs incrementally (see StepKind); refused unless it says otherwise.
  virtual StepSupport step_support() const { return {StepKind::kRefused, "it has no incremental path"}; }

  // The kCached layers' incremental forward: `in` holds positions [start, start + n) of one
  // sequence ([1, n, ...]), `state` what earlier calls kept (empty when start is 0; this call
  // extends it). Returns the output at those positions, equal to forward()'s there.
  virtual Array forward_step(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params,
                             StepState &state, int64_t start) const;

  // The config keys this layer was built from, for the summary (without "type" and "name").
  Json attributes = Json::object();

  // "layer 3 (conv2d 'conv2')" for messages.
  std::string where() const;

 protected:
  // Throws NNRT_ERR_SHAPE: "<where>: <message>".
  template <class... Parts>
  [[noreturn]] void shape_error(Parts &&...parts) const {
    fail(NNRT_ERR_SHAPE, where(), ": ", std::forward<Parts>(parts)...);
  }
};

// Reads a layer's config (every key but "type", "name" and "inputs") and makes the layer; throws
// NNRT_ERR_INVALID_ARGUMENT for an unknown type or key. One factory per file in layers/.
using LayerFactory = std::unique_ptr<Layer> (*)(JsonReader &config);
std::unique_ptr<Layer> make_layer(const std::string &type, JsonReader &config);

// Converts x to `dtype` unless it already has it.
Array as_dtype(Context &ctx, const Array &x, nnrt_dtype dtype);

// Per-example shape -> batch shape.
Shape with_batch(int64_t n, const Shape &example);

}  // namespace nnrt::model
