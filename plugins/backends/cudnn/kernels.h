// The backend's own CUDA kernels (kernels.cu), behind plain C++ launch functions so that the host
// files never need nvcc. Every kernel computes with the shared header-only math of
// include/nnrt/kernels (the code the CPU backends run and the CPU tests check), one element per
// thread; operands are strided (stride 0 broadcasts) through kernels/strided_index.h.
//
// Float dtypes (F32, F64, F16, BF16) compute in f32, or f64 for F64, as the reference backend does.
// Each launcher queues work on `stream` and returns the launch's error (cudaSuccess if queued).
#pragma once

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "nnrt/kernels/conv2d.h"
#include "nnrt/kernels/optimizer.h"
#include "nnrt/kernels/pool.h"
#include "nnrt/kernels/strided_index.h"

namespace nnrt::cudnn::gpu {

using Index1 = kernels::StridedIndex<1>;
using Index2 = kernels::StridedIndex<2>;
using Index3 = kernels::StridedIndex<3>;

// Every element of y (elements of `element_bytes` = 1, 2, 4 or 8) set to the low bytes of `bits`.
cudaError_t fill(void *y, int element_bytes, uint64_t bits, const Index1 &index, int64_t n, cudaStream_t stream);

// y = x converted between float dtypes with one correct rounding; or a same-dtype copy of any dtype
// (x_dtype == y_dtype). Index operand 0 is y, 1 is x.
cudaError_t copy(void *y, int32_t y_dtype, const void *x, int32_t x_dtype, const Index2 &index, int64_t n,
                 cudaStream_t stream);

// Element i of y = element counter + i of the Philox stream of `seed`, uniform in [p0, p1) or
// normal (mean p0, std p1).
cudaError_t random(void *y, int32_t dtype, int32_t alg, uint64_t seed, uint64_t counter, float p0, float p1,
                   const Index1 &index, int64_t n, cudaStream_t stream);

// y = f(x); operands y, x.
cudaError_t unary(int32_t alg, int32_t dtype, void *y, const void *x, double alpha, double beta, const Index2 &index,
                  int64_t n, cudaStream_t stream);
// dx from dy and s (x, or y when from_dst); operands dx, dy, s.
cudaError_t unary_backward(int32_t alg, bool from_dst, int32_t dtype, void *dx, const void *dy, const void *s,
                           double alpha, double beta, const Index3 &index, int64_t n, cudaStream_t stream);
// c = a op b; operands c, a, b.
cudaError_t binary(int32_t alg, int32_t dtype, void *c, const void *a, const void *b, const Index3 &index, int64_t n,
                   cudaStream_t stream);

// Operands y, mask, x; p the drop probability.
cudaError_t dropout(int32_t dtype, void *y, uint8_t *mask, const void *x, double p, uint64_t seed, uint64_t counter,
                    const Index3 &index, int64_t n, cudaStream_t stream);
// Operands dx, dy, mask.
cudaError_t dropout_backward(int32_t dtype, void *dx, const void *dy, const uint8_t *mask, double p,
                             const Index3 &index, int64_t n, cudaStream_t stream);

// Lines: for reductions and softmax, one GPU block per line. `outer` walks the lines (every dim
// that is kept) and `inner` the elements of one line (the reduced dims, or the softmax axis), each
// with the strides of the K operands (0 for an operand that does not move along a dim).
template <int K>
struct Lines {
  kernels::StridedIndex<K> outer;
  kernels::StridedIndex<K> inner;
  int64_t count = 0;   // lines
  int64_t length = 0;  // elements per line
};

// y = SUM, MEAN, MAX, MIN or SUM_SQUARES over each line of x; operands y, x.
cudaError_t reduce(int32_t alg, int32_t dtype, void *y, const void *x, const Lines<2> &lines, cudaStream_t stream);
// Softmax or log-softmax along each line; operands y, x.
cudaError_t softmax(bool log, int32_t dtype, void *y, const void *x, const Lines<2> &lines, cudaStream_t stream);
// Their gradients from the forward output; operands dx, dy, y.
cudaError_t softmax_backward(bool log, int32_t dtype, void *dx, const void *dy, const void *y, const Lines<3> &lines,
                             cudaStream_t stream);

// Batch normalization (kernels/batchnorm.h), one block per channel: the lines are the channels and
// a line is every element of one channel; operands y, x (forward) and dx, x, dy (backward). The
// F32 [C] vectors are each read or written at channel * their stride. Training computes the batch
// mean and biased variance (written to mean_out, var_out); inference reads mean_in, var_in.
struct BatchnormForward {
  bool training;
  double eps;
  const float *gamma, *beta, *mean_in, *var_in;
  float *mean_out, *var_out;
  int64_t gamma_stride, beta_stride, mean_stride, var_stride;
};
cudaError_t batchnorm(int32_t dtype, const BatchnormForward &p, void *y, const void *x, const Lines<2> &lines,
                      cudaStream_t stream);
struct BatchnormBackward {
  double eps;
  const float *mean, *var, *gamma;
  float *dgamma, *dbeta;
  int64_t mean_stride, var_stride, gamma_stride, dgamma_stride, dbeta_stride;
};
cudaError_t batchnorm_backward(int32_t dtype, const BatchnormBackward &p, void *dx, const void *x, const void *dy,
                               const Lines<3> &lines, cudaStream_t stream);

// Elementwise losses (MSE, L1, BCE, BCE_WITH_LOGITS): loss = mean of the terms over every element
// (one line: operands pred, target); backward dpred = grad * scale / count (operands dpred, pred,
// target).
cudaError_t elementwise_loss(int32_t alg, int32_t dtype, void *loss, const void *pred, const void *target,
                             const Lines<2> &all, cudaStream_t stream);
cudaError_t elementwise_loss_backward(int32_t alg, int32_t dtype, void *dpred, const void *pred, const void *target,
                                      double scale, const Index3 &index, int64_t n, cudaStream_t stream);

// Class losses (SOFTMAX_CROSS_ENTROPY, NLL) over pred [rows, classes] with strides (pred_row,
// pred_col); target either class indices (target_dtype I32 or I64, stride target_row) or a
// distribution of pred's dtype (strides target_row, target_col). `row_terms` is device scratch of
// rows doubles and `bad_index` a device int set to 1 when an index lies outside [0, classes).
struct ClassLoss {
  int32_t alg, dtype, target_dtype;
  int64_t rows, classes;
  int64_t pred_row, pred_col, target_row, target_col, dpred_row, dpred_col;
};
cudaError_t class_loss(const ClassLoss &c, void *loss, const void *pred, const void *target, double *row_terms,
                       int *bad_index, cudaStream_t stream);
cudaError_t class_loss_backward(const ClassLoss &c, void *dpred, const void *pred, const void *target, double scale,
                                int *bad_index, cudaStream_t stream);

// 2-d pooling (kernels/pool.h rules): one thread per output element; the gradient gathers, per
// input element, the windows that cover it in row-major order (the CPU's summation order, and no
// atomics). Strides are NCHW element strides of each tensor.
struct PoolStrides {
  int64_t x[4], y[4];  // forward: x, y; backward: x and dy (dx uses dx)
  int64_t dx[4];
};
cudaError_t pool2d(int32_t dtype, const kernels::PoolGeometry &g, const PoolStrides &s, void *y, const void *x,
                   cudaStream_t stream);
cudaError_t pool2d_backward(int32_t dtype, const kernels::PoolGeometry &g, const PoolStrides &s, void *dx,
                            const void *dy, const void *x, cudaStream_t stream);

// Sets *flag (a device int the caller zeroed) to 1 when an element of x is NaN or infinite.
cudaError_t flag_nonfinite(int32_t dtype, const void *x, const Index1 &index, int64_t n, int *flag,
                           cudaStream_t stream);

// CONV2D_BACKWARD_DATA element by element (kernels/conv2d.h), one thread per dx element, when *flag
// is set; when it is not, the kernel returns at once. The backend runs it after cuDNN with the flag
// of flag_nonfinite over w: it rewrites dx exactly where cuDNN's zero-inserting engines would have
// spread a non-finite weight (conv_op.cpp). Strides are NCHW element strides of each tensor.
struct ConvStrides {
  int64_t dx[4], dy[4], w[4];
};
cudaError_t conv2d_backward_data_exact(int32_t dtype, const kernels::Conv2dGeometry &g, const ConvStrides &s,
                                       const int *flag, void *dx, const void *dy, const void *w, cudaStream_t stream);

// ARGREDUCE: one thread per line (y's elements); `outer` walks y's dims with operands y and x, and
// each line is `length` elements of x `stride` apart. Any numeric dtype; y is I64.
struct ArgLines {
  Index2 outer;
  int64_t count = 0, length = 0, stride = 0;
};
cudaError_t argreduce(int32_t alg, int32_t dtype, int64_t *y, const void *x, const ArgLines &lines,
                      cudaStream_t stream);

// GATHER and SCATTER_ADD: `walk` walks the index tensor in row-major order, operand 0 the indices
// (I32 or I64) and operand 1 the first element of the matching row of the [..., D] tensor (GATHER's
// y, SCATTER_ADD's dy), whose last dim has stride rows_col; the table (GATHER's table,
// SCATTER_ADD's dtable) is [rows, width] with strides (table_row, table_col).
struct IndexRows {
  Index2 walk;
  int64_t positions = 0;
  int32_t index_dtype = 0;
  int64_t rows = 0, width = 0, table_row = 0, table_col = 0, rows_col = 0;
};
// Lowers *first_bad (device; the caller presets it to all ones) to the first position whose index
// lies outside [0, rows).
cudaError_t check_indices(const IndexRows &r, const void *indices, unsigned long long *first_bad,
                          cudaStream_t stream);
// y rows = table rows, for elements of element_bytes (1, 2, 4 or 8); indices must be checked first.
cudaError_t gather(int element_bytes, const IndexRows &r, void *y, const void *table, const void *indices,
                   cudaStream_t stream);
// dtable (float dtypes, overwritten) = the sums of the dy rows per index. One thread per dtable
// element scans every index in order: no atomics, so the sums are in the CPU's order, bit-identical
// to the reference backend and deterministic; f16 and bf16 accumulate in f32.
cudaError_t scatter_add(int32_t dtype, const IndexRows &r, void *dtable, const void *dy, const void *indices,
                        cudaStream_t stream);
// The same sums with atomics (F32 and F64 only; scatter_path.h says when): dtable is zeroed, then
// one thread per dy element adds it to its row. The order of the additions varies between runs.
cudaError_t scatter_add_atomic(int32_t dtype, const IndexRows &r, void *dtable, const void *dy, const void *indices,
                               cudaStream_t stream);

// One fused optimizer step over n contiguous F32 elements; s0 and s1 may be NULL when the rule
// keeps no such state.
cudaError_t optimizer_update(int32_t alg, const float *grad, float *param, float *s0, float *s1,
                             const kernels::OptimizerStep &step, int64_t n, cudaStream_t stream);

}  // namespace nnrt::cudnn::gpu
