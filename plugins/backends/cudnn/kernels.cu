// The CUDA kernels of the cuDNN backend (see kernels.h). One translation unit: nvcc is slow, and
// every kernel here is a thin loop around the shared header math.
#include "kernels.h"

#include <cuda_runtime.h>

#include "nnrt/kernels/batchnorm.h"
#include "nnrt/kernels/conv2d.h"
#include "nnrt/kernels/convert.h"
#include "nnrt/kernels/eltwise.h"
#include "nnrt/kernels/half.h"
#include "nnrt/kernels/index_ops.h"
#include "nnrt/kernels/loss.h"
#include "nnrt/kernels/philox.h"

namespace nnrt::cudnn::gpu {
namespace {

using namespace nnrt::kernels;

constexpr int kThreads = 256;

// Enough blocks to fill any current GPU; the grid-stride loops cover the rest.
unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? (b < 1 ? 1 : b) : 65535);
}

#define NNRT_GRID_LOOP(i, n)                                                                  \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);     \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// Storage and compute types of the float dtypes: F16 and BF16 are stored as their bits and
// computed in f32, as on the CPU.
template <int D> struct Float;
template <> struct Float<NNRT_DTYPE_F32> {
  using S = float;
  using C = float;
  static __device__ C load(S v) { return v; }
  static __device__ S store(C v) { return v; }
  static __device__ double to_double(S v) { return v; }
  static __device__ S from_double(double d) { return static_cast<float>(d); }
};
template <> struct Float<NNRT_DTYPE_F64> {
  using S = double;
  using C = double;
  static __device__ C load(S v) { return v; }
  static __device__ S store(C v) { return v; }
  static __device__ double to_double(S v) { return v; }
  static __device__ S from_double(double d) { return d; }
};
template <> struct Float<NNRT_DTYPE_F16> {
  using S = uint16_t;
  using C = float;
  static __device__ C load(S v) { return f16_to_f32(v); }
  static __device__ S store(C v) { return f32_to_f16(v); }
  static __device__ double to_double(S v) { return f16_to_f32(v); }
  static __device__ S from_double(double d) { return f64_to_f16(d); }
};
template <> struct Float<NNRT_DTYPE_BF16> {
  using S = uint16_t;
  using C = float;
  static __device__ C load(S v) { return bf16_to_f32(v); }
  static __device__ S store(C v) { return f32_to_bf16(v); }
  static __device__ double to_double(S v) { return bf16_to_f32(v); }
  static __device__ S from_double(double d) { return f64_to_bf16(d); }
};

// Calls fn(Float<D>{}) for a float dtype; returns cudaErrorInvalidValue for any other.
template <class Fn>
cudaError_t visit_float(int32_t dtype, Fn &&fn) {
  switch (dtype) {
    case NNRT_DTYPE_F32: return fn(Float<NNRT_DTYPE_F32>{});
    case NNRT_DTYPE_F64: return fn(Float<NNRT_DTYPE_F64>{});
    case NNRT_DTYPE_F16: return fn(Float<NNRT_DTYPE_F16>{});
    case NNRT_DTYPE_BF16: return fn(Float<NNRT_DTYPE_BF16>{});
    default: return cudaErrorInvalidValue;
  }
}

// ---- fill and copy ------------------------------------------------------------------------------

template <class E>
__global__ void fill_kernel(E *y, E value, Index1 index, int64_t n) {
  NNRT_GRID_LOOP(i, n) {
    int64_t o[1];
    strided_offsets(index, i, o);
    y[o[0]] = value;
  }
}

template <class E>
__global__ void copy_same_kernel(E *y, const E *x, Index2 index, int64_t n) {
  NNRT_GRID_LOOP(i, n) {
    int64_t o[2];
    strided_offsets(index, i, o);
    y[o[0]] = x[o[1]];
  }
}

// Through f64: exact for every float source, and one correct rounding into every float target.
template <class Y, class X>
__global__ void copy_convert_kernel(typename Y::S *y, const typename X::S *x, Index2 index, int64_t n) {
  NNRT_GRID_LOOP(i, n) {
    int64_t o[2];
    strided_offsets(index, i, o);
    y[o[0]] = Y::from_double(X::to_double(x[o[1]]));
  }
}

// ---- random and dropout -------------------------------------------------------------------------

template <class F>
__global__ void random_kernel(typename F::S *y, int32_t alg, uint64_t seed, uint64_t counter, float p0, float p1,
                              Index1 index, int64_t n) {
  NNRT_GRID_LOOP(i, n) {
    int64_t o[1];
    strided_offsets(index, i, o);
    uint64_t e = counter + static_cast<uint64_t>(i);
    float v = alg == NNRT_RANDOM_UNIFORM ? random_uniform(seed, e, p0, p1) : random_normal(seed, e, p0, p1);
    y[o[0]] = F::store(static_cast<typename F::C>(v));
  }
}

template <class F>
__global__ void dropout_kernel(typename F::S *y, uint8_t *mask, const typename F::S *x, float p,
                               typename F::C scale, uint64_t seed, uint64_t counter, Index3 index, int64_t n) {
  using C = typename F::C;
  NNRT_GRID_LOOP(i, n) {
    int64_t o[3];
    strided_offsets(index, i, o);
    uint8_t keep = uniform01(philox_word(seed, counter + static_cast<uint64_t>(i))) >= p ? 1 : 0;
    mask[o[1]] = keep;
    y[o[0]] = F::store(F::load(x[o[2]]) * static_cast<C>(keep) * scale);
  }
}

template <class F>
__global__ void dropout_backward_kernel(typename F::S *dx, const typename F::S *dy, const uint8_t *mask,
                                        typename F::C scale, Index3 index, int64_t n) {
  using C = typename F::C;
  NNRT_GRID_LOOP(i, n) {
    int64_t o[3];
    strided_offsets(index, i, o);
    dx[o[0]] = F::store(F::load(dy[o[1]]) * static_cast<C>(mask[o[2]] != 0 ? 1 : 0) * scale);
  }
}

// ---- activations and binary ops -----------------------------------------------------------------

