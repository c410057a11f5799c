#include "ops.h"

#include "nnrt/kernels/dtype_info.h"
#include "nnrt/kernels/op_manifest.h"

namespace nnrt::cudnn {

std::string check_counts(const nnrt_op_desc &d, int inputs_min, int inputs_max, int outputs_min, int outputs_max) {
  if (d.n_inputs < inputs_min || d.n_inputs > inputs_max || d.n_outputs < outputs_min || d.n_outputs > outputs_max) {
    return "expected " + std::to_string(inputs_min) + ".." + std::to_string(inputs_max) + " inputs and " +
           std::to_string(outputs_min) + ".." + std::to_string(outputs_max) + " outputs, got " +
           std::to_string(d.n_inputs) + " and " + std::to_string(d.n_outputs);
  }
  for (int i = 0; i < d.n_inputs; ++i) {
    std::string e = check_tensor(d.inputs[i], "an input");
    if (!e.empty()) return e;
  }
  for (int i = 0; i < d.n_outputs; ++i) {
    std::string e = check_tensor(d.outputs[i], "an output");
    if (!e.empty()) return e;
  }
  return "";
}

std::string check_tensor(const nnrt_tensor_desc &t, const char *what) {
  if (t.ndim < 0 || t.ndim > NNRT_MAX_DIMS) return std::string(what) + " has rank " + std::to_string(t.ndim);
  if (!nnrt::kernels::dtype_valid(t.dtype)) return std::string(what) + " has dtype " + std::to_string(t.dtype);
  for (int i = 0; i < t.ndim; ++i)
    if (t.dims[i] < 0) return std::string(what) + " has a negative dimension";
  return "";
}

bool same_dims(const nnrt_tensor_desc &a, const nnrt_tensor_desc &b) {
  if (a.ndim != b.ndim) return false;
  for (int i = 0; i < a.ndim; ++i)
    if (a.dims[i] != b.dims[i]) return false;
  return true;
}

bool is_float(int32_t dtype) {
  return dtype == NNRT_DTYPE_F32 || dtype == NNRT_DTYPE_F64 || dtype == NNRT_DTYPE_F16 || dtype == NNRT_DTYPE_BF16;
}

bool is_contiguous(const nnrt_tensor_desc &t) {
  int64_t expected = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.dims[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.dims[i];
  }
  return true;
}

int64_t element_count(const nnrt_tensor_desc &t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.dims[i];
  return n;
}

std::string op_refusal(const nnrt_op_desc &d) {
  switch (d.kind) {
    case NNRT_OP_COPY:
    case NNRT_OP_FILL:
    case NNRT_OP_RANDOM:
    case NNRT_OP_UNARY:
    case NNRT_OP_UNARY_BACKWARD:
    case NNRT_OP_BINARY:
    case NNRT_OP_DROPOUT:
    case NNRT_OP_DROPOUT_BACKWARD:
    case NNRT_OP_OPTIMIZER_UPDATE: return eltwise_refusal(d);
    case NNRT_OP_REDUCE:
    case NNRT_OP_SOFTMAX:
    case NNRT_OP_SOFTMAX_BACKWARD: return line_refusal(d);
    case NNRT_OP_LOSS:
    case NNRT_OP_LOSS_BACKWARD: return loss_refusal(d);
    case NNRT_OP_CONV2D:
    case NNRT_OP_CONV2D_BACKWARD_DATA:
    case NNRT_OP_CONV2D_BACKWARD_WEIGHTS: return conv_refusal(d);
    case NNRT_OP_POOL2D:
    case NNRT_OP_POOL2D_BACKWARD: return pool_refusal(d);
    case NNRT_OP_MATMUL: return matmul_refusal(d);
    case NNRT_OP_BATCHNORM:
    case NNRT_OP_BATCHNORM_BACKWARD: return batchnorm_refusal(d);
    case NNRT_OP_ARGREDUCE:
    case NNRT_OP_GATHER:
    case NNRT_OP_SCATTER_ADD: return index_refusal(d);
    case NNRT_OP_LAYERNORM:
    case NNRT_OP_LAYERNORM_BACKWARD:
    case NNRT_OP_QUANTIZE:
    case NNRT_OP_MATMUL_INT8:
    case NNRT_OP_CONV2D_INT8:
    case NNRT_OP_ATTENTION:
    case NNRT_OP_ATTENTION_BACKWARD:
      return std::string(kernels::op_kind_info(d.kind).name) +
             " has no CUDA kernel in this version: it runs on the reference backend, staged through host memory";
    default: return "op kind " + std::to_string(d.kind) + " is not an nnrt_op_kind this backend knows";
  }
}

std::unique_ptr<Op> create_op(const nnrt_backend_instance &instance, const nnrt_op_desc &d) {
  std::string why = op_refusal(d);
  if (!why.empty()) throw Failure(NNRT_ERR_UNSUPPORTED, why);
  if (d.kind == NNRT_OP_MATMUL) return create_matmul_op(instance, d);
  if (d.kind == NNRT_OP_POOL2D || d.kind == NNRT_OP_POOL2D_BACKWARD) return create_pool_op(d);
  if (d.kind == NNRT_OP_CONV2D || d.kind == NNRT_OP_CONV2D_BACKWARD_DATA || d.kind == NNRT_OP_CONV2D_BACKWARD_WEIGHTS)
    return create_conv_op(instance, d);
  if (d.kind == NNRT_OP_BATCHNORM || d.kind == NNRT_OP_BATCHNORM_BACKWARD) return create_batchnorm_op(d);
  if (d.kind == NNRT_OP_ARGREDUCE || d.kind == NNRT_OP_GATHER || d.kind == NNRT_OP_SCATTER_ADD)
    return create_index_op(d, instance.deterministic);
  if (d.kind == NNRT_OP_LOSS || d.kind == NNRT_OP_LOSS_BACKWARD) return create_loss_op(d);
  if (d.kind == NNRT_OP_REDUCE || d.kind == NNRT_OP_SOFTMAX || d.kind == NNRT_OP_SOFTMAX_BACKWARD)
    return create_line_op(d);
  return create_eltwise_op(d);
}

}  // namespace nnrt::cudnn
