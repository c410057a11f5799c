// binary: elementwise add, sub, mul or div ("op") with numpy broadcasting, or "matmul" (numpy's
// matmul: [..., M, K] x [..., K, N] -> [..., M, N], the dims before the last two broadcast), of
// two inputs or of one input and a constant ("constant": its shape, right-aligned against an example; "constant_first":
// whether it is the left operand). The constant is a parameter named "<layer>.constant" that the
// model keeps but does not train (ONNX imports fill it). Gradients are summed over the dims that
// were broadcast.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class BinaryLayer : public Layer {
 public:
  nnrt_binary_alg alg = NNRT_BINARY_ADD;
  bool matmul = false;  // "matmul" instead of alg
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
      out_shape = matmul ? matmul_shape(operands[0], operands[1]) : broadcast_shapes(operands[0], operands[1], where().c_str());
    } catch (const Error &e) {
      shape_error(e.what());
    }
    if (out_shape.rank + 1 > NNRT_MAX_DIMS) shape_error("the output ", to_string(out_shape), " has too many dims");
    return out_shape;
  }

  // [..., M, K] x [..., K, N] -> [..., M, N], the leading dims broadcast.
  Shape matmul_shape(const Shape &a, const Shape &b) const {
    if (a.rank < 2 || b.rank < 2) {
      shape_error("matmul takes operands of at least 2 dims per example ([..., M, K] and [..., K, N]), got ", to_string(a),
                  " and ", to_string(b));
    }
    if (a[a.rank - 1] != b[b.rank - 2]) shape_error("matmul of ", to_string(a), " and ", to_string(b), ": K differs");
    Shape batch = broadcast_shapes(Shape::of(a.dims.data(), a.rank - 2), Shape::of(b.dims.data(), b.rank - 2), where().c_str());
    std::vector<int64_t> out = batch.vec();
    out.push_back(a[a.rank - 2]);
    out.push_back(b[b.rank - 1]);
    return Shape::of(out);
  }

  // The last two dims of a batch array swapped, as a view.
  static Array transposed(const Array &x) {
    std::vector<int64_t> perm;
    for (int32_t i = 0; i < x.rank(); ++i) perm.push_back(i);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return ops::transpose(x, perm);
  }

  std::vector<ParamSpec> param_specs() const override {
    if (!has_constant) return {};
    return {{"constant", Shape::of(constant), Init{}, 0, 0, false}};
  }

  // An operand as a batch array of rank out_shape.rank + 1 (the constant with batch 1).
  Array operand(Context &ctx, const Array &a, bool is_constant, nnrt_dtype dtype) const {
    Shape example = is_constant ? a.shape() : Shape::of(std::vector<int64_t>(a.shape().dims.begin() + 1, a.shape().dims.begin() + a.rank()));
    Shape p = with_batch(is_constant ? 1 : a.dim(0), padded(example, out_shape.rank));
    // An operand of that shape already is used as it is: a reshape of a channels-last image (a
    // residual add of two convolutions' outputs) would copy it to NCHW.
    Array same = as_dtype(ctx, a, dtype);
    return same.shape() == p ? same : ops::reshape(ctx, same, p.vec());
  }

  std::pair<Array, Array> operands(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params) const {
    nnrt_dtype dt = in[0].dtype();
    if (!has_constant) return {operand(pass.ctx, in[0], false, dt), operand(pass.ctx, in[1], false, dt)};
    Array x = operand(pass.ctx, in[0], false, dt), c = operand(pass.ctx, params[0], true, dt);
    return constant_first ? std::make_pair(c, x) : std::make_pair(x, c);
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &params, Saved &) const override {
    auto [a, b] = operands(pass, in, params);
    return matmul ? ops::matmul(pass.ctx, a, b) : ops::binary(pass.ctx, alg, a, b);
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
    if (matmul) {
      da = ops::matmul(ctx, dout, transposed(b));
      db = ops::matmul(ctx, transposed(a), dout);
    } else switch (alg) {
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
  if (op == "matmul") l->matmul = true;
  else if (op == "add") l->alg = NNRT_BINARY_ADD;
  else if (op == "sub") l->alg = NNRT_BINARY_SUB;
  else if (op == "mul") l->alg = NNRT_BINARY_MUL;
  else if (op == "div") l->alg = NNRT_BINARY_DIV;
  else fail(NNRT_ERR_INVALID_ARGUMENT, config.name("op"), ": expected \"add\", \"sub\", \"mul\", \"div\" or \"matmul\", got \"", op, "\"");
  l->has_constant = config.has("constant");
  l->constant = config.get_int_list("constant", {});
  if (l->constant.size() >= NNRT_MAX_DIMS) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("constant"), ": too many dims");
  for (int64_t d : l->constant)
    if (d <= 0) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("constant"), ": dims must be positive, got ", d);
  l->constant_first = config.get_bool("constant_first", false);
  return l;
}

}  // namespace nnrt::model
