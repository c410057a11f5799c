// Which descriptors the cuDNN backend takes (supports() answers from these rules, without a GPU),
// and that what it refuses comes with a reason, so that it falls back to the reference backend.
#include <gtest/gtest.h>

#include <cstring>

#include "descriptors.h"

#include "ops.h"

namespace nnrt::cudnn {
namespace {

using test::contiguous;
using test::tensor;

nnrt_op_desc op(int32_t kind, int32_t alg, std::initializer_list<nnrt_tensor_desc> in,
                std::initializer_list<nnrt_tensor_desc> out) {
  nnrt_op_desc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.kind = kind;
  d.attrs.alg = alg;
  for (const auto &t : in) d.inputs[d.n_inputs++] = t;
  for (const auto &t : out) d.outputs[d.n_outputs++] = t;
  return d;
}

const int32_t F32 = NNRT_DTYPE_F32;

TEST(OpRefusal, FloatElementwiseOpsAreTaken) {
  auto x = contiguous(F32, {4, 5});
  EXPECT_EQ(op_refusal(op(NNRT_OP_UNARY, NNRT_UNARY_GELU, {x}, {x})), "");
  EXPECT_EQ(op_refusal(op(NNRT_OP_BINARY, NNRT_BINARY_ADD, {x, x}, {x})), "");
  EXPECT_EQ(op_refusal(op(NNRT_OP_FILL, 0, {}, {contiguous(NNRT_DTYPE_I64, {3})})), "");
  EXPECT_EQ(op_refusal(op(NNRT_OP_RANDOM, NNRT_RANDOM_NORMAL, {}, {contiguous(NNRT_DTYPE_BF16, {3})})), "");
  EXPECT_EQ(op_refusal(op(NNRT_OP_COPY, 0, {x}, {contiguous(NNRT_DTYPE_F16, {4, 5})})), "");
  nnrt_op_desc drop = op(NNRT_OP_DROPOUT, 0, {x}, {x, contiguous(NNRT_DTYPE_U8, {4, 5})});
  drop.attrs.alpha = 0.5;
  EXPECT_EQ(op_refusal(drop), "");
}

TEST(OpRefusal, IntegerArithmeticAndIntegerConversionsGoToTheReference) {
  auto i = contiguous(NNRT_DTYPE_I32, {4});
  EXPECT_NE(op_refusal(op(NNRT_OP_BINARY, NNRT_BINARY_ADD, {i, i}, {i})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_COPY, 0, {contiguous(F32, {4})}, {i})), "");
  EXPECT_EQ(op_refusal(op(NNRT_OP_COPY, 0, {i}, {i})), "");  // a same-dtype copy is bytes
}

TEST(OpRefusal, MalformedDescriptorsAreRefusedNotRun) {
  auto x = contiguous(F32, {4});
  EXPECT_NE(op_refusal(op(NNRT_OP_UNARY, 99, {x}, {x})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_BINARY, NNRT_BINARY_ADD, {x}, {x})), "");
  nnrt_op_desc bad_rank = op(NNRT_OP_UNARY, NNRT_UNARY_RELU, {x}, {x});
  bad_rank.inputs[0].ndim = 9;
  EXPECT_NE(op_refusal(bad_rank), "");
  nnrt_op_desc drop = op(NNRT_OP_DROPOUT, 0, {x}, {x, contiguous(NNRT_DTYPE_U8, {4})});
  drop.attrs.alpha = 1.0;
  EXPECT_NE(op_refusal(drop), "");
  // Adam keeps two states: a descriptor with one is not an Adam step.
  nnrt_op_desc adam = op(NNRT_OP_OPTIMIZER_UPDATE, NNRT_OPTIMIZER_ADAM, {x}, {x, x});
  EXPECT_NE(op_refusal(adam), "");
  adam.outputs[adam.n_outputs++] = x;
  EXPECT_EQ(op_refusal(adam), "");
  nnrt_op_desc from_dst = op(NNRT_OP_UNARY_BACKWARD, NNRT_UNARY_GELU, {x, x}, {x});
  from_dst.attrs.flags = NNRT_FLAG_USE_DST;
  EXPECT_NE(op_refusal(from_dst), "");
}

TEST(OpRefusal, ReductionsSoftmaxAndLossesCheckTheirShapes) {
  auto x = contiguous(F32, {4, 5, 6});
  nnrt_op_desc sum = op(NNRT_OP_REDUCE, NNRT_REDUCE_SUM, {x}, {contiguous(F32, {4, 1, 6})});
  sum.attrs.axes_mask = 2;
  EXPECT_EQ(op_refusal(sum), "");
  sum.attrs.axes_mask = 1;  // y's dims no longer match
  EXPECT_NE(op_refusal(sum), "");
  nnrt_op_desc empty_max = op(NNRT_OP_REDUCE, NNRT_REDUCE_MAX, {contiguous(F32, {0, 3})}, {contiguous(F32, {1, 3})});
  empty_max.attrs.axes_mask = 1;
  EXPECT_NE(op_refusal(empty_max), "");  // no identity: the reference backend reports the error

  nnrt_op_desc softmax = op(NNRT_OP_SOFTMAX, NNRT_LOG_SOFTMAX, {x}, {x});
  softmax.attrs.axis = 2;
  EXPECT_EQ(op_refusal(softmax), "");
  softmax.attrs.axis = 3;
  EXPECT_NE(op_refusal(softmax), "");

  auto logits = contiguous(F32, {8, 10});
  auto scalar = contiguous(F32, {});
  EXPECT_EQ(op_refusal(op(NNRT_OP_LOSS, NNRT_LOSS_SOFTMAX_CROSS_ENTROPY, {logits, contiguous(NNRT_DTYPE_I64, {8})},
                          {scalar})), "");
  EXPECT_EQ(op_refusal(op(NNRT_OP_LOSS_BACKWARD, NNRT_LOSS_NLL, {logits, logits}, {logits})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_LOSS, NNRT_LOSS_SOFTMAX_CROSS_ENTROPY, {logits, contiguous(NNRT_DTYPE_I64, {8, 1})},
                          {scalar})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_LOSS, NNRT_LOSS_MSE, {logits, contiguous(F32, {8, 9})}, {scalar})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_LOSS, NNRT_LOSS_MSE, {logits, logits}, {logits})), "");  // loss is rank 0
}

TEST(OpRefusal, PoolingChecksItsGeometry) {
  nnrt_op_desc pool = op(NNRT_OP_POOL2D, NNRT_POOL_MAX, {contiguous(F32, {2, 3, 8, 8})}, {contiguous(F32, {2, 3, 4, 4})});
  pool.attrs.kernel[0] = pool.attrs.kernel[1] = 2;
  pool.attrs.stride[0] = pool.attrs.stride[1] = 2;
  EXPECT_EQ(op_refusal(pool), "");
  pool.attrs.stride[1] = 1;  // then the output would be 4 x 7
  EXPECT_NE(op_refusal(pool), "");
}

TEST(OpRefusal, KindsWithoutACudaImplementationSaySo) {
  auto x = contiguous(F32, {1, 1, 4, 4});
  std::string why = op_refusal(op(NNRT_OP_BATCHNORM, 0, {x}, {x}));
  EXPECT_NE(why.find("no CUDA implementation"), std::string::npos) << why;
}

}  // namespace
}  // namespace nnrt::cudnn
