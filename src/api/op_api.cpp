// nnrt_op: array math by name. Each named op reads its attributes strictly and calls src/backend/ops.
#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "api/handles.h"
#include "backend/ops.h"
#include "core/checked_math.h"
#include "core/dtype.h"
#include "core/json_options.h"

using namespace nnrt;
using namespace nnrt::api;

namespace {

struct OpArgs {
  Context &ctx;
  const std::vector<Array> &in;
  JsonReader &attrs;
  const char *name;
};

struct NamedOp {
  int32_t min_inputs, max_inputs, outputs;
  std::function<std::vector<Array>(OpArgs &)> run;
};

nnrt_dtype read_dtype(JsonReader &attrs, nnrt_dtype fallback) {
  std::string s = attrs.get_string("dtype", dtype_name(fallback));
  nnrt_dtype t;
  if (!parse_dtype(s, &t)) {
    fail(NNRT_ERR_INVALID_ARGUMENT, attrs.name("dtype"), ": expected f32, f64, f16, bf16, i32, i64, u8 or bool, got \"",
         s, "\"");
  }
  return t;
}

Shape read_shape(JsonReader &attrs) {
  if (!attrs.has("shape")) fail(NNRT_ERR_INVALID_ARGUMENT, attrs.name("shape"), " is required (a list of dims)");
  std::vector<int64_t> dims = attrs.get_int_list("shape", {});
  check_shape(static_cast<int32_t>(dims.size()), dims.data(), attrs.name("shape").c_str());
  return Shape::of(dims);
}

// A pair of ints from an int or [h, w]; padding also takes [top, left, bottom, right].
void read_pair(JsonReader &attrs, const char *key, int32_t out[2], int64_t fallback, int64_t min) {
  std::vector<int64_t> v = attrs.get_int_or_list(key, {fallback, fallback}, 2, min);
  out[0] = checked_int32(v[0], attrs.name(key).c_str());
  out[1] = checked_int32(v[1], attrs.name(key).c_str());
}

void read_padding(JsonReader &attrs, int32_t pad[4]) {
  std::vector<int64_t> v{0, 0};
  if (attrs.has("padding") && attrs.raw("padding").is_array() && attrs.raw("padding").size() == 4) {
    std::vector<int64_t> four = attrs.get_int_list("padding", {});
    for (int i = 0; i < 4; ++i) {
      if (four[i] < 0) fail(NNRT_ERR_INVALID_ARGUMENT, attrs.name("padding"), ": expected values >= 0");
      pad[i] = checked_int32(four[i], attrs.name("padding").c_str());
    }
    return;
  }
  v = attrs.get_int_or_list("padding", v, 2, 0);
  pad[0] = pad[2] = checked_int32(v[0], attrs.name("padding").c_str());
  pad[1] = pad[3] = checked_int32(v[1], attrs.name("padding").c_str());
}

NamedOp binary_op(nnrt_binary_alg alg) {
  return {2, 2, 1, [alg](OpArgs &a) { return std::vector<Array>{ops::binary(a.ctx, alg, a.in[0], a.in[1])}; }};
}

// An elementwise op; alpha and beta are attributes when they have defaults (nonzero), fixed (and
// not attributes) when `fixed` is true.
NamedOp unary_op(nnrt_unary_alg alg, double default_alpha = 0, bool float_only = true, double default_beta = 0,
                 bool fixed = false) {
  return {1, 1, 1, [=](OpArgs &a) {
            double alpha = default_alpha && !fixed ? a.attrs.get_number("alpha", default_alpha) : default_alpha;
            double beta = default_beta && !fixed ? a.attrs.get_number("beta", default_beta) : default_beta;
            if (float_only && !dtype_is_float(a.in[0].dtype())) {
              fail(NNRT_ERR_DTYPE, a.name, ": expected a float array (f32, f64, f16, bf16), got ",
                   dtype_name(a.in[0].dtype()));
            }
            return std::vector<Array>{ops::unary(a.ctx, alg, a.in[0], alpha, beta)};
          }};
}

NamedOp reduce_op(nnrt_reduce_alg alg) {
  return {1, 1, 1, [alg](OpArgs &a) {
            const Array &x = a.in[0];
            uint32_t mask = a.attrs.has("axes") ? ops::axes_mask(a.attrs.get_int_list("axes", {}), x.rank(), a.name)
                                                : ops::all_axes(x.rank());
            bool keep = a.attrs.get_bool("keepdims", false);
            return std::vector<Array>{ops::reduce(a.ctx, alg, x, mask, keep)};
          }};
}

NamedOp argreduce_op(nnrt_argreduce_alg alg) {
  return {1, 1, 1, [alg](OpArgs &a) {
            const Array &x = a.in[0];
            int64_t axis = -1;
            if (a.attrs.has("axes") && a.attrs.has("axis")) {
              fail(NNRT_ERR_INVALID_ARGUMENT, a.name, ": give \"axis\" or \"axes\", not both");
            }
            if (a.attrs.has("axes")) {
              std::vector<int64_t> axes = a.attrs.get_int_list("axes", {});
              if (axes.size() != 1) {
                fail(NNRT_ERR_INVALID_ARGUMENT, a.attrs.name("axes"), ": ", a.name, " takes exactly one axis, got ",
                     axes.size());
              }
              axis = axes[0];
            }
            axis = a.attrs.get_int("axis", axis);
            if (x.rank() == 0) fail(NNRT_ERR_SHAPE, a.name, ": needs an array of rank >= 1, got a scalar");
            bool keep = a.attrs.get_bool("keepdims", false);
            return std::vector<Array>{ops::argreduce(a.ctx, alg, x, normalize_axis(axis, x.rank(), a.name), keep)};
          }};
}

NamedOp softmax_op(nnrt_softmax_alg alg) {
  return {1, 1, 1, [alg](OpArgs &a) {
            int64_t axis = a.attrs.get_int("axis", -1);
            if (a.in[0].rank() == 0) fail(NNRT_ERR_SHAPE, a.name, ": needs an array of rank >= 1, got a scalar");
            return std::vector<Array>{ops::softmax(a.ctx, alg, a.in[0], normalize_axis(axis, a.in[0].rank(), a.name))};
          }};
}

NamedOp norm_op(nnrt_norm_alg alg) {
  return {1, 3, 1, [alg](OpArgs &a) {
            if (a.in[0].rank() == 0) fail(NNRT_ERR_SHAPE, a.name, ": needs an array of rank >= 1, got a scalar");
            ops::LayernormParams p;
            p.alg = alg;
            p.axis = normalize_axis(a.attrs.get_int("axis", -1), a.in[0].rank(), a.name);
            p.eps = a.attrs.get_number("eps", 1e-5, 0);
            const Array *gamma = a.in.size() > 1 ? &a.in[1] : nullptr, *beta = a.in.size() > 2 ? &a.in[2] : nullptr;
            return std::vector<Array>{ops::layernorm(a.ctx, a.in[0], gamma, beta, p, false).y};
          }};
}

NamedOp pool_op(nnrt_pool_alg max_or_avg) {
  return {1, 1, 1, [max_or_avg](OpArgs &a) {
            ops::Pool2dParams p;
            p.alg = max_or_avg;
            if (!a.attrs.has("kernel")) fail(NNRT_ERR_INVALID_ARGUMENT, a.attrs.name("kernel"), " is required");
            read_pair(a.attrs, "kernel", p.kernel, 1, 1);
            read_pair(a.attrs, "stride", p.stride, 0, 1);
            if (!a.attrs.has("stride")) {
              p.stride[0] = p.kernel[0];
              p.stride[1] = p.kernel[1];
            }
            read_padding(a.attrs, p.pad);
            if (max_or_avg != NNRT_POOL_MAX && !a.attrs.get_bool("count_include_pad", true)) {
              p.alg = NNRT_POOL_AVG_EXCLUDE_PAD;
            }
            return std::vector<Array>{ops::pool2d(a.ctx, a.in[0], p)};
          }};
}

NamedOp random_op(nnrt_random_alg alg) {
  return {0, 0, 1, [alg](OpArgs &a) {
            Shape s = read_shape(a.attrs);
            uint64_t seed = a.attrs.has("seed") ? static_cast<uint64_t>(a.attrs.get_int("seed", 0, 0)) : a.ctx.next_seed();
            double p0, p1;
            if (alg == NNRT_RANDOM_UNIFORM) {
              p0 = a.attrs.get_number("low", 0);
              p1 = a.attrs.get_number("high", 1);
              if (!(p0 <= p1)) fail(NNRT_ERR_INVALID_ARGUMENT, a.name, ": low (", p0, ") must not exceed high (", p1, ")");
            } else {
              p0 = a.attrs.get_number("mean", 0);
              p1 = a.attrs.get_number("std", 1, 0);
            }
            nnrt_dtype dt = read_dtype(a.attrs, NNRT_DTYPE_F32);
            return std::vector<Array>{ops::random(a.ctx, alg, dt, s, seed, 0, p0, p1)};
          }};
}

const std::map<std::string, NamedOp> &named_ops() {
  static const std::map<std::string, NamedOp> table = {
      {"add", binary_op(NNRT_BINARY_ADD)},
      {"sub", binary_op(NNRT_BINARY_SUB)},
      {"mul", binary_op(NNRT_BINARY_MUL)},
      {"div", binary_op(NNRT_BINARY_DIV)},
      {"maximum", binary_op(NNRT_BINARY_MAX)},
      {"minimum", binary_op(NNRT_BINARY_MIN)},
      {"neg", unary_op(NNRT_UNARY_NEG, 0, false)},
      {"abs", unary_op(NNRT_UNARY_ABS, 0, false)},
      {"exp", unary_op(NNRT_UNARY_EXP)},
      {"log", unary_op(NNRT_UNARY_LOG)},
      {"sqrt", unary_op(NNRT_UNARY_SQRT)},
      {"relu", unary_op(NNRT_UNARY_RELU)},
      {"sigmoid", unary_op(NNRT_UNARY_SIGMOID)},
      {"tanh", unary_op(NNRT_UNARY_TANH)},
      {"gelu", unary_op(NNRT_UNARY_GELU)},
      {"leaky_relu", unary_op(NNRT_UNARY_LEAKY_RELU, 0.01)},
      {"elu", unary_op(NNRT_UNARY_ELU, 1.0)},
      {"gelu_tanh", unary_op(NNRT_UNARY_GELU_TANH)},
      {"silu", unary_op(NNRT_UNARY_SWISH, 1.0, true, 0, true)},
      {"hardswish", unary_op(NNRT_UNARY_HARD_SWISH, 1.0 / 6, true, 0.5, true)},
      {"hardsigmoid", unary_op(NNRT_UNARY_HARD_SIGMOID, 1.0 / 6, true, 0.5)},
      {"softplus", unary_op(NNRT_UNARY_SOFTPLUS)},
      {"erf", unary_op(NNRT_UNARY_ERF)},
      {"matmul",
       {2, 2, 1,
        [](OpArgs &a) {
          Array x = a.in[0], y = a.in[1];
          auto swap_last = [](const Array &m) {
            std::vector<int64_t> perm;
            for (int32_t i = 0; i < m.rank(); ++i) perm.push_back(i);
            if (m.rank() >= 2) std::swap(perm[m.rank() - 1], perm[m.rank() - 2]);
            return ops::transpose(m, perm);
          };
          if (a.attrs.get_bool("transpose_a", false)) x = swap_last(x);
          if (a.attrs.get_bool("transpose_b", false)) y = swap_last(y);
          return std::vector<Array>{ops::matmul(a.ctx, x, y)};
        }}},
      {"sum", reduce_op(NNRT_REDUCE_SUM)},
      {"mean", reduce_op(NNRT_REDUCE_MEAN)},
      {"max", reduce_op(NNRT_REDUCE_MAX)},
      {"min", reduce_op(NNRT_REDUCE_MIN)},
      {"argmax", argreduce_op(NNRT_ARG_MAX)},
      {"argmin", argreduce_op(NNRT_ARG_MIN)},
      {"softmax", softmax_op(NNRT_SOFTMAX)},
      {"log_softmax", softmax_op(NNRT_LOG_SOFTMAX)},
      {"layer_norm", norm_op(NNRT_NORM_LAYER)},
      {"rms_norm", norm_op(NNRT_NORM_RMS)},
      {"attention",
       {3, 4, 1,
        [](OpArgs &a) {
          ops::AttentionParams p;
          p.causal = a.attrs.get_bool("causal", false);
          const Array &q = a.in[0];
          // PyTorch's scaled_dot_product_attention default: 1 / sqrt(the head size).
          const double head = q.rank() == 4 && q.dim(3) > 0 ? static_cast<double>(q.dim(3)) : 1.0;
          p.scale = a.attrs.get_number("scale", 1.0 / std::sqrt(head));
          const Array *mask = a.in.size() > 3 ? &a.in[3] : nullptr;
          // o is a view of a [N, Tq, H, Dv] array: the caller gets it as [N, H, Tq, Dv], contiguous.
          return std::vector<Array>{ops::contiguous(a.ctx, ops::attention(a.ctx, q, a.in[1], a.in[2], mask, p))};
        }}},
      {"cast",
       {1, 1, 1,
        [](OpArgs &a) {
          if (!a.attrs.has("dtype")) fail(NNRT_ERR_INVALID_ARGUMENT, a.attrs.name("dtype"), " is required");
          return std::vector<Array>{ops::cast(a.ctx, a.in[0], read_dtype(a.attrs, NNRT_DTYPE_F32))};
        }}},
      {"reshape",
       {1, 1, 1,
        [](OpArgs &a) {
          if (!a.attrs.has("shape")) fail(NNRT_ERR_INVALID_ARGUMENT, a.attrs.name("shape"), " is required");
          return std::vector<Array>{ops::reshape(a.ctx, a.in[0], a.attrs.get_int_list("shape", {}))};
        }}},
      {"transpose",
       {1, 1, 1, [](OpArgs &a) { return std::vector<Array>{ops::transpose(a.in[0], a.attrs.get_int_list("perm", {}))}; }}},
      {"conv2d",
       {2, 3, 1,
        [](OpArgs &a) {
          ops::Conv2dParams p;
          read_pair(a.attrs, "stride", p.stride, 1, 1);
          read_pair(a.attrs, "dilation", p.dilation, 1, 1);
          read_padding(a.attrs, p.pad);
          p.groups = static_cast<int32_t>(a.attrs.get_int("groups", 1, 1, INT32_MAX));
          const Array *bias = a.in.size() > 2 ? &a.in[2] : nullptr;
          return std::vector<Array>{ops::conv2d(a.ctx, a.in[0], a.in[1], bias, p)};
        }}},
      {"maxpool2d", pool_op(NNRT_POOL_MAX)},
      {"avgpool2d", pool_op(NNRT_POOL_AVG_INCLUDE_PAD)},
      {"fill",
       {0, 0, 1,
        [](OpArgs &a) {
          Shape s = read_shape(a.attrs);
          double v = a.attrs.get_number("value", 0);
          return std::vector<Array>{ops::full(a.ctx, read_dtype(a.attrs, NNRT_DTYPE_F32), s, v)};
        }}},
      {"random_uniform", random_op(NNRT_RANDOM_UNIFORM)},
      {"random_normal", random_op(NNRT_RANDOM_NORMAL)},
  };
  return table;
}

}  // namespace

