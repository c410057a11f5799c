// Elementwise ops as the CUDA kernels of kernels.cu: COPY, FILL, RANDOM, UNARY, UNARY_BACKWARD,
// BINARY, DROPOUT, DROPOUT_BACKWARD and OPTIMIZER_UPDATE. The descriptor is compacted into
// StridedIndex form once, at creation; a run only launches.
#include <cstring>

#include "kernels.h"
#include "nnrt/kernels/convert.h"
#include "nnrt/kernels/dtype_info.h"
#include "nnrt/kernels/eltwise.h"
#include "nnrt/kernels/op_manifest.h"
#include "ops.h"

namespace nnrt::cudnn {

namespace {

using gpu::Index1;
using gpu::Index2;
using gpu::Index3;

template <int K>
kernels::StridedIndex<K> index_of(const nnrt_tensor_desc &shape, const nnrt_tensor_desc *const (&ops)[K],
                                  int64_t *count) {
  kernels::StridedIndex<K> s;
  std::memset(&s, 0, sizeof s);
  const int64_t *strides[K];
  for (int k = 0; k < K; ++k) strides[k] = ops[k]->strides;
  *count = kernels::make_strided_index<K>(shape.ndim, shape.dims, strides, &s);
  return s;
}

bool unary_alg_valid(int32_t alg) { return nnrt::kernels::is_unary_alg(alg); }

std::string float_same(const nnrt_op_desc &d) {
  const int32_t t = d.outputs[0].dtype;
  if (!is_float(t)) return "dtype " + std::to_string(t) + " is not a float dtype";
  for (int i = 0; i < d.n_inputs; ++i) {
    if (d.inputs[i].dtype != t) return "inputs and output differ in dtype";
    if (!same_dims(d.inputs[i], d.outputs[0])) return "inputs and output differ in dims";
  }
  return "";
}

// The bits of `v` stored as `dtype`, converted as COPY converts an f64.
uint64_t fill_bits(int32_t dtype, double v) {
  using namespace nnrt::kernels;
  uint64_t bits = 0;
  switch (dtype) {
    case NNRT_DTYPE_F32: {
      float f = static_cast<float>(v);
      std::memcpy(&bits, &f, 4);
      break;
    }
    case NNRT_DTYPE_F64: std::memcpy(&bits, &v, 8); break;
    case NNRT_DTYPE_F16: bits = f64_to_f16(v); break;
    case NNRT_DTYPE_BF16: bits = f64_to_bf16(v); break;
    case NNRT_DTYPE_I32: bits = static_cast<uint32_t>(f64_to_i32_saturate(v)); break;
    case NNRT_DTYPE_I64: bits = static_cast<uint64_t>(f64_to_i64_saturate(v)); break;
    case NNRT_DTYPE_U8: bits = f64_to_u8_saturate(v); break;
    default: bits = v != 0.0 ? 1 : 0; break;  // BOOL
  }
  return bits;
}

void launched(cudaError_t e, const char *what) { check_cuda(e, what); }

class FillOp final : public Op {
 public:
  explicit FillOp(const nnrt_op_desc &d) : dtype_(d.outputs[0].dtype) {
    const nnrt_tensor_desc *ops[1] = {&d.outputs[0]};
    index_ = index_of<1>(d.outputs[0], ops, &n_);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    launched(gpu::fill(a.outputs[0], static_cast<int>(kernels::dtype_size(dtype_)),
                       fill_bits(dtype_, a.scalars[NNRT_SCALAR_FILL_VALUE]), index_, n_, s),
             "fill kernel");
  }

 private:
  int32_t dtype_;
  Index1 index_;
  int64_t n_ = 0;
};

class CopyOp final : public Op {
 public:
  explicit CopyOp(const nnrt_op_desc &d) : y_dtype_(d.outputs[0].dtype), x_dtype_(d.inputs[0].dtype) {
    const nnrt_tensor_desc *ops[2] = {&d.outputs[0], &d.inputs[0]};
    index_ = index_of<2>(d.outputs[0], ops, &n_);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    launched(gpu::copy(a.outputs[0], y_dtype_, a.inputs[0], x_dtype_, index_, n_, s), "copy kernel");
  }

