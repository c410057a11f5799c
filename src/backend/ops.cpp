#include "backend/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/dispatch.h"
#include "backend/op_checks.h"
#include "core/checked_math.h"
#include "core/dtype.h"
#include "core/error.h"
#include "nnrt/kernels/half.h"
#include "nnrt/kernels/op_manifest.h"

namespace nnrt::ops {

using backend::OpCall;

namespace {

void require_rank(const Array &x, int32_t rank, const char *op, const char *what) {
  if (x.rank() != rank) {
    fail(NNRT_ERR_SHAPE, op, ": ", what, " must have rank ", rank, ", got ", to_string(x.shape()));
  }
}

Shape keep_shape(const Shape &s, uint32_t mask) {
  Shape out = s;
  for (int32_t i = 0; i < s.rank; ++i)
    if (mask & (1u << i)) out.dims[i] = 1;
  return out;
}

Shape drop_axes(const Shape &s, uint32_t mask) {
  Shape out;
  for (int32_t i = 0; i < s.rank; ++i)
    if (!(mask & (1u << i))) out.dims[out.rank++] = s.dims[i];
  return out;
}

void set_conv_attrs(nnrt_op_attrs &a, const Conv2dParams &p) {
  for (int i = 0; i < 2; ++i) {
    a.stride[i] = p.stride[i];
    a.dilation[i] = p.dilation[i];
  }
  for (int i = 0; i < 4; ++i) a.pad[i] = p.pad[i];
  a.groups = p.groups;
}

void set_pool_attrs(nnrt_op_attrs &a, const Pool2dParams &p) {
  for (int i = 0; i < 2; ++i) {
    a.kernel[i] = p.kernel[i];
    a.stride[i] = p.stride[i];
  }
  for (int i = 0; i < 4; ++i) a.pad[i] = p.pad[i];
}

}  // namespace

// ---- creation and layout --------------------------------------------------------------------

Array empty(Context &ctx, nnrt_dtype dtype, const Shape &shape) { return Array::allocate(ctx.device(), dtype, shape); }

Array empty_image(Context &ctx, nnrt_dtype dtype, const Shape &shape, bool channels_last) {
  if (!channels_last || shape.rank != 4) return empty(ctx, dtype, shape);
  Shape nhwc = shape;
  nhwc.dims[1] = shape.dims[2];
  nhwc.dims[2] = shape.dims[3];
  nhwc.dims[3] = shape.dims[1];
  return Array::allocate(ctx.device(), dtype, nhwc).transposed({0, 3, 1, 2});
}

bool is_channels_last(const Array &x) {
  if (x.rank() != 4 || x.dim(1) < 2) return false;
  const Strides &s = x.strides();
  return s[1] == 1 && s[3] == x.dim(1) && s[2] == x.dim(3) * x.dim(1) && s[0] == x.dim(2) * x.dim(3) * x.dim(1);
}

Array zeros(Context &ctx, nnrt_dtype dtype, const Shape &shape) {
  return Array::allocate(ctx.device(), dtype, shape, true);
}

Array full(Context &ctx, nnrt_dtype dtype, const Shape &shape, double value) {
  Array y = empty(ctx, dtype, shape);
  fill_into(ctx, y, value);
  return y;
}

void fill_into(Context &ctx, const Array &dst, double value) {
  OpCall(NNRT_OP_FILL, 0).out(dst).scalar(NNRT_SCALAR_FILL_VALUE, value).run(ctx);
}

Array from_host(Context &ctx, nnrt_dtype dtype, const Shape &shape, const void *data, size_t nbytes) {
  Array a = empty(ctx, dtype, shape);
  a.copy_from_host(data, nbytes);
  return a;
}

Array random(Context &ctx, nnrt_random_alg alg, nnrt_dtype dtype, const Shape &shape, uint64_t seed,
             uint64_t counter, double a, double b) {
  if (!dtype_is_float(dtype)) fail(NNRT_ERR_DTYPE, "random: expected a float dtype, got ", dtype_name(dtype));
  Array y = empty(ctx, dtype, shape);
  OpCall call(NNRT_OP_RANDOM, alg);
  call.attrs().seed = seed;
  call.out(y).scalar(NNRT_SCALAR_RANDOM_A, a).scalar(NNRT_SCALAR_RANDOM_B, b).counter(counter).run(ctx);
  return y;
}

Array cast(Context &ctx, const Array &x, nnrt_dtype dtype) {
  Array y = empty(ctx, dtype, x.shape());
  OpCall(NNRT_OP_COPY, 0).in(x).out(y).run(ctx);
  return y;
}

void copy_into(Context &ctx, const Array &src, const Array &dst) {
  if (src.shape() != dst.shape()) {
    fail(NNRT_ERR_SHAPE, "copy: source ", to_string(src.shape()), " and destination ", to_string(dst.shape()), " differ");
  }
  OpCall(NNRT_OP_COPY, 0).in(src).out(dst).run(ctx);
}

Array contiguous(Context &ctx, const Array &x) { return x.is_contiguous() ? x : cast(ctx, x, x.dtype()); }

Array reshape(Context &ctx, const Array &x, const std::vector<int64_t> &shape) {
  if (shape.size() > NNRT_MAX_DIMS) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "reshape: a shape has at most ", NNRT_MAX_DIMS, " dims, got ", shape.size());
  }
  Shape s = Shape::of(shape);
  int32_t infer = -1;
  int64_t known = 1;
  for (int32_t i = 0; i < s.rank; ++i) {
    if (s.dims[i] == -1) {
      if (infer >= 0) fail(NNRT_ERR_INVALID_ARGUMENT, "reshape: at most one dim may be -1, got ", to_string(s));
      infer = i;
    } else if (s.dims[i] < 0) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "reshape: dims must be >= 0 or -1, got ", to_string(s));
    } else {
      known = checked_mul(known, s.dims[i], "reshape: the element count of the shape");
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0) {
      fail(NNRT_ERR_SHAPE, "reshape: cannot reshape ", to_string(x.shape()), " (", x.numel(), " elements) into ",
           to_string(s));
    }
    s.dims[infer] = x.numel() / known;
  }
  if (checked_numel(s, "reshape") != x.numel()) {
    fail(NNRT_ERR_SHAPE, "reshape: cannot reshape ", to_string(x.shape()), " (", x.numel(), " elements) into ",
         to_string(s), " (", s.numel(), " elements)");
  }
  Array v = x.reshaped_view(s);
  if (v.defined()) return v;
  return contiguous(ctx, x).reshaped_view(s);
}

