// binary: elementwise add, sub, mul or div ("op") with numpy broadcasting, of two inputs or of one
// input and a constant ("constant": its shape, right-aligned against an example; "constant_first":
// whether it is the left operand). The constant is a parameter named "<layer>.constant" that the
// model keeps but does not train (ONNX imports fill it). Gradients are summed over the dims that
// were broadcast.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class BinaryLayer : public Layer {
 public:
  nnrt_binary_alg alg = NNRT_BINARY_ADD;
  std::vector<int64_t> constant;  // empty: two inputs
  bool has_constant = false, constant_first = false;
  Shape out_shape;

  // Left-pads an example shape with ones to `rank`.
  static Shape padded(const Shape &s, int32_t rank) {
    Shape p;
    p.rank = rank;
    for (int32_t i = 0; i < rank; ++i) p.dims[i] = i < rank - s.rank ? 1 : s[i - (rank - s.rank)];
    return p;
  }

  Shape build(const std::vector<Shape> &inputs) override {
    std::vector<Shape> operands = inputs;
    if (has_constant) operands.insert(constant_first ? operands.begin() : operands.end(), Shape::of(constant));
    if (operands.size() != 2) shape_error("takes two operands (inputs, or one input and \"constant\"), got ", operands.size());
    try {
      out_shape = broadcast_shapes(operands[0], operands[1], where().c_str());
    } catch (const Error &e) {
      shape_error(e.what());
    }
    if (out_shape.rank + 1 > NNRT_MAX_DIMS) shape_error("the output ", to_string(out_shape), " has too many dims");
    return out_shape;
  }

  std::vector<ParamSpec> param_specs() const override {
    if (!has_constant) return {};
    return {{"constant", Shape::of(constant), Init{}, 0, 0, false}};
  }

  // An operand as a batch array of rank out_shape.rank + 1 (the constant with batch 1).
  Array operand(Context &ctx, const Array &a, bool is_constant, nnrt_dtype dtype) const {
    Shape example = is_constant ? a.shape() : Shape::of(std::vector<int64_t>(a.shape().dims.begin() + 1, a.shape().dims.begin() + a.rank()));
    Shape p = with_batch(is_constant ? 1 : a.dim(0), padded(example, out_shape.rank));
    return ops::reshape(ctx, as_dtype(ctx, a, dtype), p.vec());
  }

  std::pair<Array, Array> operands(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params) const {
    nnrt_dtype dt = in[0].dtype();
    if (!has_constant) return {operand(pass.ctx, in[0], false, dt), operand(pass.ctx, in[1], false, dt)};
    Array x = operand(pass.ctx, in[0], false, dt), c = operand(pass.ctx, params[0], true, dt);
    return constant_first ? std::make_pair(c, x) : std::make_pair(x, c);
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &) const override {
    auto [a, b] = operands(pass, in, params);
    return ops::binary(pass.ctx, alg, a, b);
  }

  // Sums g over the dims where `like` (a batch array of g's rank) is 1 but g is not, then gives it
  // `shape`.
  static Array unbroadcast(Context &ctx, const Array &g, const Array &like, const Shape &shape) {
    uint32_t mask = 0;
    for (int32_t i = 0; i < g.rank(); ++i)
      if (like.dim(i) == 1 && g.dim(i) != 1) mask |= 1u << i;
    Array r = mask ? ops::reduce(ctx, NNRT_REDUCE_SUM, g, mask, true) : g;
    return ops::reshape(ctx, r, shape.vec());
  }

  void backward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, const Array &out,
                const Saved &, const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    Context &ctx = pass.ctx;
    auto [a, b] = operands(pass, in, params);
    Array da, db;
    switch (alg) {
      case NNRT_BINARY_ADD: da = dout, db = dout; break;
      case NNRT_BINARY_SUB: da = dout, db = ops::unary(ctx, NNRT_UNARY_NEG, dout); break;
      case NNRT_BINARY_MUL: da = ops::mul(ctx, dout, b), db = ops::mul(ctx, dout, a); break;
      default:  // div: d(a/b) = da / b - out / b db
        da = ops::binary(ctx, NNRT_BINARY_DIV, dout, b);
        db = ops::unary(ctx, NNRT_UNARY_NEG, ops::mul(ctx, da, ops::reshape(ctx, out, da.shape().vec())));
        break;
    }
    // Gradients go to run-time inputs only (the constant is not trained).
    int k = 0;
    for (int side = 0; side < 2; ++side) {
      bool is_constant = has_constant && (side == 0) == constant_first;
      if (is_constant) continue;
      if (pass.needs_input_grad(k)) din[k] = unbroadcast(ctx, side == 0 ? da : db, side == 0 ? a : b, in[k].shape());
      ++k;
    }
  }
};

}  // namespace

std::unique_ptr<Layer> make_binary(JsonReader &config) {
  auto l = std::make_unique<BinaryLayer>();
  std::string op = config.get_string("op", "");
  if (op == "add") l->alg = NNRT_BINARY_ADD;
  else if (op == "sub") l->alg = NNRT_BINARY_SUB;
  else if (op == "mul") l->alg = NNRT_BINARY_MUL;
  else if (op == "div") l->alg = NNRT_BINARY_DIV;
  else fail(NNRT_ERR_INVALID_ARGUMENT, config.name("op"), ": expected \"add\", \"sub\", \"mul\" or \"div\", got \"", op, "\"");
  l->has_constant = config.has("constant");
  l->constant = config.get_int_list("constant", {});
  if (l->constant.size() >= NNRT_MAX_DIMS) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("constant"), ": too many dims");
  for (int64_t d : l->constant)
    if (d <= 0) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("constant"), ": dims must be positive, got ", d);
  l->constant_first = config.get_bool("constant_first", false);
  return l;
}

}  // namespace nnrt::model