template <class T>
__device__ T backward_from_y(int32_t alg, T dy, T y, T alpha, T beta) {
  switch (alg) {
    case NNRT_UNARY_RELU: return unary_backward_from_dst<NNRT_UNARY_RELU>(dy, y, alpha, beta);
    case NNRT_UNARY_LEAKY_RELU: return unary_backward_from_dst<NNRT_UNARY_LEAKY_RELU>(dy, y, alpha, beta);
    case NNRT_UNARY_ELU: return unary_backward_from_dst<NNRT_UNARY_ELU>(dy, y, alpha, beta);
    case NNRT_UNARY_SIGMOID: return unary_backward_from_dst<NNRT_UNARY_SIGMOID>(dy, y, alpha, beta);
    case NNRT_UNARY_TANH: return unary_backward_from_dst<NNRT_UNARY_TANH>(dy, y, alpha, beta);
    default: return unary_backward_from_dst<NNRT_UNARY_LINEAR>(dy, y, alpha, beta);
  }
}

template <class T>
__device__ T binary_op(int32_t alg, T a, T b) {
  switch (alg) {
    case NNRT_BINARY_ADD: return a + b;
    case NNRT_BINARY_SUB: return a - b;
    case NNRT_BINARY_MUL: return a * b;
    case NNRT_BINARY_DIV: return a / b;
    case NNRT_BINARY_MAX: return k_max_nan(a, b);
    default: return k_min_nan(a, b);
  }
}

template <class F>
__global__ void unary_kernel(int32_t alg, typename F::S *y, const typename F::S *x, typename F::C alpha,
                             typename F::C beta, Index2 index, int64_t n) {
  NNRT_GRID_LOOP(i, n) {
    int64_t o[2];
    strided_offsets(index, i, o);
    y[o[0]] = F::store(unary_forward(alg, F::load(x[o[1]]), alpha, beta));
  }
}

template <class F>
__global__ void unary_backward_kernel(int32_t alg, bool from_dst, typename F::S *dx, const typename F::S *dy,
                                      const typename F::S *s, typename F::C alpha, typename F::C beta, Index3 index,
                                      int64_t n) {
  NNRT_GRID_LOOP(i, n) {
    int64_t o[3];
    strided_offsets(index, i, o);
    auto g = F::load(dy[o[1]]), v = F::load(s[o[2]]);
    dx[o[0]] = F::store(from_dst ? backward_from_y(alg, g, v, alpha, beta)
                                 : nnrt::kernels::unary_backward(alg, g, v, alpha, beta));
  }
}

template <class F>
__global__ void binary_kernel(int32_t alg, typename F::S *c, const typename F::S *a, const typename F::S *b,
                              Index3 index, int64_t n) {
  NNRT_GRID_LOOP(i, n) {
    int64_t o[3];
    strided_offsets(index, i, o);
    c[o[0]] = F::store(binary_op(alg, F::load(a[o[1]]), F::load(b[o[2]])));
  }
}

// ---- optimizer ----------------------------------------------------------------------------------

template <int Alg>
__global__ void optimizer_kernel(const float *grad, float *param, float *s0, float *s1, OptimizerStep step,
                                 int64_t n) {
  NNRT_GRID_LOOP(i, n) {
    float p = param[i], a = s0 ? s0[i] : 0.0f, b = s1 ? s1[i] : 0.0f;
    nnrt::kernels::optimizer_update<Alg>(grad[i], p, a, b, step);
    param[i] = p;
    if (s0) s0[i] = a;
    if (s1) s1[i] = b;
  }
}

// ---- lines: reductions and softmax, one block per line ----------------------------------------

constexpr int kLineThreads = 256;  // a power of two, for the tree reduction

// Combines every thread's value with `op` (associative); every thread gets the result.
template <class C, class Op>
__device__ C block_reduce(C v, Op op, C *shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  C r = shared[0];
  __syncthreads();  // before shared is written again
  return r;
}

template <class C>
struct Add {
  __device__ C operator()(C a, C b) const { return a + b; }
};
template <class C>
struct MaxNan {
  __device__ C operator()(C a, C b) const { return k_max_nan(a, b); }
};
template <class C>
struct MinNan {
  __device__ C operator()(C a, C b) const { return k_min_nan(a, b); }
};

// Offsets of the first element of line `line` in each of the K operands.
template <int K>
__device__ void line_start(const Lines<K> &l, int64_t line, int64_t *o) {
  strided_offsets(l.outer, line, o);
}

template <class F>
__global__ void reduce_kernel(int32_t alg, typename F::S *y, const typename F::S *x, Lines<2> lines) {
  using C = typename F::C;
  extern __shared__ unsigned char shared_bytes[];
  C *shared = reinterpret_cast<C *>(shared_bytes);
  for (int64_t line = blockIdx.x; line < lines.count; line += gridDim.x) {
    int64_t start[2];
    line_start(lines, line, start);
    const C inf = C(1) / C(0);
    C acc = alg == NNRT_REDUCE_MAX ? -inf : (alg == NNRT_REDUCE_MIN ? inf : C(0));
    for (int64_t i = threadIdx.x; i < lines.length; i += blockDim.x) {
      int64_t o[2];
      strided_offsets(lines.inner, i, o);
      C v = F::load(x[start[1] + o[1]]);
      if (alg == NNRT_REDUCE_MAX) acc = k_max_nan(acc, v);
      else if (alg == NNRT_REDUCE_MIN) acc = k_min_nan(acc, v);
      else if (alg == NNRT_REDUCE_SUM_SQUARES) acc += v * v;
      else acc += v;
    }
    C r = alg == NNRT_REDUCE_MAX   ? block_reduce(acc, MaxNan<C>{}, shared)
          : alg == NNRT_REDUCE_MIN ? block_reduce(acc, MinNan<C>{}, shared)
                                   : block_reduce(acc, Add<C>{}, shared);
    if (alg == NNRT_REDUCE_MEAN) r = r / static_cast<C>(lines.length);  // 0 / 0: NaN for an empty mean
    if (threadIdx.x == 0) y[start[0]] = F::store(r);
  }
}

template <class F>
__global__ void softmax_kernel(bool log, typename F::S *y, const typename F::S *x, Lines<2> lines) {
  using C = typename F::C;
  extern __shared__ unsigned char shared_bytes[];
  C *shared = reinterpret_cast<C *>(shared_bytes);
  for (int64_t line = blockIdx.x; line < lines.count; line += gridDim.x) {
    int64_t start[2];
    line_start(lines, line, start);
    C m = -(C(1) / C(0));
    for (int64_t i = threadIdx.x; i < lines.length; i += blockDim.x) {
      int64_t o[2];
      strided_offsets(lines.inner, i, o);
      m = k_max_nan(m, F::load(x[start[1] + o[1]]));
    }
    m = block_reduce(m, MaxNan<C>{}, shared);
    C sum = C(0);
    for (int64_t i = threadIdx.x; i < lines.length; i += blockDim.x) {
      int64_t o[2];
      strided_offsets(lines.inner, i, o);
      sum += k_exp(F::load(x[start[1] + o[1]]) - m);
    }
    sum = block_reduce(sum, Add<C>{}, shared);
    const C log_sum = k_log(sum);
    for (int64_t i = threadIdx.x; i < lines.length; i += blockDim.x) {
      int64_t o[2];
      strided_offsets(lines.inner, i, o);
      C v = F::load(x[start[1] + o[1]]) - m;
      y[start[0] + o[0]] = F::store(log ? v - log_sum : k_exp(v) / sum);
    }
  }
}

