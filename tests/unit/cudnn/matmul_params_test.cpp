// MATMUL descriptors -> cuBLASLt parameters, checked without a handle or a GPU.
#include "matmul_params.h"

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>

#include "descriptors.h"

namespace nnrt::cudnn {
namespace {

using test::contiguous;
using test::tensor;

nnrt_op_desc matmul(nnrt_tensor_desc a, nnrt_tensor_desc b, nnrt_tensor_desc c) {
  nnrt_op_desc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.kind = NNRT_OP_MATMUL;
  d.n_inputs = 2;
  d.n_outputs = 1;
  d.inputs[0] = a;
  d.inputs[1] = b;
  d.outputs[0] = c;
  return d;
}

const int32_t F32 = NNRT_DTYPE_F32;

TEST(MatmulParams, RowMajorProductIsTheTransposedColumnMajorProduct) {
  // a [2,3] b [3,4] c [2,4], all contiguous.
  MatmulParams p;
  nnrt_op_desc d = matmul(tensor(F32, {2, 3}, {3, 1}), tensor(F32, {3, 4}, {4, 1}), tensor(F32, {2, 4}, {4, 1}));
  ASSERT_EQ(translate_matmul(d, false, &p), "");
  EXPECT_EQ(p.m, 2);
  EXPECT_EQ(p.n, 4);
  EXPECT_EQ(p.k, 3);
  // cuBLASLt A = b^T stored column-major: 4 x 3, ld 4, no transpose.
  EXPECT_FALSE(p.a.transpose);
  EXPECT_EQ(p.a.rows, 4u);
  EXPECT_EQ(p.a.cols, 3u);
  EXPECT_EQ(p.a.ld, 4);
  // cuBLASLt B = a^T: 3 x 2, ld 3.
  EXPECT_FALSE(p.b.transpose);
  EXPECT_EQ(p.b.rows, 3u);
  EXPECT_EQ(p.b.cols, 2u);
  EXPECT_EQ(p.b.ld, 3);
  // D = c^T: 4 x 2, ld 4.
  EXPECT_EQ(p.d.rows, 4u);
  EXPECT_EQ(p.d.cols, 2u);
  EXPECT_EQ(p.d.ld, 4);
  EXPECT_EQ(p.batch, 1);
  EXPECT_EQ(p.compute_type, CUBLAS_COMPUTE_32F);  // no TF32 unless asked
  EXPECT_EQ(p.epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(p.post_activation, 0);
  ASSERT_EQ(translate_matmul(d, true, &p), "");
  EXPECT_EQ(p.compute_type, CUBLAS_COMPUTE_32F_FAST_TF32);
}

TEST(MatmulParams, TransposedViewsUseTheTransposeOp) {
  // a = x^T for x [3,2] (strides 1, 3); b = y^T for y [4,3] (strides 1, 4... of y: [3,1]).
  MatmulParams p;
  nnrt_op_desc d = matmul(tensor(F32, {2, 3}, {1, 2}), tensor(F32, {3, 4}, {1, 3}), tensor(F32, {2, 4}, {4, 1}));
  ASSERT_EQ(translate_matmul(d, false, &p), "");
  EXPECT_TRUE(p.a.transpose);
  EXPECT_EQ(p.a.rows, 3u);
  EXPECT_EQ(p.a.cols, 4u);
  EXPECT_EQ(p.a.ld, 3);
  EXPECT_TRUE(p.b.transpose);
  EXPECT_EQ(p.b.rows, 2u);
  EXPECT_EQ(p.b.cols, 3u);
  EXPECT_EQ(p.b.ld, 2);
}

TEST(MatmulParams, BatchDimsMergeAndBroadcast) {
  // a [2,3,4,5], b broadcast over the batch [2,3,5,6] with batch strides 0, c [2,3,4,6].
  MatmulParams p;
  nnrt_op_desc d = matmul(tensor(F32, {2, 3, 4, 5}, {60, 20, 5, 1}), tensor(F32, {2, 3, 5, 6}, {0, 0, 6, 1}),
                          tensor(F32, {2, 3, 4, 6}, {72, 24, 6, 1}));
  ASSERT_EQ(translate_matmul(d, false, &p), "");
  EXPECT_EQ(p.batch, 6);
  EXPECT_EQ(p.b.batch_stride, 20);  // nnrt's a
  EXPECT_EQ(p.a.batch_stride, 0);   // nnrt's b, broadcast
  EXPECT_EQ(p.d.batch_stride, 24);
}

TEST(MatmulParams, BatchDimsThatDoNotMergeAreRefused) {
  MatmulParams p;
  // c's batch dims are padded: [2,3] with strides 100, 24 do not merge into one stride.
  nnrt_op_desc d = matmul(tensor(F32, {2, 3, 4, 5}, {60, 20, 5, 1}), tensor(F32, {2, 3, 5, 6}, {90, 30, 6, 1}),
                          tensor(F32, {2, 3, 4, 6}, {100, 24, 6, 1}));
  EXPECT_NE(translate_matmul(d, false, &p), "");
}

TEST(MatmulParams, BiasAndReluGoIntoTheEpilogue) {
  MatmulParams p;
  nnrt_op_desc d = matmul(tensor(F32, {2, 3}, {3, 1}), tensor(F32, {3, 4}, {4, 1}), tensor(F32, {2, 4}, {4, 1}));
  d.n_inputs = 3;
  d.inputs[2] = tensor(F32, {4}, {1});
  d.attrs.fused = NNRT_UNARY_RELU;
  ASSERT_EQ(translate_matmul(d, false, &p), "");
  EXPECT_TRUE(p.bias);
  EXPECT_EQ(p.epilogue, CUBLASLT_EPILOGUE_RELU_BIAS);
  EXPECT_EQ(p.post_activation, 0);
  d.attrs.fused = NNRT_UNARY_NONE;
  ASSERT_EQ(translate_matmul(d, false, &p), "");
  EXPECT_EQ(p.epilogue, CUBLASLT_EPILOGUE_BIAS);
}

TEST(MatmulParams, OtherActivationsRunAfterwardsGeluIncluded) {
  MatmulParams p;
  nnrt_op_desc d = matmul(tensor(F32, {2, 3}, {3, 1}), tensor(F32, {3, 4}, {4, 1}), tensor(F32, {2, 4}, {4, 1}));
  for (int32_t alg : {NNRT_UNARY_GELU, NNRT_UNARY_SIGMOID, NNRT_UNARY_LEAKY_RELU, NNRT_UNARY_TANH}) {
    d.attrs.fused = alg;
    ASSERT_EQ(translate_matmul(d, false, &p), "");
    EXPECT_EQ(p.epilogue, CUBLASLT_EPILOGUE_DEFAULT);  // cuBLASLt's GELU is the tanh approximation
    EXPECT_EQ(p.post_activation, alg);
  }
}

TEST(MatmulParams, HalfPrecisionAccumulatesInF32) {
  MatmulParams p;
  for (int32_t dt : {NNRT_DTYPE_F16, NNRT_DTYPE_BF16}) {
    nnrt_op_desc d = matmul(tensor(dt, {8, 16}, {16, 1}), tensor(dt, {16, 8}, {8, 1}), tensor(dt, {8, 8}, {8, 1}));
    ASSERT_EQ(translate_matmul(d, true, &p), "");
    EXPECT_EQ(p.data_type, dt == NNRT_DTYPE_F16 ? CUDA_R_16F : CUDA_R_16BF);
    EXPECT_EQ(p.compute_type, CUBLAS_COMPUTE_32F);
    EXPECT_EQ(p.scale_type, CUDA_R_32F);
  }
  nnrt_op_desc d = matmul(tensor(NNRT_DTYPE_F64, {2, 2}, {2, 1}), tensor(NNRT_DTYPE_F64, {2, 2}, {2, 1}),
                          tensor(NNRT_DTYPE_F64, {2, 2}, {2, 1}));
  ASSERT_EQ(translate_matmul(d, false, &p), "");
  EXPECT_EQ(p.compute_type, CUBLAS_COMPUTE_64F);
  EXPECT_EQ(p.scale_type, CUDA_R_64F);
}

TEST(MatmulParams, WhatOneCallCannotDoIsRefusedWithAReason) {
  MatmulParams p;
  // Neither dim of a is contiguous.
  EXPECT_NE(translate_matmul(matmul(tensor(F32, {2, 3}, {6, 2}), tensor(F32, {3, 4}, {4, 1}),
                                    tensor(F32, {2, 4}, {4, 1})), false, &p), "");
  // A column-major output.
  EXPECT_NE(translate_matmul(matmul(tensor(F32, {2, 3}, {3, 1}), tensor(F32, {3, 4}, {4, 1}),
                                    tensor(F32, {2, 4}, {1, 2})), false, &p), "");
  // Mixed dtypes, integer dtypes, disagreeing dims, K = 0.
  EXPECT_NE(translate_matmul(matmul(tensor(NNRT_DTYPE_F16, {2, 3}, {3, 1}), tensor(F32, {3, 4}, {4, 1}),
                                    tensor(F32, {2, 4}, {4, 1})), false, &p), "");
  EXPECT_NE(translate_matmul(matmul(tensor(NNRT_DTYPE_I32, {2, 3}, {3, 1}), tensor(NNRT_DTYPE_I32, {3, 4}, {4, 1}),
                                    tensor(NNRT_DTYPE_I32, {2, 4}, {4, 1})), false, &p), "");
  EXPECT_NE(translate_matmul(matmul(tensor(F32, {2, 3}, {3, 1}), tensor(F32, {2, 4}, {4, 1}),
                                    tensor(F32, {2, 4}, {4, 1})), false, &p), "");
  EXPECT_NE(translate_matmul(matmul(tensor(F32, {2, 0}, {0, 1}), tensor(F32, {0, 4}, {4, 1}),
                                    tensor(F32, {2, 4}, {4, 1})), false, &p), "");
}

TEST(MatmulAlignment, LargestPowerOfTwoUpTo256) {
  alignas(256) static char block[1024];
  EXPECT_EQ(pointer_alignment(block), 256u);
  EXPECT_EQ(pointer_alignment(block + 512), 256u);  // capped: cuBLASLt's default is the most it asks
  EXPECT_EQ(pointer_alignment(block + 4), 4u);      // one f32 into an allocation
  EXPECT_EQ(pointer_alignment(block + 2), 2u);      // one f16
  EXPECT_EQ(pointer_alignment(block + 48), 16u);
  EXPECT_EQ(pointer_alignment(block + 1), 1u);
}

TEST(MatmulAlignment, CublasOperandsAreNnrtsSwapped) {
  alignas(256) static char block[1024];
  // nnrt's a is cuBLASLt's B, nnrt's b its A, c its C and D.
  LtAlignment al = lt_alignment(block + 8, block + 32, block + 256);
  EXPECT_EQ(al.a, 32u);
  EXPECT_EQ(al.b, 8u);
  EXPECT_EQ(al.d, 256u);
  EXPECT_FALSE(al.is_default());
  EXPECT_TRUE(lt_alignment(block, block + 256, block + 512).is_default());
}

}  // namespace
}  // namespace nnrt::cudnn