extern "C" nnrt_status nnrt_op(nnrt_context *ctx, const char *name, const nnrt_array *const *inputs, int32_t n_inputs,
                               const char *attrs_json, nnrt_array **outputs, int32_t n_outputs) {
  return guard("nnrt_op", [&] {
    check_handle(ctx, "ctx");
    require(name != nullptr, "name is NULL; expected an op name such as \"add\"");
    require(n_inputs >= 0 && n_outputs >= 0, "n_inputs and n_outputs must be >= 0");
    require(inputs != nullptr || n_inputs == 0, "inputs is NULL but n_inputs is positive");
    require(outputs != nullptr || n_outputs == 0, "outputs is NULL but n_outputs is positive");
    auto it = named_ops().find(name);
    if (it == named_ops().end()) fail(NNRT_ERR_UNSUPPORTED, "unknown op \"", name, "\"");
    const NamedOp &op = it->second;
    // Plain concatenation, not cat(): this runs on every call, and a stream costs more than a
    // small op.
    const std::string what = std::string("op ") + name;
    if (n_inputs < op.min_inputs || n_inputs > op.max_inputs) {
      if (op.min_inputs == op.max_inputs) fail(NNRT_ERR_INVALID_ARGUMENT, what, " takes ", op.min_inputs, " input(s), got ", n_inputs);
      fail(NNRT_ERR_INVALID_ARGUMENT, what, " takes ", op.min_inputs, " to ", op.max_inputs, " inputs, got ", n_inputs);
    }
    if (n_outputs != op.outputs) fail(NNRT_ERR_INVALID_ARGUMENT, what, " has ", op.outputs, " output(s), got n_outputs ", n_outputs);
    std::vector<Array> in;
    in.reserve(static_cast<size_t>(n_inputs));
    for (int32_t i = 0; i < n_inputs; ++i) in.push_back(check_handle(inputs[i], "inputs", i)->impl);
    Json attrs_doc = parse_json_object(attrs_json, what + ": attrs");
    JsonReader attrs(attrs_doc, "attrs");
    OpArgs args{*ctx->impl, in, attrs, name};
    std::vector<Array> result = op.run(args);
    attrs.finish();
    std::vector<std::unique_ptr<nnrt_array>> handles;
    for (Array &r : result) {
      handles.push_back(std::make_unique<nnrt_array>());
      handles.back()->impl = std::move(r);
    }
    for (int32_t i = 0; i < n_outputs; ++i) outputs[i] = handles[i].release();
  });
}