Array transpose(const Array &x, const std::vector<int64_t> &perm_in) {
  std::vector<int64_t> perm = perm_in;
  if (perm.empty()) {
    for (int32_t i = x.rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int32_t>(perm.size()) != x.rank()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "transpose: perm has ", perm.size(), " entries for an array of rank ", x.rank());
  }
  std::vector<int32_t> p;
  uint32_t seen = 0;
  for (int64_t v : perm) {
    int32_t a = normalize_axis(v, x.rank(), "transpose");
    if (seen & (1u << a)) fail(NNRT_ERR_INVALID_ARGUMENT, "transpose: perm repeats dim ", a);
    seen |= 1u << a;
    p.push_back(a);
  }
  return x.transposed(p);
}

Array concat(Context &ctx, const std::vector<Array> &parts, int32_t axis) {
  if (parts.empty()) fail(NNRT_ERR_INVALID_ARGUMENT, "concat: no inputs");
  const Array &first = parts[0];
  int32_t ax = normalize_axis(axis, first.rank(), "concat");
  Shape out = first.shape();
  out.dims[ax] = 0;
  for (const Array &p : parts) {
    require_same_dtype(first, p, "concat");
    bool fits = p.rank() == first.rank();
    for (int32_t i = 0; fits && i < p.rank(); ++i) fits = i == ax || p.dim(i) == first.dim(i);
    if (!fits) {
      fail(NNRT_ERR_SHAPE, "concat along axis ", ax, ": ", to_string(first.shape()), " and ", to_string(p.shape()),
           " differ in another dim");
    }
    out.dims[ax] += p.dim(ax);
  }
  Array y = empty(ctx, first.dtype(), out);
  int64_t at = 0;
  for (const Array &p : parts) {
    copy_into(ctx, p, y.slice(ax, at, p.dim(ax)));
    at += p.dim(ax);
  }
  return y;
}

// ---- elementwise ----------------------------------------------------------------------------

Array unary(Context &ctx, nnrt_unary_alg alg, const Array &x, double alpha, double beta) {
  // A channels-last image stays so (ResNets' relu after a residual add): no reorder on either side.
  Array y = empty_image(ctx, x.dtype(), x.shape(), is_channels_last(x));
  unary_into(ctx, alg, x, y, alpha, beta);
  return y;
}

void unary_into(Context &ctx, nnrt_unary_alg alg, const Array &x, const Array &out, double alpha, double beta) {
  if (x.shape() != out.shape()) {
    fail(NNRT_ERR_SHAPE, "unary: input ", to_string(x.shape()), " and output ", to_string(out.shape()), " differ");
  }
  OpCall call(NNRT_OP_UNARY, alg);
  call.attrs().alpha = alpha;
  call.attrs().beta = beta;
  call.in(x).out(out).run(ctx);
}

Array unary_backward(Context &ctx, nnrt_unary_alg alg, const Array &dy, const Array &s, bool use_dst, double alpha,
                     double beta) {
  if (dy.shape() != s.shape()) {
    fail(NNRT_ERR_SHAPE, "unary backward: dy ", to_string(dy.shape()), " and the forward tensor ",
         to_string(s.shape()), " differ");
  }
  Array dx = empty_image(ctx, dy.dtype(), dy.shape(), is_channels_last(dy));
  OpCall call(NNRT_OP_UNARY_BACKWARD, alg);
  call.attrs().alpha = alpha;
  call.attrs().beta = beta;
  call.attrs().flags = use_dst ? NNRT_FLAG_USE_DST : 0;
  call.in(dy).in(s).out(dx).run(ctx);
  return dx;
}

Array binary(Context &ctx, nnrt_binary_alg alg, const Array &a, const Array &b) {
  require_same_dtype(a, b, "binary op");
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), "binary op");
  // A channels-last image stays so (a residual add between convolutions): the next convolution
  // reads it without a reorder.
  Array c = empty_image(ctx, a.dtype(), shape, is_channels_last(a) && a.shape() == shape);
  binary_into(ctx, alg, a, b, c);
  return c;
}