template <class F>
__global__ void softmax_backward_kernel(bool log, typename F::S *dx, const typename F::S *dy,
                                        const typename F::S *y, Lines<3> lines) {
  using C = typename F::C;
  extern __shared__ unsigned char shared_bytes[];
  C *shared = reinterpret_cast<C *>(shared_bytes);
  for (int64_t line = blockIdx.x; line < lines.count; line += gridDim.x) {
    int64_t start[3];
    line_start(lines, line, start);
    // softmax: sum(dy * y); log_softmax: sum(dy).
    C s = C(0);
    for (int64_t i = threadIdx.x; i < lines.length; i += blockDim.x) {
      int64_t o[3];
      strided_offsets(lines.inner, i, o);
      C g = F::load(dy[start[1] + o[1]]);
      s += log ? g : g * F::load(y[start[2] + o[2]]);
    }
    s = block_reduce(s, Add<C>{}, shared);
    for (int64_t i = threadIdx.x; i < lines.length; i += blockDim.x) {
      int64_t o[3];
      strided_offsets(lines.inner, i, o);
      C g = F::load(dy[start[1] + o[1]]), yv = F::load(y[start[2] + o[2]]);
      dx[start[0] + o[0]] = F::store(log ? g - k_exp(yv) * s : yv * (g - s));
    }
  }
}

// ---- losses -------------------------------------------------------------------------------------

template <class C>
__device__ C loss_term(int32_t alg, C p, C t) {
  switch (alg) {
    case NNRT_LOSS_MSE: return mse_term(p, t);
    case NNRT_LOSS_L1: return l1_term(p, t);
    case NNRT_LOSS_BCE: return bce_term(p, t);
    default: return bce_with_logits_term(p, t);
  }
}

template <class C>
__device__ C loss_grad(int32_t alg, C p, C t) {
  switch (alg) {
    case NNRT_LOSS_MSE: return mse_grad(p, t);
    case NNRT_LOSS_L1: return l1_grad(p, t);
    case NNRT_LOSS_BCE: return bce_grad(p, t);
    default: return bce_with_logits_grad(p, t);
  }
}

// One block: the mean of every term.
template <class F>
__global__ void elementwise_loss_kernel(int32_t alg, typename F::S *loss, const typename F::S *pred,
                                        const typename F::S *target, Lines<2> all) {
  using C = typename F::C;
  extern __shared__ unsigned char shared_bytes[];
  C *shared = reinterpret_cast<C *>(shared_bytes);
  C acc = C(0);
  for (int64_t i = threadIdx.x; i < all.length; i += blockDim.x) {
    int64_t o[2];
    strided_offsets(all.inner, i, o);
    acc += loss_term(alg, F::load(pred[o[0]]), F::load(target[o[1]]));
  }
  acc = block_reduce(acc, Add<C>{}, shared);
  if (threadIdx.x == 0) loss[0] = F::store(acc / static_cast<C>(all.length));  // no elements: NaN
}

template <class F>
__global__ void elementwise_loss_backward_kernel(int32_t alg, typename F::S *dpred, const typename F::S *pred,
                                                 const typename F::S *target, typename F::C factor, Index3 index,
                                                 int64_t n) {
  NNRT_GRID_LOOP(i, n) {
    int64_t o[3];
    strided_offsets(index, i, o);
    dpred[o[0]] = F::store(loss_grad(alg, F::load(pred[o[1]]), F::load(target[o[2]])) * factor);
  }
}

// The class of row i, or -1 (and *bad_index set) when it lies outside [0, classes).
__device__ int64_t class_of(const ClassLoss &c, const void *target, int64_t i, int *bad_index) {
  int64_t k = c.target_dtype == NNRT_DTYPE_I64 ? static_cast<const int64_t *>(target)[i * c.target_row]
                                               : static_cast<const int32_t *>(target)[i * c.target_row];
  if (k < 0 || k >= c.classes) {
    *bad_index = 1;
    return -1;
  }
  return k;
}

// log(sum(exp(row - m))) + m of one pred row, by the whole block.
template <class F>
__device__ typename F::C row_log_sum_exp(const ClassLoss &c, const typename F::S *row, typename F::C *shared) {
  using C = typename F::C;
  C m = -(C(1) / C(0));
  for (int64_t k = threadIdx.x; k < c.classes; k += blockDim.x) m = k_max_nan(m, F::load(row[k * c.pred_col]));
  m = block_reduce(m, MaxNan<C>{}, shared);
  C sum = C(0);
  for (int64_t k = threadIdx.x; k < c.classes; k += blockDim.x) sum += k_exp(F::load(row[k * c.pred_col]) - m);
  sum = block_reduce(sum, Add<C>{}, shared);
  return k_log(sum) + m;
}

// One block per row: the row's term.
template <class F>
__global__ void class_loss_rows_kernel(ClassLoss c, const typename F::S *pred, const void *target, double *terms,
                                       int *bad_index) {
  using C = typename F::C;
  using S = typename F::S;
  extern __shared__ unsigned char shared_bytes[];
  C *shared = reinterpret_cast<C *>(shared_bytes);
  const bool softmax = c.alg == NNRT_LOSS_SOFTMAX_CROSS_ENTROPY;
  const bool index_target = c.target_dtype == NNRT_DTYPE_I32 || c.target_dtype == NNRT_DTYPE_I64;
  for (int64_t i = blockIdx.x; i < c.rows; i += gridDim.x) {
    const S *row = pred + i * c.pred_row;
    const C lse = softmax ? row_log_sum_exp<F>(c, row, shared) : C(0);
    C term;
    if (index_target) {
      int64_t k = class_of(c, target, i, bad_index);
      term = k < 0 ? C(0) / C(0) : lse - F::load(row[k * c.pred_col]);
    } else {
      const S *t = static_cast<const S *>(target) + i * c.target_row;
      C acc = C(0);
      for (int64_t k = threadIdx.x; k < c.classes; k += blockDim.x)
        acc += F::load(t[k * c.target_col]) * (F::load(row[k * c.pred_col]) - lse);
      term = -block_reduce(acc, Add<C>{}, shared);
    }
    if (threadIdx.x == 0) terms[i] = static_cast<double>(term);
  }
}

