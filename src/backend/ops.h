// Array math on a context: the internal API that nnrt_op and the model layers are written in.
//
// Each function checks shapes and dtypes (throwing nnrt::Error with a message that gives them),
// allocates its outputs on the context's device, and runs one op of the op set through dispatch.
// Inputs may be strided views; outputs are new contiguous arrays unless an *_into form is used.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "backend/array.h"
#include "backend/context.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::ops {

// ---- creation and layout --------------------------------------------------------------------
Array empty(Context &ctx, nnrt_dtype dtype, const Shape &shape);  // uninitialised
// An uninitialised image [N, C, H, W]; when `channels_last`, laid out N, H, W, C in memory (strides
// [H*W*C, 1, W*C, C]), the layout oneDNN's fastest convolution and pooling kernels read.
Array empty_image(Context &ctx, nnrt_dtype dtype, const Shape &shape, bool channels_last);
// True for a 4-D array laid out as empty_image(..., true) makes it (with more than one channel).
bool is_channels_last(const Array &x);
Array zeros(Context &ctx, nnrt_dtype dtype, const Shape &shape);
Array full(Context &ctx, nnrt_dtype dtype, const Shape &shape, double value);
void fill_into(Context &ctx, const Array &dst, double value);
Array from_host(Context &ctx, nnrt_dtype dtype, const Shape &shape, const void *data, size_t nbytes);
// Elements of `counter`.. of the counter-based stream `seed` (a, b: low/high or mean/std).
Array random(Context &ctx, nnrt_random_alg alg, nnrt_dtype dtype, const Shape &shape, uint64_t seed,
             uint64_t counter, double a, double b);

// A contiguous copy, converted to `dtype`.
Array cast(Context &ctx, const Array &x, nnrt_dtype dtype);
// Copies src into dst (same dims; dst may be a view; dtypes may differ).
void copy_into(Context &ctx, const Array &src, const Array &dst);
// x itself when contiguous, else a contiguous copy.
Array contiguous(Context &ctx, const Array &x);
// A reshape (view when possible); one dim of `shape` may be -1. Throws NNRT_ERR_SHAPE.
Array reshape(Context &ctx, const Array &x, const std::vector<int64_t> &shape);
// A transposed view; perm must be a permutation of the dims. Throws NNRT_ERR_INVALID_ARGUMENT.
Array transpose(const Array &x, const std::vector<int64_t> &perm);
// Concatenation along `axis` (all other dims equal).
Array concat(Context &ctx, const std::vector<Array> &parts, int32_t axis);

// ---- elementwise ----------------------------------------------------------------------------
Array unary(Context &ctx, nnrt_unary_alg alg, const Array &x, double alpha = 0, double beta = 0);
void unary_into(Context &ctx, nnrt_unary_alg alg, const Array &x, const Array &out, double alpha = 0,
                double beta = 0);
// dy * f'(s); s is the forward input, or the forward output when use_dst.
Array unary_backward(Context &ctx, nnrt_unary_alg alg, const Array &dy, const Array &s, bool use_dst,
                     double alpha = 0, double beta = 0);
// numpy broadcasting; a and b must have the same dtype.
Array binary(Context &ctx, nnrt_binary_alg alg, const Array &a, const Array &b);
// out = a (op) b, with a and b broadcast to out's shape; out may be a itself.
void binary_into(Context &ctx, nnrt_binary_alg alg, const Array &a, const Array &b, const Array &out);
inline Array add(Context &ctx, const Array &a, const Array &b) { return binary(ctx, NNRT_BINARY_ADD, a, b); }
inline Array mul(Context &ctx, const Array &a, const Array &b) { return binary(ctx, NNRT_BINARY_MUL, a, b); }
// alpha * x + beta
inline Array scale(Context &ctx, const Array &x, double alpha, double beta = 0) {
  return unary(ctx, NNRT_UNARY_LINEAR, x, alpha, beta);
}

// ---- reductions -----------------------------------------------------------------------------
// Reduces the dims set in axes_mask (bit d = dim d); keepdims keeps them as size 1.
Array reduce(Context &ctx, nnrt_reduce_alg alg, const Array &x, uint32_t axes_mask, bool keepdims);
// Index (I64) of the largest/smallest element along one axis.
Array argreduce(Context &ctx, nnrt_argreduce_alg alg, const Array &x, int32_t axis, bool keepdims);
// The mask with every dim set, and a mask from axes (negative counts from the end; no duplicates).
uint32_t all_axes(int32_t rank);
uint32_t axes_mask(const std::vector<int64_t> &axes, int32_t rank, const char *op);