void binary_into(Context &ctx, nnrt_binary_alg alg, const Array &a, const Array &b, const Array &out) {
  require_same_dtype(a, b, "binary op");
  Shape s = broadcast_shapes(a.shape(), b.shape(), "binary op");
  if (broadcast_shapes(s, out.shape(), "binary op") != out.shape()) {
    fail(NNRT_ERR_SHAPE, "binary op: inputs ", to_string(a.shape()), " and ", to_string(b.shape()),
         " do not broadcast to the output ", to_string(out.shape()));
  }
  OpCall(NNRT_OP_BINARY, alg).in_broadcast(a, out.shape()).in_broadcast(b, out.shape()).out(out).run(ctx);
}

// ---- reductions -----------------------------------------------------------------------------

uint32_t all_axes(int32_t rank) { return rank >= 32 ? ~0u : (1u << rank) - 1u; }

uint32_t axes_mask(const std::vector<int64_t> &axes, int32_t rank, const char *op) {
  uint32_t mask = 0;
  for (int64_t a : axes) {
    int32_t d = normalize_axis(a, rank, op);
    if (mask & (1u << d)) fail(NNRT_ERR_INVALID_ARGUMENT, op, ": axis ", a, " is given twice");
    mask |= 1u << d;
  }
  return mask;
}

Array reduce(Context &ctx, nnrt_reduce_alg alg, const Array &x, uint32_t mask, bool keepdims) {
  Shape kept = keep_shape(x.shape(), mask);
  if (alg == NNRT_REDUCE_MEAN && !dtype_is_float(x.dtype()) && x.dtype() != NNRT_DTYPE_BOOL) {
    // Backends average floats only: an integer mean is the int64 sum divided by the count,
    // truncated toward zero, in x's dtype (an empty reduction gives 0, as integer division by 0 does).
    int64_t count = 1;
    for (int32_t i = 0; i < x.rank(); ++i)
      if (mask & (1u << i)) count *= x.dim(i);
    Array sum = reduce(ctx, NNRT_REDUCE_SUM, cast(ctx, x, NNRT_DTYPE_I64), mask, true);
    Array mean = cast(ctx, binary(ctx, NNRT_BINARY_DIV, sum, full(ctx, NNRT_DTYPE_I64, Shape{}, double(count))), x.dtype());
    return keepdims ? mean : mean.reshaped_view(drop_axes(x.shape(), mask));
  }
  Array y = empty(ctx, x.dtype(), kept);
  OpCall call(NNRT_OP_REDUCE, alg);
  call.attrs().axes_mask = mask;
  call.in(x).out(y).run(ctx);
  return keepdims ? y : y.reshaped_view(drop_axes(x.shape(), mask));
}

Array argreduce(Context &ctx, nnrt_argreduce_alg alg, const Array &x, int32_t axis, bool keepdims) {
  const char *what = alg == NNRT_ARG_MIN ? "argmin" : "argmax";
  int32_t ax = normalize_axis(axis, x.rank(), what);
  if (x.dim(ax) == 0) fail(NNRT_ERR_SHAPE, what, ": axis ", ax, " of ", to_string(x.shape()), " is empty");
  uint32_t mask = 1u << ax;
  Array y = empty(ctx, NNRT_DTYPE_I64, keep_shape(x.shape(), mask));
  OpCall call(NNRT_OP_ARGREDUCE, alg);
  call.attrs().axis = ax;
  call.in(x).out(y).run(ctx);
  return keepdims ? y : y.reshaped_view(drop_axes(x.shape(), mask));
}

// ---- linear algebra, softmax ----------------------------------------------------------------

Array matmul(Context &ctx, const Array &a, const Array &b, const Array *bias, nnrt_unary_alg fused, double alpha) {
  require_same_dtype(a, b, "matmul");
  require_float(a, "matmul", "a");
  if (a.rank() < 2 || b.rank() < 2) {
    fail(NNRT_ERR_SHAPE, "matmul: both inputs need rank >= 2, got ", to_string(a.shape()), " and ",
         to_string(b.shape()));
  }
  int64_t m = a.dim(a.rank() - 2), k = a.dim(a.rank() - 1), k2 = b.dim(b.rank() - 2), n = b.dim(b.rank() - 1);
  if (k != k2) {
    fail(NNRT_ERR_SHAPE, "matmul: a is ", to_string(a.shape()), " and b is ", to_string(b.shape()),
         ": a's last dim (", k, ") must equal b's second-to-last (", k2, ")");
  }
  Shape ba = a.shape(), bb = b.shape();
  ba.rank -= 2;
  bb.rank -= 2;
  Shape batch = broadcast_shapes(ba, bb, "matmul (batch dims)");
  Shape out = batch;
  out.dims[out.rank++] = m;
  out.dims[out.rank++] = n;
  Shape a_to = batch, b_to = batch;
  a_to.dims[a_to.rank++] = m;
  a_to.dims[a_to.rank++] = k;
  b_to.dims[b_to.rank++] = k;
  b_to.dims[b_to.rank++] = n;
  if (bias) {
    require_same_dtype(a, *bias, "matmul (bias)");
    if (bias->rank() != 1 || bias->dim(0) != n) {
      fail(NNRT_ERR_SHAPE, "matmul: bias must be [", n, "], got ", to_string(bias->shape()));
    }
  }
  Array c = empty(ctx, a.dtype(), out);
  OpCall call(NNRT_OP_MATMUL, 0);
  call.attrs().fused = fused;
  call.attrs().alpha = alpha;
  call.in_broadcast(a, a_to).in_broadcast(b, b_to);
  if (bias) call.in(*bias);
  call.out(c).run(ctx);
  return c;
}

