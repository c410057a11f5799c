// The interface between the table (reference_backend.cpp) and the op families.
//
// op_create builds an OpKernel from a descriptor: the family's create_* function validates the
// whole descriptor (throwing OpError with the right status) and precomputes what it can. op_run
// calls run() with arguments whose counts, pointers and workspace the table has already checked.
// run() is const: several threads may run the same kernel at once.
#pragma once

#include <stddef.h>

#include <memory>

#include "exec.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::reference {

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  // Throws OpError for data-dependent errors (an index out of range), before writing anything.
  virtual void run(const nnrt_op_args &args) const = 0;
  size_t workspace_bytes() const { return workspace_bytes_; }

 protected:
  size_t workspace_bytes_ = 0;
};

// What a create_* function gets: the descriptor (already checked for well-formed tensors: valid
// dtypes, ranks, non-negative dims, no size overflow) and where the op will run.
struct OpSetup {
  const nnrt_op_desc &desc;
  Exec exec;
};

using KernelPtr = std::unique_ptr<OpKernel>;

// One per op family; each lives in the file of the same name.
KernelPtr create_copy(const OpSetup &setup);            // op_copy.cpp
KernelPtr create_fill(const OpSetup &setup);            // op_fill_random.cpp
KernelPtr create_random(const OpSetup &setup);          // op_fill_random.cpp
KernelPtr create_unary(const OpSetup &setup);           // op_unary.cpp
KernelPtr create_unary_backward(const OpSetup &setup);  // op_unary.cpp
KernelPtr create_binary(const OpSetup &setup);          // op_binary.cpp
KernelPtr create_reduce(const OpSetup &setup);          // op_reduce.cpp
KernelPtr create_argreduce(const OpSetup &setup);       // op_argreduce.cpp
KernelPtr create_matmul(const OpSetup &setup);          // op_matmul.cpp
KernelPtr create_softmax(const OpSetup &setup);         // op_softmax.cpp
KernelPtr create_softmax_backward(const OpSetup &setup);
KernelPtr create_conv2d(const OpSetup &setup);  // op_conv2d_forward.cpp
KernelPtr create_conv2d_backward_data(const OpSetup &setup);     // op_conv2d_backward_data.cpp
KernelPtr create_conv2d_backward_weights(const OpSetup &setup);  // op_conv2d_backward_weights.cpp
KernelPtr create_pool2d(const OpSetup &setup);                   // op_pool2d.cpp
KernelPtr create_pool2d_backward(const OpSetup &setup);
KernelPtr create_batchnorm(const OpSetup &setup);  // op_batchnorm.cpp
KernelPtr create_batchnorm_backward(const OpSetup &setup);
KernelPtr create_loss(const OpSetup &setup);  // op_loss.cpp
KernelPtr create_loss_backward(const OpSetup &setup);
KernelPtr create_dropout(const OpSetup &setup);  // op_dropout.cpp
KernelPtr create_dropout_backward(const OpSetup &setup);
KernelPtr create_gather(const OpSetup &setup);       // op_gather.cpp
KernelPtr create_scatter_add(const OpSetup &setup);  // op_gather.cpp
KernelPtr create_optimizer_update(const OpSetup &setup);  // op_optimizer.cpp
KernelPtr create_layernorm(const OpSetup &setup);         // op_layernorm.cpp
KernelPtr create_layernorm_backward(const OpSetup &setup);
KernelPtr create_quantize(const OpSetup &setup);     // op_quantize.cpp
KernelPtr create_matmul_int8(const OpSetup &setup);  // op_matmul_int8.cpp
KernelPtr create_conv2d_int8(const OpSetup &setup);  // op_conv2d_int8.cpp
KernelPtr create_attention(const OpSetup &setup);    // op_attention.cpp
KernelPtr create_attention_backward(const OpSetup &setup);

// Typed access to the run arguments.
template <class T>
const T *input_ptr(const nnrt_op_args &args, int i) {
  return static_cast<const T *>(args.inputs[i]);
}
template <class T>
T *output_ptr(const nnrt_op_args &args, int i) {
  return static_cast<T *>(args.outputs[i]);
}

}  // namespace nnrt::reference
