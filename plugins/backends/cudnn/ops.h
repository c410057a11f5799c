// The ops of the cuDNN backend: for each op kind, a check of the descriptor (pure host code: ""
// when supported, else why not, so that supports() is cheap and the rules are unit-tested without
// a GPU) and the creation of the op.
#pragma once

#include <memory>
#include <string>

#include "cudnn_common.h"
#include "kernels.h"

namespace nnrt::cudnn {

// "" when this backend runs the descriptor; otherwise the reason it does not.
std::string op_refusal(const nnrt_op_desc &desc);

// Creates the op; throws Failure (NNRT_ERR_UNSUPPORTED with the reason for a refused descriptor).
std::unique_ptr<Op> create_op(const nnrt_backend_instance &instance, const nnrt_op_desc &desc);

// Per family (eltwise_ops.cpp, line_ops.cpp, loss_ops.cpp, pool_ops.cpp, conv_op.cpp, matmul_op.cpp,
// index_ops.cpp, batchnorm_ops.cpp).
std::string eltwise_refusal(const nnrt_op_desc &desc);
std::unique_ptr<Op> create_eltwise_op(const nnrt_op_desc &desc);
std::string line_refusal(const nnrt_op_desc &desc);
std::unique_ptr<Op> create_line_op(const nnrt_op_desc &desc);
std::string loss_refusal(const nnrt_op_desc &desc);
std::unique_ptr<Op> create_loss_op(const nnrt_op_desc &desc);
std::string pool_refusal(const nnrt_op_desc &desc);
std::unique_ptr<Op> create_pool_op(const nnrt_op_desc &desc);
std::string conv_refusal(const nnrt_op_desc &desc);
std::unique_ptr<Op> create_conv_op(const nnrt_backend_instance &instance, const nnrt_op_desc &desc);
std::string batchnorm_refusal(const nnrt_op_desc &desc);
std::unique_ptr<Op> create_batchnorm_op(const nnrt_op_desc &desc);
std::string index_refusal(const nnrt_op_desc &desc);
std::unique_ptr<Op> create_index_op(const nnrt_op_desc &desc, bool deterministic);
std::string matmul_refusal(const nnrt_op_desc &desc);
std::unique_ptr<Op> create_matmul_op(const nnrt_backend_instance &instance, const nnrt_op_desc &desc);

// The lines of a sum of x over the dims in `mask` into an output with strides y_strides (x's
// rank; 0 along the reduced dims).
gpu::Lines<2> reduce_lines(const nnrt_tensor_desc &x, const int64_t *y_strides, uint32_t mask);

// Shared descriptor checks: "" or what is wrong.
std::string check_counts(const nnrt_op_desc &d, int inputs_min, int inputs_max, int outputs_min, int outputs_max);
std::string check_tensor(const nnrt_tensor_desc &t, const char *what);
bool same_dims(const nnrt_tensor_desc &a, const nnrt_tensor_desc &b);
bool is_float(int32_t dtype);
bool is_contiguous(const nnrt_tensor_desc &t);
int64_t element_count(const nnrt_tensor_desc &t);

}  // namespace nnrt::cudnn