Array softmax(Context &ctx, nnrt_softmax_alg alg, const Array &x, int32_t axis) {
  require_float(x, "softmax", "x");
  int32_t ax = normalize_axis(axis, x.rank(), "softmax");
  Array y = empty(ctx, x.dtype(), x.shape());
  OpCall call(NNRT_OP_SOFTMAX, alg);
  call.attrs().axis = ax;
  call.in(x).out(y).run(ctx);
  return y;
}

Array softmax_backward(Context &ctx, nnrt_softmax_alg alg, const Array &dy, const Array &y, int32_t axis) {
  int32_t ax = normalize_axis(axis, y.rank(), "softmax backward");
  Array dx = empty(ctx, dy.dtype(), dy.shape());
  OpCall call(NNRT_OP_SOFTMAX_BACKWARD, alg);
  call.attrs().axis = ax;
  call.in(dy).in(y).out(dx).run(ctx);
  return dx;
}

// ---- convolution and pooling ----------------------------------------------------------------

Shape conv2d_output_shape(const Shape &x, const Shape &w, const Conv2dParams &p) {
  if (x.rank != 4) fail(NNRT_ERR_SHAPE, "conv2d: input must be [N, C, H, W], got ", to_string(x));
  if (w.rank != 4) fail(NNRT_ERR_SHAPE, "conv2d: weight must be [O, C/groups, KH, KW], got ", to_string(w));
  if (p.groups < 1 || x[1] % p.groups != 0 || w[0] % p.groups != 0) {
    fail(NNRT_ERR_SHAPE, "conv2d: groups ", p.groups, " must divide the input channels (", x[1],
         ") and the output channels (", w[0], ")");
  }
  if (w[1] * p.groups != x[1]) {
    fail(NNRT_ERR_SHAPE, "conv2d: input ", to_string(x), " has ", x[1], " channels but weight ", to_string(w),
         " expects ", w[1] * p.groups, " (", w[1], " per group x ", p.groups, " groups)");
  }
  Shape out{x[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    if (p.stride[i] < 1 || p.dilation[i] < 1) fail(NNRT_ERR_INVALID_ARGUMENT, "conv2d: stride and dilation must be >= 1");
    int64_t span = checked_add(checked_mul(p.dilation[i], w[2 + i] - 1, "conv2d dilation"), 1, "conv2d dilation");
    int64_t padded = checked_add(x[2 + i], int64_t(p.pad[i]) + p.pad[i + 2], "conv2d padding");
    if (padded < span) {
      fail(NNRT_ERR_SHAPE, "conv2d: the kernel ", to_string(w), " (span ", span, ") is larger than the padded input ",
           to_string(x), " (", padded, ") along ", i == 0 ? "H" : "W");
    }
    out.dims[2 + i] = (padded - span) / p.stride[i] + 1;
  }
  return out;
}

Array conv2d(Context &ctx, const Array &x, const Array &w, const Array *bias, const Conv2dParams &p) {
  require_float(x, "conv2d", "input");
  require_same_dtype(x, w, "conv2d");
  Shape out = conv2d_output_shape(x.shape(), w.shape(), p);
  if (bias) {
    require_same_dtype(x, *bias, "conv2d (bias)");
    if (bias->rank() != 1 || bias->dim(0) != w.dim(0)) {
      fail(NNRT_ERR_SHAPE, "conv2d: bias must be [", w.dim(0), "], got ", to_string(bias->shape()));
    }
  }
  Array y = empty_image(ctx, x.dtype(), out, p.channels_last);
  OpCall call(NNRT_OP_CONV2D, 0);
  set_conv_attrs(call.attrs(), p);
  call.attrs().fused = p.fused;
  call.attrs().alpha = p.alpha;
  call.attrs().beta = p.beta;
  call.in(x).in(w);
  if (bias) call.in(*bias);
  call.out(y).run(ctx);
  return y;
}

// ---- int8 inference ----------------------------------------------------------------------------

namespace {

void require_quantized(const Array &a, const Quantization &q, const char *op, const char *what) {
  if (a.dtype() != q.dtype || (q.dtype != NNRT_DTYPE_U8 && q.dtype != NNRT_DTYPE_I8)) {
    fail(NNRT_ERR_DTYPE, op, ": ", what, " must be u8 or i8 as its quantization says (", dtype_name(q.dtype), "), got ",
         dtype_name(a.dtype()));
  }
}

// The weights, their scales and the bias of an integer product with `units` outputs.
void require_int8_weights(const Array &w, const Array &scales, const Array *bias, int64_t units, const char *op) {
  if (w.dtype() != NNRT_DTYPE_I8) fail(NNRT_ERR_DTYPE, op, ": weights must be i8, got ", dtype_name(w.dtype()));
  for (const Array *v : {&scales, bias}) {
    if (!v) continue;
    const char *what = v == bias ? "bias" : "scales";
    if (v->dtype() != NNRT_DTYPE_F32) fail(NNRT_ERR_DTYPE, op, ": ", what, " must be f32, got ", dtype_name(v->dtype()));
    if (v->rank() != 1 || v->dim(0) != units) {
      fail(NNRT_ERR_SHAPE, op, ": ", what, " must be [", units, "], got ", to_string(v->shape()));
    }
  }
}

void set_quantization_attrs(nnrt_op_attrs &attrs, const Quantization &q, bool weights_7bit) {
  attrs.scale = q.scale;
  attrs.zero_point = q.zero_point;
  if (weights_7bit) attrs.flags |= NNRT_FLAG_WEIGHTS_7BIT;
}

}  // namespace

Array quantize(Context &ctx, const Array &x, const Quantization &q) {
  if (x.dtype() != NNRT_DTYPE_F32) fail(NNRT_ERR_DTYPE, "quantize: x must be f32, got ", dtype_name(x.dtype()));
  if (q.dtype != NNRT_DTYPE_U8 && q.dtype != NNRT_DTYPE_I8) {
    fail(NNRT_ERR_DTYPE, "quantize: the target must be u8 or i8, got ", dtype_name(q.dtype));
  }
  Array y = x.rank() == 4 ? empty_image(ctx, q.dtype, x.shape(), is_channels_last(x)) : empty(ctx, q.dtype, x.shape());
  OpCall call(NNRT_OP_QUANTIZE, 0);
  set_quantization_attrs(call.attrs(), q, false);
  call.in(x).out(y).run(ctx);
  return y;
}

Array matmul_int8(Context &ctx, const Array &a, const Quantization &aq, const Array &b, const Array &scales,
                  const Array *bias, bool weights_7bit, nnrt_unary_alg fused, double alpha) {
  require_quantized(a, aq, "matmul_int8", "a");
  if (a.rank() != 2 || b.rank() != 2 || a.dim(1) != b.dim(0)) {
    fail(NNRT_ERR_SHAPE, "matmul_int8: a must be [M, K] and b [K, N], got ", to_string(a.shape()), " and ",
         to_string(b.shape()));
  }
  require_int8_weights(b, scales, bias, b.dim(1), "matmul_int8");
  Array c = empty(ctx, NNRT_DTYPE_F32, Shape{a.dim(0), b.dim(1)});
  OpCall call(NNRT_OP_MATMUL_INT8, 0);
  set_quantization_attrs(call.attrs(), aq, weights_7bit);
  call.attrs().fused = fused;
  call.attrs().alpha = alpha;
  call.in(a).in(b).in(scales);
  if (bias) call.in(*bias);
  call.out(c).run(ctx);
  return c;
}

Array conv2d_int8(Context &ctx, const Array &x, const Quantization &xq, const Array &w, const Array &scales,
                  const Array *bias, bool weights_7bit, const Conv2dParams &p) {
  require_quantized(x, xq, "conv2d_int8", "input");
  Shape out = conv2d_output_shape(x.shape(), w.shape(), p);
  require_int8_weights(w, scales, bias, w.dim(0), "conv2d_int8");
  Array y = empty_image(ctx, NNRT_DTYPE_F32, out, p.channels_last);
  OpCall call(NNRT_OP_CONV2D_INT8, 0);
  set_conv_attrs(call.attrs(), p);
  set_quantization_attrs(call.attrs(), xq, weights_7bit);
  call.attrs().fused = p.fused;
  call.attrs().alpha = p.alpha;
  call.attrs().beta = p.beta;
  call.in(x).in(w).in(scales);
  if (bias) call.in(*bias);
  call.out(y).run(ctx);
  return y;
}

Array conv2d_backward_data(Context &ctx, const Array &dy, const Array &w, const Shape &x_shape, const Conv2dParams &p) {
  Shape out = conv2d_output_shape(x_shape, w.shape(), p);
  if (dy.shape() != out) {
    fail(NNRT_ERR_SHAPE, "conv2d backward: dy is ", to_string(dy.shape()), ", expected ", to_string(out));
  }
  Array dx = empty_image(ctx, dy.dtype(), x_shape, is_channels_last(dy));
  OpCall call(NNRT_OP_CONV2D_BACKWARD_DATA, 0);
  set_conv_attrs(call.attrs(), p);
  call.in(dy).in(w).out(dx).run(ctx);
  return dx;
}

std::pair<Array, Array> conv2d_backward_weights(Context &ctx, const Array &x, const Array &dy, const Shape &w_shape,
                                                bool with_bias, const Conv2dParams &p) {
  Shape out = conv2d_output_shape(x.shape(), w_shape, p);
  if (dy.shape() != out) {
    fail(NNRT_ERR_SHAPE, "conv2d backward: dy is ", to_string(dy.shape()), ", expected ", to_string(out));
  }
  Array dw = empty(ctx, x.dtype(), w_shape);
  Array db;
  OpCall call(NNRT_OP_CONV2D_BACKWARD_WEIGHTS, 0);
  set_conv_attrs(call.attrs(), p);
  call.in(x).in(dy).out(dw);
  if (with_bias) {
    db = empty(ctx, x.dtype(), Shape{w_shape[0]});
    call.out(db);
  }
  call.run(ctx);
  return {dw, db};
}

Shape pool2d_output_shape(const Shape &x, const Pool2dParams &p) {
  if (x.rank != 4) fail(NNRT_ERR_SHAPE, "pool2d: input must be [N, C, H, W], got ", to_string(x));
  Shape out = x;
  for (int i = 0; i < 2; ++i) {
    if (p.kernel[i] < 1 || p.stride[i] < 1) fail(NNRT_ERR_INVALID_ARGUMENT, "pool2d: kernel and stride must be >= 1");
    if (p.pad[i] >= p.kernel[i] || p.pad[i + 2] >= p.kernel[i]) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "pool2d: padding must be smaller than the kernel");
    }
    int64_t padded = checked_add(x[2 + i], int64_t(p.pad[i]) + p.pad[i + 2], "pool2d padding");
    if (padded < p.kernel[i]) {
      fail(NNRT_ERR_SHAPE, "pool2d: the kernel (", p.kernel[0], "x", p.kernel[1], ") is larger than the padded input ",
           to_string(x));
    }
    out.dims[2 + i] = (padded - p.kernel[i]) / p.stride[i] + 1;
  }
  return out;
}