// One block: the mean of the row terms.
template <class F>
__global__ void class_loss_mean_kernel(int64_t rows, const double *terms, typename F::S *loss) {
  using C = typename F::C;
  extern __shared__ unsigned char shared_bytes[];
  C *shared = reinterpret_cast<C *>(shared_bytes);
  C acc = C(0);
  for (int64_t i = threadIdx.x; i < rows; i += blockDim.x) acc += static_cast<C>(terms[i]);
  acc = block_reduce(acc, Add<C>{}, shared);
  if (threadIdx.x == 0) loss[0] = F::store(acc / static_cast<C>(rows));
}

// One block per row: cross entropy softmax(pred) * sum(t) - t, NLL -t, each times scale / rows.
template <class F>
__global__ void class_loss_backward_kernel(ClassLoss c, typename F::S *dpred, const typename F::S *pred,
                                           const void *target, typename F::C factor, int *bad_index) {
  using C = typename F::C;
  using S = typename F::S;
  extern __shared__ unsigned char shared_bytes[];
  C *shared = reinterpret_cast<C *>(shared_bytes);
  const bool softmax = c.alg == NNRT_LOSS_SOFTMAX_CROSS_ENTROPY;
  const bool index_target = c.target_dtype == NNRT_DTYPE_I32 || c.target_dtype == NNRT_DTYPE_I64;
  for (int64_t i = blockIdx.x; i < c.rows; i += gridDim.x) {
    const S *row = pred + i * c.pred_row;
    S *out = dpred + i * c.dpred_row;
    const C lse = softmax ? row_log_sum_exp<F>(c, row, shared) : C(0);
    const int64_t label = index_target ? class_of(c, target, i, bad_index) : -1;
    const S *t = index_target ? nullptr : static_cast<const S *>(target) + i * c.target_row;
    C target_sum = C(1);
    if (!index_target && softmax) {
      C acc = C(0);
      for (int64_t k = threadIdx.x; k < c.classes; k += blockDim.x) acc += F::load(t[k * c.target_col]);
      target_sum = block_reduce(acc, Add<C>{}, shared);
    }
    for (int64_t k = threadIdx.x; k < c.classes; k += blockDim.x) {
      const C tk = index_target ? C(k == label ? 1 : 0) : F::load(t[k * c.target_col]);
      const C g = softmax ? k_exp(F::load(row[k * c.pred_col]) - lse) * target_sum - tk : -tk;
      out[k * c.dpred_col] = F::store(g * factor);
    }
  }
}

// ---- pooling ------------------------------------------------------------------------------------

template <class F>
__global__ void pool2d_kernel(PoolGeometry g, PoolStrides s, typename F::S *y, const typename F::S *x, int64_t n) {
  using C = typename F::C;
  NNRT_GRID_LOOP(e, n) {
    const int64_t j = e % g.ow, i = e / g.ow % g.oh, c = e / (g.ow * g.oh) % g.c, b = e / (g.ow * g.oh * g.c);
    const typename F::S *plane = x + b * s.x[0] + c * s.x[1];
    const PoolWindow win(g, i, j);
    C result;
    if (g.alg == NNRT_POOL_MAX) {
      result = -(C(1) / C(0));
      for (int64_t r = win.r0; r < win.r1; ++r)
        for (int64_t q = win.c0; q < win.c1; ++q) {
          const C v = F::load(plane[r * s.x[2] + q * s.x[3]]);
          if (pool_replaces_max(v, result)) result = v;
        }
    } else {
      C sum = C(0);
      for (int64_t r = win.r0; r < win.r1; ++r)
        for (int64_t q = win.c0; q < win.c1; ++q) sum += F::load(plane[r * s.x[2] + q * s.x[3]]);
      result = win.count() == 0 ? C(0) : sum / pool_average_divisor<C>(g, win);
    }
    y[b * s.y[0] + c * s.y[1] + i * s.y[2] + j * s.y[3]] = F::store(result);
  }
}

// The first output index whose window (start index*stride - pad, length k) can cover position p.
__device__ int64_t first_window(int64_t p, int64_t pad, int64_t k, int64_t stride) {
  int64_t lo = p + pad - k + 1;
  return lo <= 0 ? 0 : (lo + stride - 1) / stride;
}

template <class F>
__global__ void pool2d_backward_kernel(PoolGeometry g, PoolStrides s, typename F::S *dx, const typename F::S *dy,
                                       const typename F::S *x, int64_t n) {
  using C = typename F::C;
  NNRT_GRID_LOOP(e, n) {
    const int64_t q = e % g.w, r = e / g.w % g.h, c = e / (g.w * g.h) % g.c, b = e / (g.w * g.h * g.c);
    const typename F::S *xp = x + b * s.x[0] + c * s.x[1];
    const typename F::S *dyp = dy + b * s.y[0] + c * s.y[1];
    const int64_t i_end = (r + g.pad_top) / g.stride_h + 1, j_end = (q + g.pad_left) / g.stride_w + 1;
    C acc = C(0);
    for (int64_t i = first_window(r, g.pad_top, g.kh, g.stride_h); i < i_end && i < g.oh; ++i) {
      for (int64_t j = first_window(q, g.pad_left, g.kw, g.stride_w); j < j_end && j < g.ow; ++j) {
        const PoolWindow win(g, i, j);
        if (win.count() == 0 || r < win.r0 || r >= win.r1 || q < win.c0 || q >= win.c1) continue;
        const C grad = F::load(dyp[i * s.y[2] + j * s.y[3]]);
        if (g.alg == NNRT_POOL_MAX) {
          // The window's winner: the first position holding its maximum.
          C m = -(C(1) / C(0));
          int64_t at_r = -1, at_q = -1;
          for (int64_t wr = win.r0; wr < win.r1; ++wr)
            for (int64_t wq = win.c0; wq < win.c1; ++wq) {
              const C v = F::load(xp[wr * s.x[2] + wq * s.x[3]]);
              if (at_r < 0 || pool_replaces_max(v, m)) {
                m = v;
                at_r = wr;
                at_q = wq;
              }
            }
          if (at_r == r && at_q == q) acc += grad;
        } else {
          acc += grad / pool_average_divisor<C>(g, win);
        }
      }
    }
    dx[b * s.dx[0] + c * s.dx[1] + r * s.dx[2] + q * s.dx[3]] = F::store(acc);
  }
}

// ---- convolution input gradient with non-finite filters --------------------------------------------