// ---- linear algebra, softmax ----------------------------------------------------------------
// a [..., M, K] x b [..., K, N] (+ bias [N]), batch dims broadcast; transposes are views.
Array matmul(Context &ctx, const Array &a, const Array &b, const Array *bias = nullptr,
             nnrt_unary_alg fused = NNRT_UNARY_NONE, double alpha = 0);
Array softmax(Context &ctx, nnrt_softmax_alg alg, const Array &x, int32_t axis);
Array softmax_backward(Context &ctx, nnrt_softmax_alg alg, const Array &dy, const Array &y, int32_t axis);

// ---- convolution and pooling (NCHW) ---------------------------------------------------------
struct Conv2dParams {
  int32_t stride[2] = {1, 1};
  int32_t pad[4] = {0, 0, 0, 0};  // top, left, bottom, right
  int32_t dilation[2] = {1, 1};
  int32_t groups = 1;
  nnrt_unary_alg fused = NNRT_UNARY_NONE;
  double alpha = 0, beta = 0;  // the fused activation's (clip: min and max)
  // Store the output channels-last: dims stay [N, C, H, W], the memory is N, H, W, C (see
  // empty_image). Every op takes either layout; this is a speed choice.
  bool channels_last = false;
};
// The output [N, O, OH, OW] of a convolution; throws NNRT_ERR_SHAPE when x and w do not fit.
Shape conv2d_output_shape(const Shape &x, const Shape &w, const Conv2dParams &p);
Array conv2d(Context &ctx, const Array &x, const Array &w, const Array *bias, const Conv2dParams &p);
Array conv2d_backward_data(Context &ctx, const Array &dy, const Array &w, const Shape &x_shape,
                           const Conv2dParams &p);
// Returns dw, and db when with_bias (else an undefined Array).
std::pair<Array, Array> conv2d_backward_weights(Context &ctx, const Array &x, const Array &dy, const Shape &w_shape,
                                                bool with_bias, const Conv2dParams &p);

struct Pool2dParams {
  nnrt_pool_alg alg = NNRT_POOL_MAX;
  int32_t kernel[2] = {2, 2};
  int32_t stride[2] = {2, 2};
  int32_t pad[4] = {0, 0, 0, 0};
};
Shape pool2d_output_shape(const Shape &x, const Pool2dParams &p);
Array pool2d(Context &ctx, const Array &x, const Pool2dParams &p);
Array pool2d_backward(Context &ctx, const Array &dy, const Array &x, const Pool2dParams &p);

// ---- normalisation, losses, regularisation, embeddings ---------------------------------------
struct BatchnormStats {
  Array y, mean, var;
};
BatchnormStats batchnorm_training(Context &ctx, const Array &x, const Array &gamma, const Array &beta, double eps);
Array batchnorm_inference(Context &ctx, const Array &x, const Array &gamma, const Array &beta, const Array &mean,
                          const Array &var, double eps);
struct BatchnormGrads {
  Array dx, dgamma, dbeta;
};
BatchnormGrads batchnorm_backward(Context &ctx, const Array &x, const Array &dy, const Array &mean, const Array &var,
                                  const Array &gamma, double eps);

// Layer or RMS normalization of each row of x (its dims 0..axis-1) over the dims axis..rank-1.
// gamma and beta are f32 arrays with those normalized dims, or null (1 and 0). mean and var (f32,
// x's row dims) are returned when `keep_stats` (training: the backward pass takes them), else empty.
struct LayernormParams {
  nnrt_norm_alg alg = NNRT_NORM_LAYER;
  int32_t axis = 0;  // not negative: the first normalized dim
  double eps = 1e-5;
};
struct LayernormStats {
  Array y, mean, var;
};
LayernormStats layernorm(Context &ctx, const Array &x, const Array *gamma, const Array *beta, const LayernormParams &p,
                         bool keep_stats);
// dx, and dgamma and dbeta (f32, the normalized dims) when `parameter_grads`.
struct LayernormGrads {
  Array dx, dgamma, dbeta;
};
LayernormGrads layernorm_backward(Context &ctx, const Array &x, const Array &dy, const Array &mean, const Array &var,
                                  const Array *gamma, const LayernormParams &p, bool parameter_grads);

