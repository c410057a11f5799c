// Cases for UNARY and UNARY_BACKWARD: every alg, every float dtype (and the integer ones NEG and
// ABS take), NNRT_FLAG_USE_DST where defined, strided / broadcast inputs and in-place runs.
#include "cases.h"

namespace nnrt::conformance {
namespace {

struct UnaryAlg {
  int32_t alg;
  const char *name;
  double alpha, beta;
  Fill x;  // the forward input's domain
};

const std::vector<UnaryAlg> &unary_algs() {
  static const std::vector<UnaryAlg> v{
      {NNRT_UNARY_IDENTITY, "identity", 0, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_NEG, "neg", 0, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_ABS, "abs", 0, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_EXP, "exp", 0, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_LOG, "log", 0, 0, Fill::U(0.05, 4)},
      {NNRT_UNARY_SQRT, "sqrt", 0, 0, Fill::U(0.05, 4)},
      {NNRT_UNARY_SQUARE, "square", 0, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_RELU, "relu", 0, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_LEAKY_RELU, "leaky_relu", 0.1, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_LEAKY_RELU, "leaky_relu(-0.2)", -0.2, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_ELU, "elu", 0.7, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_GELU, "gelu", 0, 0, Fill::U(-4, 4)},
      {NNRT_UNARY_SIGMOID, "sigmoid", 0, 0, Fill::U(-5, 5)},
      {NNRT_UNARY_TANH, "tanh", 0, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_LINEAR, "linear", 1.5, -0.25, Fill::U(-3, 3)},
      {NNRT_UNARY_CLIP, "clip", -0.5, 0.7, Fill::U(-2, 2)},
      {NNRT_UNARY_SIGN, "sign", 0, 0, Fill::Ties(-2, 2)},
  };
  return v;
}

// The algs added since (SiLU and the others of mobile networks and transformers). They draw from a
// picker of their own, so that the cases of the algs above keep their names.
const std::vector<UnaryAlg> &added_unary_algs() {
  static const std::vector<UnaryAlg> v{
      {NNRT_UNARY_SWISH, "silu", 1, 0, Fill::U(-6, 6)},
      {NNRT_UNARY_SWISH, "swish(1.7)", 1.7, 0, Fill::U(-4, 4)},
      {NNRT_UNARY_HARD_SIGMOID, "hardsigmoid", 1.0 / 6, 0.5, Fill::U(-4, 4)},
      {NNRT_UNARY_HARD_SIGMOID, "hardsigmoid(0.2,0.5)", 0.2, 0.5, Fill::U(-4, 4)},
      {NNRT_UNARY_HARD_SWISH, "hardswish", 1.0 / 6, 0.5, Fill::U(-4, 4)},
      {NNRT_UNARY_HARD_SWISH, "hardswish(0.25,0.4)", 0.25, 0.4, Fill::U(-4, 4)},
      {NNRT_UNARY_GELU_TANH, "gelu_tanh", 0, 0, Fill::U(-4, 4)},
      {NNRT_UNARY_ERF, "erf", 0, 0, Fill::U(-3, 3)},
      {NNRT_UNARY_SOFTPLUS, "softplus", 0, 0, Fill::U(-20, 20)},
  };
  return v;
}

// The forward output's range, for backward cases that take it (NNRT_FLAG_USE_DST).
bool output_fill(const UnaryAlg &u, Fill *f) {
  switch (u.alg) {
    case NNRT_UNARY_RELU: *f = Fill::ReluOut(-2, 3); return true;
    case NNRT_UNARY_LEAKY_RELU:
      if (u.alpha < 0) return false;  // the sign of x is lost: not a defined use
      *f = Fill::U(-0.3, 3);
      return true;
    case NNRT_UNARY_ELU: *f = Fill::U(-0.69, 3); return true;
    case NNRT_UNARY_SIGMOID: *f = Fill::U(0.01, 0.99); return true;
    case NNRT_UNARY_TANH: *f = Fill::U(-0.99, 0.99); return true;
    case NNRT_UNARY_LINEAR: *f = Fill::U(-3, 3); return true;
    default: return false;
  }
}

nnrt_op_attrs unary_attrs(const UnaryAlg &u, uint32_t flags = 0) {
  nnrt_op_attrs a = no_attrs();
  a.alg = u.alg;
  a.alpha = u.alpha;
  a.beta = u.beta;
  a.flags = flags;
  return a;
}

Dims random_dims(Picker &p) {
  Dims d;
  int rank = static_cast<int>(p.between(1, 4));
  for (int i = 0; i < rank; ++i) d.push_back(p.size());
  return d;
}

// A layout for the inputs of a case: mostly contiguous, sometimes a transposed, padded or
// broadcast view.
struct InputView {
  Layout layout = Layout::contiguous;
  uint32_t broadcast = 0;
  std::string name() const {
    return std::string(layout_name(layout)) + (broadcast ? "+broadcast" : "");
  }
};

InputView pick_view(Picker &p, const Dims &d) {
  InputView v;
  switch (p.between(0, 5)) {
    case 0: v.layout = Layout::transposed; break;
    case 1: v.layout = Layout::padded; break;
    case 2:
      v.broadcast = 1u << p.between(0, static_cast<int64_t>(d.size()) - 1);
      break;
    default: break;
  }
  return v;
}

void add_forward(Picker &p, const std::vector<UnaryAlg> &algs, std::vector<Case> &out) {
  for (const UnaryAlg &u : algs)
    for (int32_t t : float_dtypes()) {
      Dims d = random_dims(p);
      InputView v = pick_view(p, d);
      Layout yl = p.chance(0.2) ? Layout::padded : Layout::contiguous;
      std::string group = std::string("unary/") + u.name + "/" + dtype_name(t);
      out.push_back(CaseBuilder(NNRT_OP_UNARY, group + "/" + dims_name(d) + "/" + v.name() + "->" + layout_name(yl),
                                group)
                        .in(make_tensor(t, d, v.layout, v.broadcast), u.x)
                        .out(make_tensor(t, d, yl))
                        .attrs(unary_attrs(u))
                        .done());
    }
  // In place (y is x's buffer), f32 and bf16.
  for (const UnaryAlg &u : algs)
    for (int32_t t : {NNRT_DTYPE_F32, NNRT_DTYPE_BF16}) {
      Dims d = random_dims(p);
      std::string group = std::string("unary/") + u.name + "/" + dtype_name(t);
      out.push_back(CaseBuilder(NNRT_OP_UNARY, group + "/" + dims_name(d) + "/in-place", group)
                        .in(make_tensor(t, d), u.x)
                        .out(make_tensor(t, d))
                        .attrs(unary_attrs(u))
                        .alias(0)
                        .done());
    }
  // NaN, infinities and signed zeros (f32, f64): how each alg treats them is part of its meaning.
  for (const UnaryAlg &u : algs)
    for (int32_t t : {NNRT_DTYPE_F32, NNRT_DTYPE_F64}) {
      Dims d{p.size(), 9};
      std::string group = std::string("unary/") + u.name + "/" + dtype_name(t);
      out.push_back(CaseBuilder(NNRT_OP_UNARY, group + "/" + dims_name(d) + "/nan-inf", group)
                        .in(make_tensor(t, d), Fill::Special(-3, 3))
                        .out(make_tensor(t, d))
                        .attrs(unary_attrs(u))
                        .done());
    }
  // The integer ones.
  for (const UnaryAlg &u : algs) {
    if (u.alg != NNRT_UNARY_NEG && u.alg != NNRT_UNARY_ABS) continue;
    for (int32_t t : {NNRT_DTYPE_I32, NNRT_DTYPE_I64}) {
      Dims d = random_dims(p);
      std::string group = std::string("unary/") + u.name + "/" + dtype_name(t);
      out.push_back(CaseBuilder(NNRT_OP_UNARY, group + "/" + dims_name(d), group)
                        .in(make_tensor(t, d), Fill::Ints(-1000, 1000))
                        .out(make_tensor(t, d))
                        .attrs(unary_attrs(u))
                        .exact()
                        .done());
    }
  }
}

void add_backward(Picker &p, const std::vector<UnaryAlg> &algs, std::vector<Case> &out) {
  for (const UnaryAlg &u : algs)
    for (int32_t t : float_dtypes())
      for (bool use_dst : {false, true}) {
        Fill s = u.x;
        if (use_dst && !output_fill(u, &s)) continue;
        Dims d = random_dims(p);
        InputView vdy = pick_view(p, d), vs = pick_view(p, d);
        std::string group = std::string("unary_backward/") + u.name + (use_dst ? "/use_dst/" : "/") + dtype_name(t);
        out.push_back(CaseBuilder(NNRT_OP_UNARY_BACKWARD,
                                  group + "/" + dims_name(d) + "/dy:" + vdy.name() + "/s:" + vs.name(), group)
                          .in(make_tensor(t, d, vdy.layout, vdy.broadcast))
                          .in(make_tensor(t, d, vs.layout, vs.broadcast), s)
                          .out(make_tensor(t, d, p.chance(0.2) ? Layout::padded : Layout::contiguous))
                          .attrs(unary_attrs(u, use_dst ? NNRT_FLAG_USE_DST : 0))
                          .done());
      }
}

void add_backward_special(Picker &p, const std::vector<UnaryAlg> &algs, std::vector<Case> &out) {
  for (const UnaryAlg &u : algs)
    for (bool use_dst : {false, true}) {
      Fill s;
      if (use_dst && !output_fill(u, &s)) continue;
      Dims d{p.size(), 9};
      std::string group = std::string("unary_backward/") + u.name + (use_dst ? "/use_dst/" : "/") + "f32";
      Case c = CaseBuilder(NNRT_OP_UNARY_BACKWARD, group + "/" + dims_name(d) + "/nan-inf", group)
                   .in(make_tensor(NNRT_DTYPE_F32, d), Fill::Special(-1, 1))
                   .in(make_tensor(NNRT_DTYPE_F32, d), Fill::Special(-3, 3))
                   .out(make_tensor(NNRT_DTYPE_F32, d))
                   .attrs(unary_attrs(u, use_dst ? NNRT_FLAG_USE_DST : 0))
                   .done();
      // dx = dy * f'(x): f' is computed to a few ulps of its terms (about 1), which near a zero of
      // f' (gelu's at -0.75, tanh's 1 - y^2 near |y| = 1) is many ulps of f' itself.
      c.magnitude_input = 0;
      out.push_back(c);
    }
}

}  // namespace

void add_unary_cases(Picker &p, std::vector<Case> &out) {
  add_forward(p, unary_algs(), out);
  Dims big{64, 200};
  out.push_back(CaseBuilder(NNRT_OP_UNARY, "unary/relu/f32/concurrent/64x200", "unary/relu/f32")
                    .in(make_tensor(NNRT_DTYPE_F32, big))
                    .out(make_tensor(NNRT_DTYPE_F32, big))
                    .attrs(unary_attrs(unary_algs()[7]))
                    .concurrent()
                    .done());
  add_backward(p, unary_algs(), out);
  add_backward_special(p, unary_algs(), out);
  Picker added = p.fork(0xadd5u);
  add_forward(added, added_unary_algs(), out);
  add_backward(added, added_unary_algs(), out);
  add_backward_special(added, added_unary_algs(), out);
}

}  // namespace nnrt::conformance