template <class F>
__global__ void flag_nonfinite_kernel(const typename F::S *x, Index1 index, int64_t n, int *flag) {
  NNRT_GRID_LOOP(i, n) {
    int64_t o[1];
    strided_offsets(index, i, o);
    if (!isfinite(F::load(x[o[0]]))) *flag = 1;
  }
}

template <class F>
__global__ void conv2d_backward_data_exact_kernel(Conv2dGeometry g, ConvStrides s, const int *flag,
                                                  typename F::S *dx, const typename F::S *dy,
                                                  const typename F::S *w, int64_t n) {
  if (*flag == 0) return;
  using C = typename F::C;
  auto dy_at = [&](int64_t b, int64_t o, int64_t r, int64_t q) {
    return F::load(dy[b * s.dy[0] + o * s.dy[1] + r * s.dy[2] + q * s.dy[3]]);
  };
  auto w_at = [&](int64_t o, int64_t ci, int64_t kh, int64_t kw) {
    return F::load(w[o * s.w[0] + ci * s.w[1] + kh * s.w[2] + kw * s.w[3]]);
  };
  NNRT_GRID_LOOP(e, n) {
    const int64_t q = e % g.w, r = e / g.w % g.h, c = e / (g.w * g.h) % g.c, b = e / (g.w * g.h * g.c);
    dx[b * s.dx[0] + c * s.dx[1] + r * s.dx[2] + q * s.dx[3]] =
        F::store(conv2d_input_gradient<C>(g, b, c, r, q, dy_at, w_at));
  }
}

// ---- batch normalization, one block per channel ----------------------------------------------------

// fn(o) for this thread's share of the elements of a line that starts at `start`; o[k] is the
// element's offset in operand k.
template <int K, class Fn>
__device__ void for_each_in_line(const Lines<K> &lines, const int64_t *start, Fn fn) {
  for (int64_t i = threadIdx.x; i < lines.length; i += blockDim.x) {
    int64_t o[K];
    strided_offsets(lines.inner, i, o);
    for (int k = 0; k < K; ++k) o[k] += start[k];
    fn(o);
  }
}

template <class F>
__global__ void batchnorm_kernel(BatchnormForward p, typename F::S *y, const typename F::S *x, Lines<2> lines) {
  using C = typename F::C;
  extern __shared__ unsigned char shared_bytes[];
  C *shared = reinterpret_cast<C *>(shared_bytes);
  const C count = static_cast<C>(lines.length);
  for (int64_t c = blockIdx.x; c < lines.count; c += gridDim.x) {
    int64_t start[2];
    line_start(lines, c, start);
    C mean, var;
    if (p.training) {
      C acc = C(0);
      for_each_in_line(lines, start, [&](const int64_t *o) { acc += F::load(x[o[1]]); });
      mean = block_reduce(acc, Add<C>{}, shared) / count;
      acc = C(0);
      for_each_in_line(lines, start, [&](const int64_t *o) {
        const C d = F::load(x[o[1]]) - mean;
        acc += d * d;
      });
      var = block_reduce(acc, Add<C>{}, shared) / count;
      if (threadIdx.x == 0) {
        p.mean_out[c * p.mean_stride] = static_cast<float>(mean);
        p.var_out[c * p.var_stride] = static_cast<float>(var);
      }
    } else {
      mean = static_cast<C>(p.mean_in[c * p.mean_stride]);
      var = static_cast<C>(p.var_in[c * p.var_stride]);
    }
    const C scale = bn_scale(static_cast<C>(p.gamma[c * p.gamma_stride]), var, static_cast<C>(p.eps));
    const C shift = static_cast<C>(p.beta[c * p.beta_stride]);
    for_each_in_line(lines, start,
                     [&](const int64_t *o) { y[o[0]] = F::store(bn_forward(F::load(x[o[1]]), mean, scale, shift)); });
  }
}

template <class F>
__global__ void batchnorm_backward_kernel(BatchnormBackward p, typename F::S *dx, const typename F::S *x,
                                          const typename F::S *dy, Lines<3> lines) {
  using C = typename F::C;
  extern __shared__ unsigned char shared_bytes[];
  C *shared = reinterpret_cast<C *>(shared_bytes);
  const C count = static_cast<C>(lines.length);
  for (int64_t c = blockIdx.x; c < lines.count; c += gridDim.x) {
    int64_t start[3];
    line_start(lines, c, start);
    const C mean = static_cast<C>(p.mean[c * p.mean_stride]);
    const C inv_std = bn_inv_std(static_cast<C>(p.var[c * p.var_stride]), static_cast<C>(p.eps));
    C acc_dy = C(0), acc_dy_xhat = C(0);
    for_each_in_line(lines, start, [&](const int64_t *o) {
      const C g = F::load(dy[o[2]]);
      acc_dy += g;
      acc_dy_xhat += g * ((F::load(x[o[1]]) - mean) * inv_std);
    });
    const C sum_dy = block_reduce(acc_dy, Add<C>{}, shared);
    const C sum_dy_xhat = block_reduce(acc_dy_xhat, Add<C>{}, shared);
    if (threadIdx.x == 0) {
      p.dbeta[c * p.dbeta_stride] = static_cast<float>(sum_dy);
      p.dgamma[c * p.dgamma_stride] = static_cast<float>(sum_dy_xhat);
    }
    const C scale = static_cast<C>(p.gamma[c * p.gamma_stride]) * inv_std;
    const C mean_dy = sum_dy / count, mean_dy_xhat = sum_dy_xhat / count;
    for_each_in_line(lines, start, [&](const int64_t *o) {
      const C xhat = (F::load(x[o[1]]) - mean) * inv_std;
      dx[o[0]] = F::store(bn_backward(F::load(dy[o[2]]), xhat, scale, mean_dy, mean_dy_xhat));
    });
  }
}

// ---- index ops: ARGREDUCE, GATHER, SCATTER_ADD ---------------------------------------------------

// Integer dtypes for ARGREDUCE, beside Float<D>: stored and compared as themselves.
template <class T>
struct Plain {
  using S = T;
  using C = T;
  static __device__ C load(S v) { return v; }
};

template <class F>
__global__ void argreduce_kernel(int32_t alg, int64_t *y, const typename F::S *x, ArgLines l) {
  using C = typename F::C;
  NNRT_GRID_LOOP(line, l.count) {
    int64_t o[2];
    strided_offsets(l.outer, line, o);
    const typename F::S *p = x + o[1];
    C best = F::load(p[0]);
    int64_t at = 0;
    for (int64_t k = 1; k < l.length; ++k) {
      C v = F::load(p[k * l.stride]);
      if (arg_beats(alg, v, best)) {
        best = v;
        at = k;
      }
    }
    y[o[0]] = at;
  }
}