Array pool2d(Context &ctx, const Array &x, const Pool2dParams &p) {
  require_float(x, "pool2d", "input");
  Array y = empty_image(ctx, x.dtype(), pool2d_output_shape(x.shape(), p), is_channels_last(x));
  OpCall call(NNRT_OP_POOL2D, p.alg);
  set_pool_attrs(call.attrs(), p);
  call.in(x).out(y).run(ctx);
  return y;
}

Array pool2d_backward(Context &ctx, const Array &dy, const Array &x, const Pool2dParams &p) {
  Shape out = pool2d_output_shape(x.shape(), p);
  if (dy.shape() != out) {
    fail(NNRT_ERR_SHAPE, "pool2d backward: dy is ", to_string(dy.shape()), ", expected ", to_string(out));
  }
  const bool channels_last = is_channels_last(x);
  Array dx = empty_image(ctx, x.dtype(), x.shape(), channels_last);
  // The gradient of a channels-last image can come back plain (a flatten's backward gives NCHW
  // order): one copy puts it in x's layout, which the backends' pooling kernels want for both.
  Array dy_like_x = dy;
  if (channels_last && !is_channels_last(dy)) {
    dy_like_x = empty_image(ctx, dy.dtype(), dy.shape(), true);
    copy_into(ctx, dy, dy_like_x);
  }
  OpCall call(NNRT_OP_POOL2D_BACKWARD, p.alg);
  set_pool_attrs(call.attrs(), p);
  call.in(dy_like_x).in(x).out(dx).run(ctx);
  return dx;
}

