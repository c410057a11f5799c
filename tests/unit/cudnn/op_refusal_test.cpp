// Which descriptors the cuDNN backend takes (supports() answers from these rules, without a GPU),
// and that what it refuses comes with a reason, so that it falls back to the reference backend.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

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

TEST(OpRefusal, ArgReduceTakesNumericLinesIntoI64) {
  const int32_t I64 = NNRT_DTYPE_I64;
  nnrt_op_desc arg = op(NNRT_OP_ARGREDUCE, NNRT_ARG_MAX, {contiguous(F32, {4, 5})}, {contiguous(I64, {4, 1})});
  arg.attrs.axis = 1;
  EXPECT_EQ(op_refusal(arg), "");
  for (int32_t dtype : {int32_t{NNRT_DTYPE_F64}, int32_t{NNRT_DTYPE_F16}, int32_t{NNRT_DTYPE_BF16},
                        int32_t{NNRT_DTYPE_I32}, I64, int32_t{NNRT_DTYPE_U8}}) {
    arg.inputs[0].dtype = dtype;
    EXPECT_EQ(op_refusal(arg), "") << "dtype " << dtype;
  }
  arg.inputs[0].dtype = NNRT_DTYPE_BOOL;
  EXPECT_NE(op_refusal(arg), "");
  arg.inputs[0].dtype = F32;
  arg.outputs[0].dtype = NNRT_DTYPE_I32;  // indices are I64
  EXPECT_NE(op_refusal(arg), "");
  arg.outputs[0].dtype = I64;
  arg.attrs.axis = 0;  // y would be [1, 5]
  EXPECT_NE(op_refusal(arg), "");
  arg.attrs.axis = 2;
  EXPECT_NE(op_refusal(arg), "");
  arg.attrs.axis = 1;
  arg.attrs.alg = 7;
  EXPECT_NE(op_refusal(arg), "");
  nnrt_op_desc empty = op(NNRT_OP_ARGREDUCE, NNRT_ARG_MIN, {contiguous(F32, {3, 0})}, {contiguous(I64, {3, 1})});
  empty.attrs.axis = 1;
  EXPECT_NE(op_refusal(empty), "");  // no index: the reference backend reports the error
}

TEST(OpRefusal, GatherAndScatterAddCheckRowsAndIndices) {
  auto table = contiguous(F32, {10, 3});
  auto indices = contiguous(NNRT_DTYPE_I32, {2, 4});
  auto rows = contiguous(F32, {2, 4, 3});
  EXPECT_EQ(op_refusal(op(NNRT_OP_GATHER, 0, {table, indices}, {rows})), "");
  EXPECT_EQ(op_refusal(op(NNRT_OP_SCATTER_ADD, 0, {rows, indices}, {table})), "");
  // GATHER copies any dtype; SCATTER_ADD sums floats only.
  auto int_table = contiguous(NNRT_DTYPE_I64, {10, 3});
  auto int_rows = contiguous(NNRT_DTYPE_I64, {2, 4, 3});
  EXPECT_EQ(op_refusal(op(NNRT_OP_GATHER, 0, {int_table, indices}, {int_rows})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_SCATTER_ADD, 0, {int_rows, indices}, {int_table})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_GATHER, 0, {table, contiguous(F32, {2, 4})}, {rows})), "");  // float indices
  EXPECT_NE(op_refusal(op(NNRT_OP_GATHER, 0, {table, indices}, {contiguous(F32, {2, 4, 2})})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_GATHER, 0, {table, indices}, {contiguous(F32, {8, 3})})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_GATHER, 0, {table, indices}, {contiguous(NNRT_DTYPE_F16, {2, 4, 3})})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_SCATTER_ADD, 0, {rows, indices}, {contiguous(F32, {10, 3, 1})})), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_SCATTER_ADD, 0, {rows}, {table})), "");
}