__device__ int64_t load_index(int32_t dtype, const void *indices, int64_t offset) {
  return dtype == NNRT_DTYPE_I32 ? static_cast<const int32_t *>(indices)[offset]
                                 : static_cast<const int64_t *>(indices)[offset];
}

__global__ void check_indices_kernel(IndexRows r, const void *indices, unsigned long long *first_bad) {
  NNRT_GRID_LOOP(p, r.positions) {
    int64_t o[2];
    strided_offsets(r.walk, p, o);
    if (!index_in_rows(load_index(r.index_dtype, indices, o[0]), r.rows))
      atomicMin(first_bad, static_cast<unsigned long long>(p));
  }
}

// Element i of the [positions, width] walk of GATHER and the atomic SCATTER_ADD: its offset in the
// rows tensor (y or dy) and in the table its index names (checked beforehand).
struct RowElement {
  int64_t rows_at, table_at;
};
__device__ RowElement row_element(const IndexRows &r, const void *indices, int64_t i) {
  const int64_t p = i / r.width, d = i % r.width;
  int64_t o[2];
  strided_offsets(r.walk, p, o);
  const int64_t v = load_index(r.index_dtype, indices, o[0]);
  return RowElement{o[1] + d * r.rows_col, v * r.table_row + d * r.table_col};
}

template <class E>
__global__ void gather_kernel(IndexRows r, E *y, const E *table, const void *indices) {
  NNRT_GRID_LOOP(i, r.positions * r.width) {
    const RowElement e = row_element(r, indices, i);
    y[e.rows_at] = table[e.table_at];
  }
}

template <class F>
__global__ void scatter_add_kernel(IndexRows r, typename F::S *dtable, const typename F::S *dy, const void *indices) {
  using C = typename F::C;
  NNRT_GRID_LOOP(i, r.rows * r.width) {
    const int64_t v = i / r.width, d = i % r.width;
    C acc = C(0);
    for (int64_t p = 0; p < r.positions; ++p) {
      int64_t o[2];
      strided_offsets(r.walk, p, o);
      if (load_index(r.index_dtype, indices, o[0]) == v) acc += F::load(dy[o[1] + d * r.rows_col]);
    }
    dtable[v * r.table_row + d * r.table_col] = F::store(acc);
  }
}

template <class T>
__global__ void zero_table_kernel(IndexRows r, T *dtable) {
  NNRT_GRID_LOOP(i, r.rows * r.width) {
    const int64_t v = i / r.width, d = i % r.width;
    dtable[v * r.table_row + d * r.table_col] = T(0);
  }
}

template <class T>
__global__ void scatter_add_atomic_kernel(IndexRows r, T *dtable, const T *dy, const void *indices) {
  NNRT_GRID_LOOP(i, r.positions * r.width) {
    const RowElement e = row_element(r, indices, i);
    atomicAdd(&dtable[e.table_at], dy[e.rows_at]);
  }
}

template <class T>
cudaError_t scatter_add_atomic_as(const IndexRows &r, void *dtable, const void *dy, const void *indices,
                                  cudaStream_t stream) {
  T *table = static_cast<T *>(dtable);
  zero_table_kernel<T><<<blocks_for(r.rows * r.width), kThreads, 0, stream>>>(r, table);
  if (r.positions > 0) {
    scatter_add_atomic_kernel<T><<<blocks_for(r.positions * r.width), kThreads, 0, stream>>>(
        r, table, static_cast<const T *>(dy), indices);
  }
  return cudaGetLastError();
}

unsigned line_blocks(int64_t lines) { return static_cast<unsigned>(lines < 65535 ? (lines < 1 ? 1 : lines) : 65535); }

cudaError_t launched() { return cudaGetLastError(); }

}  // namespace

cudaError_t fill(void *y, int element_bytes, uint64_t bits, const Index1 &index, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  unsigned g = blocks_for(n);
  switch (element_bytes) {
    case 1: fill_kernel<<<g, kThreads, 0, stream>>>(static_cast<uint8_t *>(y), static_cast<uint8_t>(bits), index, n); break;
    case 2: fill_kernel<<<g, kThreads, 0, stream>>>(static_cast<uint16_t *>(y), static_cast<uint16_t>(bits), index, n); break;
    case 4: fill_kernel<<<g, kThreads, 0, stream>>>(static_cast<uint32_t *>(y), static_cast<uint32_t>(bits), index, n); break;
    case 8: fill_kernel<<<g, kThreads, 0, stream>>>(static_cast<uint64_t *>(y), bits, index, n); break;
    default: return cudaErrorInvalidValue;
  }
  return launched();
}

cudaError_t copy(void *y, int32_t y_dtype, const void *x, int32_t x_dtype, const Index2 &index, int64_t n,
                 cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  unsigned g = blocks_for(n);
  if (y_dtype == x_dtype) {
    switch (y_dtype) {
      case NNRT_DTYPE_U8:
      case NNRT_DTYPE_BOOL:
        copy_same_kernel<<<g, kThreads, 0, stream>>>(static_cast<uint8_t *>(y), static_cast<const uint8_t *>(x), index, n);
        break;
      case NNRT_DTYPE_F16:
      case NNRT_DTYPE_BF16:
        copy_same_kernel<<<g, kThreads, 0, stream>>>(static_cast<uint16_t *>(y), static_cast<const uint16_t *>(x), index, n);
        break;
      case NNRT_DTYPE_F32:
      case NNRT_DTYPE_I32:
        copy_same_kernel<<<g, kThreads, 0, stream>>>(static_cast<uint32_t *>(y), static_cast<const uint32_t *>(x), index, n);
        break;
      case NNRT_DTYPE_F64:
      case NNRT_DTYPE_I64:
        copy_same_kernel<<<g, kThreads, 0, stream>>>(static_cast<uint64_t *>(y), static_cast<const uint64_t *>(x), index, n);
        break;
      default: return cudaErrorInvalidValue;
    }
    return launched();
  }
  return visit_float(y_dtype, [&](auto yt) {
    using Y = decltype(yt);
    return visit_float(x_dtype, [&](auto xt) {
      using X = decltype(xt);
      copy_convert_kernel<Y, X><<<g, kThreads, 0, stream>>>(static_cast<typename Y::S *>(y),
                                                            static_cast<const typename X::S *>(x), index, n);
      return launched();
    });
  });
}