 private:
  int32_t y_dtype_, x_dtype_;
  Index2 index_;
  int64_t n_ = 0;
};

class RandomOp final : public Op {
 public:
  explicit RandomOp(const nnrt_op_desc &d) : dtype_(d.outputs[0].dtype), alg_(d.attrs.alg), seed_(d.attrs.seed) {
    const nnrt_tensor_desc *ops[1] = {&d.outputs[0]};
    index_ = index_of<1>(d.outputs[0], ops, &n_);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    launched(gpu::random(a.outputs[0], dtype_, alg_, seed_, a.counter, static_cast<float>(a.scalars[NNRT_SCALAR_RANDOM_A]),
                         static_cast<float>(a.scalars[NNRT_SCALAR_RANDOM_B]), index_, n_, s),
             "random kernel");
  }

 private:
  int32_t dtype_, alg_;
  uint64_t seed_;
  Index1 index_;
  int64_t n_ = 0;
};

class UnaryOp final : public Op {
 public:
  explicit UnaryOp(const nnrt_op_desc &d) : d_(d) {
    const nnrt_tensor_desc *ops[2] = {&d.outputs[0], &d.inputs[0]};
    index_ = index_of<2>(d.outputs[0], ops, &n_);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    launched(gpu::unary(d_.attrs.alg, d_.outputs[0].dtype, a.outputs[0], a.inputs[0], d_.attrs.alpha, d_.attrs.beta,
                        index_, n_, s),
             "unary kernel");
  }

 private:
  nnrt_op_desc d_;
  Index2 index_;
  int64_t n_ = 0;
};

class UnaryBackwardOp final : public Op {
 public:
  explicit UnaryBackwardOp(const nnrt_op_desc &d) : d_(d) {
    const nnrt_tensor_desc *ops[3] = {&d.outputs[0], &d.inputs[0], &d.inputs[1]};
    index_ = index_of<3>(d.outputs[0], ops, &n_);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    launched(gpu::unary_backward(d_.attrs.alg, (d_.attrs.flags & NNRT_FLAG_USE_DST) != 0, d_.outputs[0].dtype,
                                 a.outputs[0], a.inputs[0], a.inputs[1], d_.attrs.alpha, d_.attrs.beta, index_, n_, s),
             "unary backward kernel");
  }

 private:
  nnrt_op_desc d_;
  Index3 index_;
  int64_t n_ = 0;
};

class BinaryOp final : public Op {
 public:
  explicit BinaryOp(const nnrt_op_desc &d) : alg_(d.attrs.alg), dtype_(d.outputs[0].dtype) {
    const nnrt_tensor_desc *ops[3] = {&d.outputs[0], &d.inputs[0], &d.inputs[1]};
    index_ = index_of<3>(d.outputs[0], ops, &n_);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    launched(gpu::binary(alg_, dtype_, a.outputs[0], a.inputs[0], a.inputs[1], index_, n_, s), "binary kernel");
  }

 private:
  int32_t alg_, dtype_;
  Index3 index_;
  int64_t n_ = 0;
};

class DropoutOp final : public Op {
 public:
  explicit DropoutOp(const nnrt_op_desc &d) : dtype_(d.inputs[0].dtype), p_(d.attrs.alpha), seed_(d.attrs.seed) {
    const nnrt_tensor_desc *ops[3] = {&d.outputs[0], &d.outputs[1], &d.inputs[0]};
    index_ = index_of<3>(d.outputs[0], ops, &n_);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    launched(gpu::dropout(dtype_, a.outputs[0], static_cast<uint8_t *>(a.outputs[1]), a.inputs[0], p_, seed_,
                          a.counter, index_, n_, s),
             "dropout kernel");
  }