TEST(OpRefusal, BatchnormChecksItsChannelVectors) {
  auto x = contiguous(NNRT_DTYPE_BF16, {8, 3, 5, 5});
  auto c = contiguous(F32, {3});
  nnrt_op_desc train = op(NNRT_OP_BATCHNORM, 0, {x, c, c}, {x, c, c});
  train.attrs.flags = NNRT_FLAG_TRAINING;
  train.attrs.eps = 1e-5;
  EXPECT_EQ(op_refusal(train), "");
  nnrt_op_desc infer = op(NNRT_OP_BATCHNORM, 0, {x, c, c, c, c}, {x});
  EXPECT_EQ(op_refusal(infer), "");
  nnrt_op_desc backward = op(NNRT_OP_BATCHNORM_BACKWARD, 0, {x, x, c, c, c}, {x, c, c});
  EXPECT_EQ(op_refusal(backward), "");
  EXPECT_NE(op_refusal(op(NNRT_OP_BATCHNORM, 0, {x, c, c}, {x, c, c})), "");  // inference takes 5 inputs
  train.inputs[1] = contiguous(F32, {4});  // gamma [C] with the wrong C
  EXPECT_NE(op_refusal(train), "");
  train.inputs[1] = contiguous(NNRT_DTYPE_BF16, {3});  // the vectors are F32 whatever x is
  EXPECT_NE(op_refusal(train), "");
  train.inputs[1] = c;
  train.attrs.eps = -1;
  EXPECT_NE(op_refusal(train), "");
  backward.inputs[1] = contiguous(NNRT_DTYPE_BF16, {8, 3, 5, 4});
  EXPECT_NE(op_refusal(backward), "");
  auto vector = contiguous(F32, {3});
  EXPECT_NE(op_refusal(op(NNRT_OP_BATCHNORM, 0, {vector, c, c, c, c}, {vector})), "");  // rank >= 2
  EXPECT_NE(op_refusal(op(NNRT_OP_BATCHNORM, 0, {contiguous(NNRT_DTYPE_I32, {2, 3}), c, c, c, c},
                          {contiguous(NNRT_DTYPE_I32, {2, 3})})), "");
}

TEST(OpRefusal, EveryOpKindIsKnown) {
  // Unknown kinds are refused with a reason; every known kind reaches its family's own checks.
  auto x = contiguous(F32, {4});
  std::string why = op_refusal(op(NNRT_OP_KIND_COUNT, 0, {x}, {x}));
  EXPECT_NE(why.find("not an nnrt_op_kind"), std::string::npos) << why;
  for (int32_t kind = 1; kind < NNRT_OP_KIND_COUNT; ++kind) {
    why = op_refusal(op(kind, 0, {}, {}));
    EXPECT_EQ(why.find("not an nnrt_op_kind"), std::string::npos) << "kind " << kind << ": " << why;
  }
}

TEST(OpRefusal, KindsWithoutACudaKernelSaySo) {
  // The kinds this version runs on the reference backend on a GPU context: every other kind has
  // a CUDA implementation. A kind that gains one leaves this list.
  auto x = contiguous(F32, {4});
  const std::set<int32_t> without{NNRT_OP_LAYERNORM, NNRT_OP_LAYERNORM_BACKWARD, NNRT_OP_QUANTIZE, NNRT_OP_MATMUL_INT8,
                                  NNRT_OP_CONV2D_INT8, NNRT_OP_ATTENTION, NNRT_OP_ATTENTION_BACKWARD};
  for (int32_t kind : without) {
    std::string why = op_refusal(op(kind, NNRT_NORM_LAYER, {x}, {x}));
    EXPECT_NE(why.find("has no CUDA kernel"), std::string::npos) << "kind " << kind << ": " << why;
  }
  for (int32_t kind = 1; kind < NNRT_OP_KIND_COUNT; ++kind) {
    if (without.count(kind)) continue;
    std::string why = op_refusal(op(kind, 0, {}, {}));
    EXPECT_EQ(why.find("has no CUDA kernel"), std::string::npos) << "kind " << kind << ": " << why;
  }
}

}  // namespace
}  // namespace nnrt::cudnn
