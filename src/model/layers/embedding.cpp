// embedding: looks up rows of a [vocab, units] table (PyTorch's nn.Embedding). Examples are index
// sequences [T] (or one index []), given as integers or as whole-number floats (a model's input is
// converted to its float type); the output is [T, units]. Indices take no gradient.
#include "core/dtype.h"
#include "model/layer.h"

namespace nnrt::model {
namespace {

class EmbeddingLayer : public Layer {
 public:
  int64_t vocab = 0, units = 0;
  Init init{Init::kNormal, 0, 1};

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (x.rank > 1) shape_error("expects examples of indices shaped [time] or [], got ", to_string(x));
    Shape out = x;
    out.dims[out.rank++] = units;
    return out;
  }

  std::vector<ParamSpec> param_specs() const override {
    return {{"weight", Shape{vocab, units}, init, units, vocab}};
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &saved) const override {
    Context &ctx = pass.ctx;
    // Floats truncate toward zero: 3.0 is row 3.
    Array indices = dtype_is_integer(in[0].dtype()) && in[0].dtype() != NNRT_DTYPE_U8
                        ? in[0]
                        : ops::cast(ctx, in[0], NNRT_DTYPE_I64);
    saved.arrays = {indices};
    try {
      return ops::gather(ctx, params[0], indices);
    } catch (const Error &e) {
      // The op names the bad index and the table's rows; say which layer it was.
      if (e.status() != NNRT_ERR_INVALID_ARGUMENT) throw;
      fail(NNRT_ERR_INVALID_ARGUMENT, where(), ": ", e.what());
    }
  }

  StepSupport step_support() const override { return {StepKind::kPerPosition, ""}; }

  void backward(Pass &pass, const std::vector<Array> &, const std::vector<Array> &, const Array &, const Saved &saved,
                const Array &dout, std::vector<Array> &, std::vector<Array> &dparams) const override {
    dparams[0] = ops::scatter_add(pass.ctx, dout, saved.arrays[0], vocab);
  }
};

}  // namespace

std::unique_ptr<Layer> make_embedding(JsonReader &config) {
  auto l = std::make_unique<EmbeddingLayer>();
  l->vocab = config.require_int("vocab", 1);
  l->units = config.require_int("units", 1);
  l->init = read_init(config, "init", l->init);
  return l;
}

}  // namespace nnrt::model