 private:
  int32_t dtype_;
  double p_;
  uint64_t seed_;
  Index3 index_;
  int64_t n_ = 0;
};

class DropoutBackwardOp final : public Op {
 public:
  explicit DropoutBackwardOp(const nnrt_op_desc &d) : dtype_(d.inputs[0].dtype), p_(d.attrs.alpha) {
    const nnrt_tensor_desc *ops[3] = {&d.outputs[0], &d.inputs[0], &d.inputs[1]};
    index_ = index_of<3>(d.outputs[0], ops, &n_);
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    launched(gpu::dropout_backward(dtype_, a.outputs[0], a.inputs[0], static_cast<const uint8_t *>(a.inputs[1]), p_,
                                   index_, n_, s),
             "dropout backward kernel");
  }

 private:
  int32_t dtype_;
  double p_;
  Index3 index_;
  int64_t n_ = 0;
};

class OptimizerOp final : public Op {
 public:
  explicit OptimizerOp(const nnrt_op_desc &d) : d_(d), n_(element_count(d.outputs[0])) {}
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    kernels::OptimizerStep step = kernels::make_optimizer_step(d_.attrs, a.scalars[NNRT_SCALAR_LEARNING_RATE],
                                                               a.scalars[NNRT_SCALAR_STEP], a.scalars[NNRT_SCALAR_GRAD_FACTOR]);
    float *s0 = d_.n_outputs > 1 ? static_cast<float *>(a.outputs[1]) : nullptr;
    float *s1 = d_.n_outputs > 2 ? static_cast<float *>(a.outputs[2]) : nullptr;
    launched(gpu::optimizer_update(d_.attrs.alg, static_cast<const float *>(a.inputs[0]),
                                   static_cast<float *>(a.outputs[0]), s0, s1, step, n_, s),
             "optimizer kernel");
  }

 private:
  nnrt_op_desc d_;
  int64_t n_;
};

// The states each optimizer rule reads and writes.
int optimizer_states(const nnrt_op_attrs &a) { return kernels::optimizer_state_count(a.alg, a.momentum); }

}  // namespace