// ---- normalisation, losses, regularisation, embeddings ---------------------------------------

namespace {
void check_channel_vector(const Array &v, const Array &x, const char *what) {
  if (v.rank() != 1 || v.dim(0) != x.dim(1) || v.dtype() != NNRT_DTYPE_F32) {
    fail(NNRT_ERR_SHAPE, "batchnorm: ", what, " must be f32[", x.dim(1), "] for input ", to_string(x.shape()),
         ", got ", dtype_name(v.dtype()), to_string(v.shape()));
  }
}
}  // namespace

BatchnormStats batchnorm_training(Context &ctx, const Array &x, const Array &gamma, const Array &beta, double eps) {
  require_float(x, "batchnorm", "input");
  if (x.rank() < 2) fail(NNRT_ERR_SHAPE, "batchnorm: input must be [N, C, ...], got ", to_string(x.shape()));
  check_channel_vector(gamma, x, "gamma");
  check_channel_vector(beta, x, "beta");
  BatchnormStats r{empty(ctx, x.dtype(), x.shape()), empty(ctx, NNRT_DTYPE_F32, Shape{x.dim(1)}),
                   empty(ctx, NNRT_DTYPE_F32, Shape{x.dim(1)})};
  OpCall call(NNRT_OP_BATCHNORM, 0);
  call.attrs().flags = NNRT_FLAG_TRAINING;
  call.attrs().eps = eps;
  call.in(x).in(gamma).in(beta).out(r.y).out(r.mean).out(r.var).run(ctx);
  return r;
}

Array batchnorm_inference(Context &ctx, const Array &x, const Array &gamma, const Array &beta, const Array &mean,
                          const Array &var, double eps) {
  require_float(x, "batchnorm", "input");
  if (x.rank() < 2) fail(NNRT_ERR_SHAPE, "batchnorm: input must be [N, C, ...], got ", to_string(x.shape()));
  for (const Array *v : {&gamma, &beta, &mean, &var}) check_channel_vector(*v, x, "a channel vector");
  Array y = empty(ctx, x.dtype(), x.shape());
  OpCall call(NNRT_OP_BATCHNORM, 0);
  call.attrs().eps = eps;
  call.in(x).in(gamma).in(beta).in(mean).in(var).out(y).run(ctx);
  return y;
}

BatchnormGrads batchnorm_backward(Context &ctx, const Array &x, const Array &dy, const Array &mean, const Array &var,
                                  const Array &gamma, double eps) {
  BatchnormGrads g{empty(ctx, x.dtype(), x.shape()), empty(ctx, NNRT_DTYPE_F32, Shape{x.dim(1)}),
                   empty(ctx, NNRT_DTYPE_F32, Shape{x.dim(1)})};
  OpCall call(NNRT_OP_BATCHNORM_BACKWARD, 0);
  call.attrs().eps = eps;
  call.in(x).in(dy).in(mean).in(var).in(gamma).out(g.dx).out(g.dgamma).out(g.dbeta).run(ctx);
  return g;
}

namespace {
// x's dims from the normalized axis on, and before it.
Shape normalized_shape(const Array &x, int32_t axis) { return Shape::of(x.shape().dims.data() + axis, x.rank() - axis); }
Shape row_shape(const Array &x, int32_t axis) { return Shape::of(x.shape().dims.data(), axis); }

void check_layernorm_operand(const Array &v, const Shape &want, const char *what) {
  if (v.dtype() != NNRT_DTYPE_F32 || v.shape() != want) {
    fail(NNRT_ERR_SHAPE, "layer_norm: ", what, " must be f32", to_string(want), ", got ", dtype_name(v.dtype()),
         to_string(v.shape()));
  }
}

void check_layernorm_x(const Array &x, const LayernormParams &p) {
  require_float(x, "layer_norm", "input");
  if (p.axis < 0 || p.axis >= x.rank()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "layer_norm: the first normalized axis must be in 0..", x.rank() - 1, " for input ",
         to_string(x.shape()), ", got ", p.axis);
  }
  if (!(p.eps >= 0)) fail(NNRT_ERR_INVALID_ARGUMENT, "layer_norm: eps must be >= 0, got ", p.eps);
}
}  // namespace