// Scaled dot-product attention as one op (NNRT_OP_ATTENTION): q [N, H, Tq, D], k [N, H, Tk, D] and
// v [N, H, Tk, Dv] of one float dtype, any strides (head views of [N, T, H * D] products need no
// copy); mask null, or an additive mask of q's dtype broadcast to [N, H, Tq, Tk] (numpy rules: a
// [Tq, Tk] mask serves every example and head, a [N, 1, 1, Tk] one masks keys per example).
// `causal` hides from each query the keys after its position (the queries are the last Tq of Tk
// positions). Runs as one op where the device takes it (no [Tq, Tk] array), else composed of
// matmul and softmax on the device (attention_ops.cpp says why). o is [N, H, Tq, Dv]; from the one
// op, a view of a contiguous [N, Tq, H, Dv] array, so that joining the heads again is a reshape.
struct AttentionParams {
  bool causal = false;
  double scale = 1.0;  // on q.k, 1 / sqrt(D) for the usual attention
};
Array attention(Context &ctx, const Array &q, const Array &k, const Array &v, const Array *mask,
                const AttentionParams &p);
// The gradients of q, k and v from dout (o's shape), computing the probabilities again; from the
// one op, each is a [N, H, T, D] view of a contiguous [N, T, H, D] array, as o is.
struct AttentionGrads {
  Array dq, dk, dv;
};
AttentionGrads attention_backward(Context &ctx, const Array &q, const Array &k, const Array &v, const Array &dout,
                                  const Array *mask, const AttentionParams &p);

// A rank-0 loss in pred's dtype; the gradient is scaled by `scale`.
Array loss(Context &ctx, nnrt_loss_alg alg, const Array &pred, const Array &target);
Array loss_backward(Context &ctx, nnrt_loss_alg alg, const Array &pred, const Array &target, double scale);

// Returns y and the U8 keep-mask.
std::pair<Array, Array> dropout(Context &ctx, const Array &x, double p, uint64_t seed, uint64_t counter);
Array dropout_backward(Context &ctx, const Array &dy, const Array &mask, double p);

Array gather(Context &ctx, const Array &table, const Array &indices);
Array scatter_add(Context &ctx, const Array &dy, const Array &indices, int64_t rows);

// ---- int8 inference (the layers of nnrt_model_quantize) -------------------------------------
// How a float tensor is held in 8 bits: real = scale * (q - zero_point), q in dtype's range.
struct Quantization {
  nnrt_dtype dtype = NNRT_DTYPE_U8;  // U8 or I8
  double scale = 1;
  int32_t zero_point = 0;
};
// x (F32) rounded to q's 8 bits (NNRT_OP_QUANTIZE), in x's layout: a channels-last image stays so.
Array quantize(Context &ctx, const Array &x, const Quantization &q);
// a [M, K] quantized as aq, times b (I8 [K, N], any strides: a transposed weight is a view), scaled
// back to F32 [M, N] by aq.scale * scales[n], plus bias [N] and the fused activation
// (NNRT_OP_MATMUL_INT8). weights_7bit: every b is within [-63, 63].
Array matmul_int8(Context &ctx, const Array &a, const Quantization &aq, const Array &b, const Array &scales,
                  const Array *bias, bool weights_7bit, nnrt_unary_alg fused = NNRT_UNARY_NONE, double alpha = 0);
// The convolution of x (quantized as xq) with w (I8), scaled back to F32 as matmul_int8 does, with
// p's window, fused activation and output layout (NNRT_OP_CONV2D_INT8).
Array conv2d_int8(Context &ctx, const Array &x, const Quantization &xq, const Array &w, const Array &scales,
                  const Array *bias, bool weights_7bit, const Conv2dParams &p);

// ---- optimizers -----------------------------------------------------------------------------
struct OptimizerRule {
  nnrt_optimizer_alg alg = NNRT_OPTIMIZER_SGD;
  double momentum = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0, l1 = 0, l2 = 0, clip_value = 0;
  bool nesterov = false;
  int32_t states() const;  // how many state arrays the rule keeps (0, 1 or 2)
};
// One fused step on param (and its states) in place.
void optimizer_update(Context &ctx, const OptimizerRule &rule, const Array &grad, const Array &param,
                      const Array *state0, const Array *state1, double lr, int64_t step, double grad_scale);

// ---- host helpers ---------------------------------------------------------------------------
// A rank-0 (or one-element) array's value as a double.
double item(const Array &x);
// The whole array as doubles (float and integer dtypes), row-major.
std::vector<double> to_doubles(const Array &x);

}  // namespace nnrt::ops