std::string eltwise_refusal(const nnrt_op_desc &d) {
  std::string e;
  switch (d.kind) {
    case NNRT_OP_FILL:
      return check_counts(d, 0, 0, 1, 1);
    case NNRT_OP_COPY:
      if (!(e = check_counts(d, 1, 1, 1, 1)).empty()) return e;
      if (!same_dims(d.inputs[0], d.outputs[0])) return "input and output differ in dims";
      if (d.inputs[0].dtype != d.outputs[0].dtype && !(is_float(d.inputs[0].dtype) && is_float(d.outputs[0].dtype)))
        return "conversions to or from integer dtypes run on the reference backend";
      return "";
    case NNRT_OP_RANDOM:
      if (!(e = check_counts(d, 0, 0, 1, 1)).empty()) return e;
      if (!is_float(d.outputs[0].dtype)) return "random numbers need a float output";
      if (d.attrs.alg != NNRT_RANDOM_UNIFORM && d.attrs.alg != NNRT_RANDOM_NORMAL) return "unknown random alg";
      return "";
    case NNRT_OP_UNARY:
      if (!(e = check_counts(d, 1, 1, 1, 1)).empty()) return e;
      if (!unary_alg_valid(d.attrs.alg)) return "unknown unary alg " + std::to_string(d.attrs.alg);
      return float_same(d);
    case NNRT_OP_UNARY_BACKWARD:
      if (!(e = check_counts(d, 2, 2, 1, 1)).empty()) return e;
      if (!unary_alg_valid(d.attrs.alg)) return "unknown unary alg " + std::to_string(d.attrs.alg);
      if (d.attrs.flags & NNRT_FLAG_USE_DST) {
        if (!kernels::unary_backward_allows_dst(d.attrs.alg)) return "this alg has no gradient from the output";
        if ((d.attrs.alg == NNRT_UNARY_LEAKY_RELU || d.attrs.alg == NNRT_UNARY_ELU) && d.attrs.alpha < 0)
          return "a gradient from the output needs alpha >= 0";
      }
      return float_same(d);
    case NNRT_OP_BINARY:
      if (!(e = check_counts(d, 2, 2, 1, 1)).empty()) return e;
      if (d.attrs.alg < NNRT_BINARY_ADD || d.attrs.alg > NNRT_BINARY_MIN) return "unknown binary alg";
      return float_same(d);
    case NNRT_OP_DROPOUT:
      if (!(e = check_counts(d, 1, 1, 2, 2)).empty()) return e;
      if (!(d.attrs.alpha >= 0 && d.attrs.alpha < 1)) return "the drop probability must be in [0, 1)";
      if (!is_float(d.inputs[0].dtype) || d.outputs[0].dtype != d.inputs[0].dtype || d.outputs[1].dtype != NNRT_DTYPE_U8)
        return "dropout needs a float x, y of x's dtype and a U8 mask";
      if (!same_dims(d.inputs[0], d.outputs[0]) || !same_dims(d.inputs[0], d.outputs[1])) return "dims differ";
      return "";
    case NNRT_OP_DROPOUT_BACKWARD:
      if (!(e = check_counts(d, 2, 2, 1, 1)).empty()) return e;
      if (!(d.attrs.alpha >= 0 && d.attrs.alpha < 1)) return "the drop probability must be in [0, 1)";
      if (!is_float(d.inputs[0].dtype) || d.outputs[0].dtype != d.inputs[0].dtype || d.inputs[1].dtype != NNRT_DTYPE_U8)
        return "dropout backward needs a float dy, dx of dy's dtype and a U8 mask";
      if (!same_dims(d.inputs[0], d.outputs[0]) || !same_dims(d.inputs[0], d.inputs[1])) return "dims differ";
      return "";
    case NNRT_OP_OPTIMIZER_UPDATE:
      if (!(e = check_counts(d, 1, 1, 1, 3)).empty()) return e;
      if (d.attrs.alg < NNRT_OPTIMIZER_SGD || d.attrs.alg > NNRT_OPTIMIZER_ADAMAX) return "unknown optimizer alg";
      if (d.n_outputs != 1 + optimizer_states(d.attrs)) return "the optimizer's states do not match its rule";
      for (int i = 0; i < d.n_outputs; ++i) {
        if (d.outputs[i].dtype != NNRT_DTYPE_F32 || !same_dims(d.outputs[i], d.inputs[0]) ||
            !is_contiguous(d.outputs[i]))
          return "optimizer updates need contiguous F32 tensors of one shape";
      }
      if (d.inputs[0].dtype != NNRT_DTYPE_F32 || !is_contiguous(d.inputs[0]))
        return "optimizer updates need contiguous F32 tensors of one shape";
      return "";
    default: return "not an elementwise op";
  }
}

std::unique_ptr<Op> create_eltwise_op(const nnrt_op_desc &d) {
  switch (d.kind) {
    case NNRT_OP_FILL: return std::make_unique<FillOp>(d);
    case NNRT_OP_COPY: return std::make_unique<CopyOp>(d);
    case NNRT_OP_RANDOM: return std::make_unique<RandomOp>(d);
    case NNRT_OP_UNARY: return std::make_unique<UnaryOp>(d);
    case NNRT_OP_UNARY_BACKWARD: return std::make_unique<UnaryBackwardOp>(d);
    case NNRT_OP_BINARY: return std::make_unique<BinaryOp>(d);
    case NNRT_OP_DROPOUT: return std::make_unique<DropoutOp>(d);
    case NNRT_OP_DROPOUT_BACKWARD: return std::make_unique<DropoutBackwardOp>(d);
    case NNRT_OP_OPTIMIZER_UPDATE: return std::make_unique<OptimizerOp>(d);
    default: throw Failure(NNRT_ERR_UNSUPPORTED, "not an elementwise op");
  }
}

}  // namespace nnrt::cudnn