cudaError_t random(void *y, int32_t dtype, int32_t alg, uint64_t seed, uint64_t counter, float p0, float p1,
                   const Index1 &index, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    random_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<typename F::S *>(y), alg, seed, counter, p0,
                                                             p1, index, n);
    return launched();
  });
}

cudaError_t unary(int32_t alg, int32_t dtype, void *y, const void *x, double alpha, double beta, const Index2 &index,
                  int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using C = typename F::C;
    unary_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(alg, static_cast<typename F::S *>(y),
                                                            static_cast<const typename F::S *>(x), static_cast<C>(alpha),
                                                            static_cast<C>(beta), index, n);
    return launched();
  });
}

cudaError_t unary_backward(int32_t alg, bool from_dst, int32_t dtype, void *dx, const void *dy, const void *s,
                           double alpha, double beta, const Index3 &index, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    using C = typename F::C;
    unary_backward_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(
        alg, from_dst, static_cast<S *>(dx), static_cast<const S *>(dy), static_cast<const S *>(s),
        static_cast<C>(alpha), static_cast<C>(beta), index, n);
    return launched();
  });
}

cudaError_t binary(int32_t alg, int32_t dtype, void *c, const void *a, const void *b, const Index3 &index, int64_t n,
                   cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    binary_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(alg, static_cast<S *>(c), static_cast<const S *>(a),
                                                             static_cast<const S *>(b), index, n);
    return launched();
  });
}

cudaError_t dropout(int32_t dtype, void *y, uint8_t *mask, const void *x, double p, uint64_t seed, uint64_t counter,
                    const Index3 &index, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    using C = typename F::C;
    dropout_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<S *>(y), mask, static_cast<const S *>(x),
                                                              static_cast<float>(p), static_cast<C>(1.0 / (1.0 - p)),
                                                              seed, counter, index, n);
    return launched();
  });
}

cudaError_t dropout_backward(int32_t dtype, void *dx, const void *dy, const uint8_t *mask, double p,
                             const Index3 &index, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    using C = typename F::C;
    dropout_backward_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<S *>(dx), static_cast<const S *>(dy), mask, static_cast<C>(1.0 / (1.0 - p)), index, n);
    return launched();
  });
}

cudaError_t reduce(int32_t alg, int32_t dtype, void *y, const void *x, const Lines<2> &lines, cudaStream_t stream) {
  if (lines.count == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    reduce_kernel<F><<<line_blocks(lines.count), kLineThreads, kLineThreads * sizeof(typename F::C), stream>>>(
        alg, static_cast<S *>(y), static_cast<const S *>(x), lines);
    return launched();
  });
}

cudaError_t softmax(bool log, int32_t dtype, void *y, const void *x, const Lines<2> &lines, cudaStream_t stream) {
  if (lines.count == 0 || lines.length == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    softmax_kernel<F><<<line_blocks(lines.count), kLineThreads, kLineThreads * sizeof(typename F::C), stream>>>(
        log, static_cast<S *>(y), static_cast<const S *>(x), lines);
    return launched();
  });
}

cudaError_t softmax_backward(bool log, int32_t dtype, void *dx, const void *dy, const void *y, const Lines<3> &lines,
                             cudaStream_t stream) {
  if (lines.count == 0 || lines.length == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    softmax_backward_kernel<F>
        <<<line_blocks(lines.count), kLineThreads, kLineThreads * sizeof(typename F::C), stream>>>(
            log, static_cast<S *>(dx), static_cast<const S *>(dy), static_cast<const S *>(y), lines);
    return launched();
  });
}

cudaError_t elementwise_loss(int32_t alg, int32_t dtype, void *loss, const void *pred, const void *target,
                             const Lines<2> &all, cudaStream_t stream) {
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    elementwise_loss_kernel<F><<<1, kLineThreads, kLineThreads * sizeof(typename F::C), stream>>>(
        alg, static_cast<S *>(loss), static_cast<const S *>(pred), static_cast<const S *>(target), all);
    return launched();
  });
}

cudaError_t elementwise_loss_backward(int32_t alg, int32_t dtype, void *dpred, const void *pred, const void *target,
                                      double scale, const Index3 &index, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    using C = typename F::C;
    elementwise_loss_backward_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(
        alg, static_cast<S *>(dpred), static_cast<const S *>(pred), static_cast<const S *>(target),
        static_cast<C>(scale / static_cast<double>(n)), index, n);
    return launched();
  });
}

cudaError_t class_loss(const ClassLoss &c, void *loss, const void *pred, const void *target, double *row_terms,
                       int *bad_index, cudaStream_t stream) {
  return visit_float(c.dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    const size_t shared = kLineThreads * sizeof(typename F::C);
    if (c.rows > 0) {
      class_loss_rows_kernel<F><<<line_blocks(c.rows), kLineThreads, shared, stream>>>(
          c, static_cast<const S *>(pred), target, row_terms, bad_index);
      cudaError_t e = launched();
      if (e != cudaSuccess) return e;
    }
    class_loss_mean_kernel<F><<<1, kLineThreads, shared, stream>>>(c.rows, row_terms, static_cast<S *>(loss));
    return launched();
  });
}

cudaError_t class_loss_backward(const ClassLoss &c, void *dpred, const void *pred, const void *target, double scale,
                                int *bad_index, cudaStream_t stream) {
  if (c.rows == 0 || c.classes == 0) return cudaSuccess;
  return visit_float(c.dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    using C = typename F::C;
    class_loss_backward_kernel<F><<<line_blocks(c.rows), kLineThreads, kLineThreads * sizeof(C), stream>>>(
        c, static_cast<S *>(dpred), static_cast<const S *>(pred), target,
        static_cast<C>(scale / static_cast<double>(c.rows)), bad_index);
    return launched();
  });
}

cudaError_t pool2d(int32_t dtype, const PoolGeometry &g, const PoolStrides &s, void *y, const void *x,
                   cudaStream_t stream) {
  const int64_t n = g.n * g.c * g.oh * g.ow;
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    pool2d_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(g, s, static_cast<S *>(y), static_cast<const S *>(x), n);
    return launched();
  });
}

cudaError_t pool2d_backward(int32_t dtype, const PoolGeometry &g, const PoolStrides &s, void *dx, const void *dy,
                            const void *x, cudaStream_t stream) {
  const int64_t n = g.n * g.c * g.h * g.w;
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    pool2d_backward_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(
        g, s, static_cast<S *>(dx), static_cast<const S *>(dy), static_cast<const S *>(x), n);
    return launched();
  });
}