LayernormStats layernorm(Context &ctx, const Array &x, const Array *gamma, const Array *beta, const LayernormParams &p,
                         bool keep_stats) {
  check_layernorm_x(x, p);
  const Shape normalized = normalized_shape(x, p.axis);
  if (gamma) check_layernorm_operand(*gamma, normalized, "gamma");
  if (beta) check_layernorm_operand(*beta, normalized, "beta");
  if (beta && !gamma) {
    // The op's optional inputs come in order: an absent gamma before a present beta is ones.
    Array ones = full(ctx, NNRT_DTYPE_F32, normalized, 1.0);
    return layernorm(ctx, x, &ones, beta, p, keep_stats);
  }
  LayernormStats r{empty(ctx, x.dtype(), x.shape()), Array(), Array()};
  OpCall call(NNRT_OP_LAYERNORM, p.alg);
  call.attrs().axis = p.axis;
  call.attrs().eps = p.eps;
  call.in(x);
  if (gamma) call.in(*gamma);
  if (beta) call.in(*beta);
  call.out(r.y);
  if (keep_stats) {
    r.mean = empty(ctx, NNRT_DTYPE_F32, row_shape(x, p.axis));
    r.var = empty(ctx, NNRT_DTYPE_F32, row_shape(x, p.axis));
    call.out(r.mean).out(r.var);
  }
  call.run(ctx);
  return r;
}

LayernormGrads layernorm_backward(Context &ctx, const Array &x, const Array &dy, const Array &mean, const Array &var,
                                  const Array *gamma, const LayernormParams &p, bool parameter_grads) {
  check_layernorm_x(x, p);
  require_same_dtype(x, dy, "layer_norm backward");
  if (dy.shape() != x.shape()) {
    fail(NNRT_ERR_SHAPE, "layer_norm backward: the gradient ", to_string(dy.shape()), " must have the input's shape ",
         to_string(x.shape()));
  }
  const Shape normalized = normalized_shape(x, p.axis), rows = row_shape(x, p.axis);
  check_layernorm_operand(mean, rows, "mean");
  check_layernorm_operand(var, rows, "var");
  if (gamma) check_layernorm_operand(*gamma, normalized, "gamma");
  LayernormGrads g{empty(ctx, x.dtype(), x.shape()), Array(), Array()};
  OpCall call(NNRT_OP_LAYERNORM_BACKWARD, p.alg);
  call.attrs().axis = p.axis;
  call.attrs().eps = p.eps;
  call.in(x).in(dy).in(mean).in(var);
  if (gamma) call.in(*gamma);
  call.out(g.dx);
  if (parameter_grads) {
    g.dgamma = empty(ctx, NNRT_DTYPE_F32, normalized);
    g.dbeta = empty(ctx, NNRT_DTYPE_F32, normalized);
    call.out(g.dgamma).out(g.dbeta);
  }
  call.run(ctx);
  return g;
}

namespace {
void check_loss_inputs(nnrt_loss_alg alg, const Array &pred, const Array &target) {
  require_float(pred, "loss", "the prediction");
  bool class_loss = alg == NNRT_LOSS_SOFTMAX_CROSS_ENTROPY || alg == NNRT_LOSS_NLL;
  if (class_loss) {
    if (pred.rank() != 2) fail(NNRT_ERR_SHAPE, "loss: the prediction must be [N, classes], got ", to_string(pred.shape()));
    bool indices = target.dtype() == NNRT_DTYPE_I32 || target.dtype() == NNRT_DTYPE_I64;
    if (indices && !(target.rank() == 1 && target.dim(0) == pred.dim(0))) {
      fail(NNRT_ERR_SHAPE, "loss: class labels must be [", pred.dim(0), "] for predictions ", to_string(pred.shape()),
           ", got ", to_string(target.shape()));
    }
    if (!indices && target.shape() != pred.shape()) {
      fail(NNRT_ERR_SHAPE, "loss: targets must be class indices [", pred.dim(0), "] (i32/i64) or a distribution ",
           to_string(pred.shape()), ", got ", dtype_name(target.dtype()), to_string(target.shape()));
    }
    if (!indices) require_same_dtype(pred, target, "loss");
  } else {
    if (target.shape() != pred.shape()) {
      fail(NNRT_ERR_SHAPE, "loss: targets ", to_string(target.shape()), " must have the prediction's shape ",
           to_string(pred.shape()));
    }
    require_same_dtype(pred, target, "loss");
  }
}
}  // namespace

Array loss(Context &ctx, nnrt_loss_alg alg, const Array &pred, const Array &target) {
  check_loss_inputs(alg, pred, target);
  Array l = empty(ctx, pred.dtype(), Shape{});
  OpCall(NNRT_OP_LOSS, alg).in(pred).in(target).out(l).run(ctx);
  return l;
}

