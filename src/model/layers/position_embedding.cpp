// position_embedding: adds a position's vector to each token of an example [T, E], so that attention
// (which treats tokens as a set) can tell positions apart. Learned (default): the parameter weight
// [T, E], as GPT's and BERT's position embeddings, initialised normal(0, 0.02); with "sinusoidal":
// true, the fixed table of "Attention Is All You Need" (sin on even features, cos on odd ones, of
// position / 10000^(2i / E)), and no parameter. Generation (model/decoder.h) adds the rows of the
// positions it runs, which it says.
#include <cmath>

#include "model/layer.h"

namespace nnrt::model {
namespace {

class PositionEmbeddingLayer : public Layer {
 public:
  bool sinusoidal = false;
  Init init;
  Shape table;  // [T, E]

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (x.rank != 2) shape_error("expects examples shaped [tokens, features], got ", to_string(x));
    table = x;
    return x;
  }

  std::vector<ParamSpec> param_specs() const override {
    if (sinusoidal) return {};
    return {{"weight", table, init, table[1], table[1]}};
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &) const override {
    return ops::add(pass.ctx, in[0], sinusoidal ? fixed_table(pass.ctx, in[0].dtype()) : cast_like(pass.ctx, params[0], in[0]));
  }

  StepSupport step_support() const override { return {StepKind::kCached, ""}; }

  // state.arrays: the sinusoidal table, made at the first step.
  Array forward_step(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, StepState &state,
                     int64_t start) const override {
    const int64_t n = in[0].dim(1);
    if (start + n > table[0]) fail(NNRT_ERR_INTERNAL, where(), ": positions ", start, "..", start + n, " of ", table[0]);
    if (sinusoidal && state.arrays.empty()) state.arrays = {fixed_table(pass.ctx, in[0].dtype())};
    const Array &rows = sinusoidal ? state.arrays[0] : params[0];
    return ops::add(pass.ctx, in[0], cast_like(pass.ctx, rows.slice(0, start, n), in[0]));
  }

  void backward(Pass &pass, const std::vector<Array> &, const std::vector<Array> &params, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &dparams) const override {
    if (pass.needs_input_grad(0)) din[0] = dout;
    if (!sinusoidal) {
      Array sum = ops::reduce(pass.ctx, NNRT_REDUCE_SUM, dout, 1u, false);
      dparams[0] = sum.dtype() == params[0].dtype() ? sum : ops::cast(pass.ctx, sum, params[0].dtype());
    }
  }

 private:
  static Array cast_like(Context &ctx, const Array &p, const Array &x) {
    return p.dtype() == x.dtype() ? p : ops::cast(ctx, p, x.dtype());
  }

  Array fixed_table(Context &ctx, nnrt_dtype dtype) const {
    const int64_t tokens = table[0], width = table[1];
    std::vector<double> v(static_cast<size_t>(tokens * width));
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t i = 0; i < width; ++i) {
        const double angle = static_cast<double>(t) / std::pow(10000.0, static_cast<double>(i - i % 2) / static_cast<double>(width));
        v[static_cast<size_t>(t * width + i)] = i % 2 == 0 ? std::sin(angle) : std::cos(angle);
      }
    Array f64 = ops::from_host(ctx, NNRT_DTYPE_F64, table, v.data(), v.size() * sizeof(double));
    return dtype == NNRT_DTYPE_F64 ? f64 : ops::cast(ctx, f64, dtype);
  }
};

}  // namespace

std::unique_ptr<Layer> make_position_embedding(JsonReader &config) {
  auto l = std::make_unique<PositionEmbeddingLayer>();
  l->sinusoidal = config.get_bool("sinusoidal", false);
  if (l->sinusoidal && config.has("init"))
    fail(NNRT_ERR_INVALID_ARGUMENT, config.name("init"), ": a sinusoidal table has no parameter to initialise");
  l->init = read_init(config, "init", Init{Init::kNormal, 0, 0.02});
  return l;
}

}  // namespace nnrt::model