cudaError_t flag_nonfinite(int32_t dtype, const void *x, const Index1 &index, int64_t n, int *flag,
                           cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    flag_nonfinite_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const typename F::S *>(x), index,
                                                                      n, flag);
    return launched();
  });
}

cudaError_t conv2d_backward_data_exact(int32_t dtype, const Conv2dGeometry &g, const ConvStrides &s, const int *flag,
                                       void *dx, const void *dy, const void *w, cudaStream_t stream) {
  const int64_t n = g.n * g.c * g.h * g.w;
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    conv2d_backward_data_exact_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(
        g, s, flag, static_cast<S *>(dx), static_cast<const S *>(dy), static_cast<const S *>(w), n);
    return launched();
  });
}

cudaError_t optimizer_update(int32_t alg, const float *grad, float *param, float *s0, float *s1,
                             const OptimizerStep &step, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  unsigned g = blocks_for(n);
  switch (alg) {
    case NNRT_OPTIMIZER_SGD: optimizer_kernel<NNRT_OPTIMIZER_SGD><<<g, kThreads, 0, stream>>>(grad, param, s0, s1, step, n); break;
    case NNRT_OPTIMIZER_ADAGRAD: optimizer_kernel<NNRT_OPTIMIZER_ADAGRAD><<<g, kThreads, 0, stream>>>(grad, param, s0, s1, step, n); break;
    case NNRT_OPTIMIZER_ADAM: optimizer_kernel<NNRT_OPTIMIZER_ADAM><<<g, kThreads, 0, stream>>>(grad, param, s0, s1, step, n); break;
    case NNRT_OPTIMIZER_ADAMW: optimizer_kernel<NNRT_OPTIMIZER_ADAMW><<<g, kThreads, 0, stream>>>(grad, param, s0, s1, step, n); break;
    case NNRT_OPTIMIZER_RMSPROP: optimizer_kernel<NNRT_OPTIMIZER_RMSPROP><<<g, kThreads, 0, stream>>>(grad, param, s0, s1, step, n); break;
    case NNRT_OPTIMIZER_ADAMAX: optimizer_kernel<NNRT_OPTIMIZER_ADAMAX><<<g, kThreads, 0, stream>>>(grad, param, s0, s1, step, n); break;
    default: return cudaErrorInvalidValue;
  }
  return launched();
}

cudaError_t batchnorm(int32_t dtype, const BatchnormForward &p, void *y, const void *x, const Lines<2> &lines,
                      cudaStream_t stream) {
  if (lines.count == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    batchnorm_kernel<F><<<line_blocks(lines.count), kLineThreads, kLineThreads * sizeof(typename F::C), stream>>>(
        p, static_cast<S *>(y), static_cast<const S *>(x), lines);
    return launched();
  });
}

cudaError_t batchnorm_backward(int32_t dtype, const BatchnormBackward &p, void *dx, const void *x, const void *dy,
                               const Lines<3> &lines, cudaStream_t stream) {
  if (lines.count == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    batchnorm_backward_kernel<F><<<line_blocks(lines.count), kLineThreads, kLineThreads * sizeof(typename F::C),
                                   stream>>>(p, static_cast<S *>(dx), static_cast<const S *>(x),
                                             static_cast<const S *>(dy), lines);
    return launched();
  });
}

cudaError_t argreduce(int32_t alg, int32_t dtype, int64_t *y, const void *x, const ArgLines &lines,
                      cudaStream_t stream) {
  if (lines.count == 0) return cudaSuccess;
  auto launch = [&](auto t) {
    using F = decltype(t);
    argreduce_kernel<F><<<blocks_for(lines.count), kThreads, 0, stream>>>(alg, y, static_cast<const typename F::S *>(x),
                                                                        lines);
    return launched();
  };
  switch (dtype) {
    case NNRT_DTYPE_I32: return launch(Plain<int32_t>{});
    case NNRT_DTYPE_I64: return launch(Plain<int64_t>{});
    case NNRT_DTYPE_U8: return launch(Plain<uint8_t>{});
    default: return visit_float(dtype, launch);
  }
}

cudaError_t check_indices(const IndexRows &r, const void *indices, unsigned long long *first_bad,
                          cudaStream_t stream) {
  if (r.positions == 0) return cudaSuccess;
  check_indices_kernel<<<blocks_for(r.positions), kThreads, 0, stream>>>(r, indices, first_bad);
  return launched();
}

cudaError_t gather(int element_bytes, const IndexRows &r, void *y, const void *table, const void *indices,
                   cudaStream_t stream) {
  const int64_t n = r.positions * r.width;
  if (n == 0) return cudaSuccess;
  const unsigned g = blocks_for(n);
  switch (element_bytes) {
    case 1: gather_kernel<<<g, kThreads, 0, stream>>>(r, static_cast<uint8_t *>(y), static_cast<const uint8_t *>(table), indices); break;
    case 2: gather_kernel<<<g, kThreads, 0, stream>>>(r, static_cast<uint16_t *>(y), static_cast<const uint16_t *>(table), indices); break;
    case 4: gather_kernel<<<g, kThreads, 0, stream>>>(r, static_cast<uint32_t *>(y), static_cast<const uint32_t *>(table), indices); break;
    case 8: gather_kernel<<<g, kThreads, 0, stream>>>(r, static_cast<uint64_t *>(y), static_cast<const uint64_t *>(table), indices); break;
    default: return cudaErrorInvalidValue;
  }
  return launched();
}

cudaError_t scatter_add(int32_t dtype, const IndexRows &r, void *dtable, const void *dy, const void *indices,
                        cudaStream_t stream) {
  const int64_t n = r.rows * r.width;
  if (n == 0) return cudaSuccess;
  return visit_float(dtype, [&](auto t) {
    using F = decltype(t);
    using S = typename F::S;
    scatter_add_kernel<F><<<blocks_for(n), kThreads, 0, stream>>>(r, static_cast<S *>(dtable),
                                                                 static_cast<const S *>(dy), indices);
    return launched();
  });
}

cudaError_t scatter_add_atomic(int32_t dtype, const IndexRows &r, void *dtable, const void *dy, const void *indices,
                               cudaStream_t stream) {
  if (r.rows * r.width == 0) return cudaSuccess;
  if (dtype == NNRT_DTYPE_F32) return scatter_add_atomic_as<float>(r, dtable, dy, indices, stream);
  if (dtype == NNRT_DTYPE_F64) return scatter_add_atomic_as<double>(r, dtable, dy, indices, stream);
  return cudaErrorInvalidValue;
}

}  // namespace nnrt::cudnn::gpu