Array loss_backward(Context &ctx, nnrt_loss_alg alg, const Array &pred, const Array &target, double scale) {
  check_loss_inputs(alg, pred, target);
  Array d = empty(ctx, pred.dtype(), pred.shape());
  OpCall(NNRT_OP_LOSS_BACKWARD, alg).in(pred).in(target).out(d).scalar(NNRT_SCALAR_LOSS_SCALE, scale).run(ctx);
  return d;
}

std::pair<Array, Array> dropout(Context &ctx, const Array &x, double p, uint64_t seed, uint64_t counter) {
  require_float(x, "dropout", "input");
  if (!(p >= 0 && p < 1)) fail(NNRT_ERR_INVALID_ARGUMENT, "dropout: the probability must be in [0, 1), got ", p);
  Array y = empty(ctx, x.dtype(), x.shape()), mask = empty(ctx, NNRT_DTYPE_U8, x.shape());
  OpCall call(NNRT_OP_DROPOUT, 0);
  call.attrs().alpha = p;
  call.attrs().seed = seed;
  call.in(x).out(y).out(mask).counter(counter).run(ctx);
  return {y, mask};
}

Array dropout_backward(Context &ctx, const Array &dy, const Array &mask, double p) {
  Array dx = empty(ctx, dy.dtype(), dy.shape());
  OpCall call(NNRT_OP_DROPOUT_BACKWARD, 0);
  call.attrs().alpha = p;
  call.in(dy).in(mask).out(dx).run(ctx);
  return dx;
}

Array gather(Context &ctx, const Array &table, const Array &indices) {
  require_rank(table, 2, "gather", "the table");
  if (indices.dtype() != NNRT_DTYPE_I32 && indices.dtype() != NNRT_DTYPE_I64) {
    fail(NNRT_ERR_DTYPE, "gather: indices must be i32 or i64, got ", dtype_name(indices.dtype()));
  }
  if (indices.rank() + 1 > NNRT_MAX_DIMS) fail(NNRT_ERR_SHAPE, "gather: indices have too many dims");
  Shape out = indices.shape();
  out.dims[out.rank++] = table.dim(1);
  Array y = empty(ctx, table.dtype(), out);
  OpCall(NNRT_OP_GATHER, 0).in(table).in(indices).out(y).run(ctx);
  return y;
}

Array scatter_add(Context &ctx, const Array &dy, const Array &indices, int64_t rows) {
  Array dt = empty(ctx, dy.dtype(), Shape{rows, dy.dim(dy.rank() - 1)});
  OpCall(NNRT_OP_SCATTER_ADD, 0).in(dy).in(indices).out(dt).run(ctx);
  return dt;
}

// ---- optimizers -----------------------------------------------------------------------------

int32_t OptimizerRule::states() const { return kernels::optimizer_state_count(alg, momentum); }

void optimizer_update(Context &ctx, const OptimizerRule &rule, const Array &grad, const Array &param,
                      const Array *state0, const Array *state1, double lr, int64_t step, double grad_scale) {
  OpCall call(NNRT_OP_OPTIMIZER_UPDATE, rule.alg);
  nnrt_op_attrs &a = call.attrs();
  a.momentum = rule.momentum;
  a.beta1 = rule.beta1;
  a.beta2 = rule.beta2;
  a.eps = rule.eps;
  a.weight_decay = rule.weight_decay;
  a.l1 = rule.l1;
  a.l2 = rule.l2;
  a.clip_value = rule.clip_value;
  a.flags = rule.nesterov ? NNRT_FLAG_NESTEROV : 0;
  call.in(grad).out(param);
  if (state0) call.out(*state0);
  if (state1) call.out(*state1);
  call.scalar(NNRT_SCALAR_LEARNING_RATE, lr)
      .scalar(NNRT_SCALAR_STEP, static_cast<double>(step))
      .scalar(NNRT_SCALAR_GRAD_FACTOR, grad_scale)
      .run(ctx);
}

// ---- host helpers ---------------------------------------------------------------------------

std::vector<double> to_doubles(const Array &x) {
  std::vector<unsigned char> raw(x.nbytes());
  x.copy_to_host(raw.data(), raw.size());
  std::vector<double> out(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    const unsigned char *p = raw.data() + i * dtype_size(x.dtype());
    switch (x.dtype()) {
      case NNRT_DTYPE_F32: { float v; std::memcpy(&v, p, 4); out[i] = v; break; }
      case NNRT_DTYPE_F64: { std::memcpy(&out[i], p, 8); break; }
      case NNRT_DTYPE_F16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = kernels::f16_to_f32(v); break; }
      case NNRT_DTYPE_BF16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = kernels::bf16_to_f32(v); break; }
      case NNRT_DTYPE_I32: { int32_t v; std::memcpy(&v, p, 4); out[i] = v; break; }
      case NNRT_DTYPE_I64: { int64_t v; std::memcpy(&v, p, 8); out[i] = static_cast<double>(v); break; }
      case NNRT_DTYPE_U8:
      case NNRT_DTYPE_BOOL: out[i] = *p; break;
      case NNRT_DTYPE_I8: out[i] = static_cast<int8_t>(*p); break;
      default: fail(NNRT_ERR_INTERNAL, "to_doubles: an array of dtype ", static_cast<int>(x.dtype()));
    }
  }
  return out;
}

double item(const Array &x) {
  if (x.numel() != 1) fail(NNRT_ERR_SHAPE, "expected one element, got ", to_string(x.shape()));
  return to_doubles(x)[0];
}

}  // namespace nnrt::ops
