// Convolution descriptors -> cuDNN graph parameters, checked without a handle or a GPU.
#include "conv_params.h"

#include <gtest/gtest.h>

#include <cstring>

#include "descriptors.h"

namespace nnrt::cudnn {
namespace {

using test::contiguous;

nnrt_op_desc conv(int32_t kind, std::initializer_list<nnrt_tensor_desc> in, std::initializer_list<nnrt_tensor_desc> out,
                  int32_t stride = 1, int32_t pad = 0) {
  nnrt_op_desc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.kind = kind;
  for (const auto &t : in) d.inputs[d.n_inputs++] = t;
  for (const auto &t : out) d.outputs[d.n_outputs++] = t;
  d.attrs.groups = 1;
  d.attrs.stride[0] = d.attrs.stride[1] = stride;
  d.attrs.dilation[0] = d.attrs.dilation[1] = 1;
  for (int i = 0; i < 4; ++i) d.attrs.pad[i] = pad;
  return d;
}

const int32_t F32 = NNRT_DTYPE_F32;

TEST(ConvParams, LeNetsFirstConvolutionWithBiasAndRelu) {
  nnrt_op_desc d = conv(NNRT_OP_CONV2D, {contiguous(F32, {64, 1, 28, 28}), contiguous(F32, {20, 1, 5, 5}),
                                         contiguous(F32, {20})},
                        {contiguous(F32, {64, 20, 24, 24})});
  d.attrs.fused = NNRT_UNARY_RELU;
  ConvParams p;
  ASSERT_EQ(translate_conv(d, &p), "");
  EXPECT_EQ(p.data_type, CUDNN_DATA_FLOAT);
  EXPECT_EQ(p.compute_type, CUDNN_DATA_FLOAT);
  EXPECT_EQ(p.x.dims[1], 1);
  EXPECT_EQ(p.x.strides[0], 784);
  EXPECT_EQ(p.w.dims[0], 20);
  EXPECT_EQ(p.y.strides[1], 576);
  EXPECT_TRUE(p.bias);
  EXPECT_EQ(p.post_activation, NNRT_UNARY_RELU);
  EXPECT_EQ(p.stride[0], 1);
  EXPECT_EQ(p.pre_padding[0], 0);
}

TEST(ConvParams, StridePaddingAndDilationAreCheckedAgainstTheOutput) {
  // 28 + 1 + 2 = 31 padded, a 3-tap kernel dilated by 2 spans 5: (31 - 5) / 2 + 1 = 14 rows;
  // columns: 28 + 1 + 1 - 5 = 25, / 2 + 1 = 13.
  nnrt_op_desc d = conv(NNRT_OP_CONV2D, {contiguous(F32, {2, 4, 28, 28}), contiguous(F32, {8, 4, 3, 3})},
                        {contiguous(F32, {2, 8, 14, 13})}, 2);
  d.attrs.dilation[0] = d.attrs.dilation[1] = 2;
  d.attrs.pad[0] = 1;  // top
  d.attrs.pad[1] = 1;  // left
  d.attrs.pad[2] = 2;  // bottom
  d.attrs.pad[3] = 1;  // right
  ConvParams p;
  ASSERT_EQ(translate_conv(d, &p), "");
  EXPECT_EQ(p.pre_padding[0], 1);
  EXPECT_EQ(p.pre_padding[1], 1);
  EXPECT_EQ(p.post_padding[0], 2);
  EXPECT_EQ(p.post_padding[1], 1);
  EXPECT_EQ(p.dilation[1], 2);
  d.outputs[0] = contiguous(F32, {2, 8, 14, 14});
  EXPECT_NE(translate_conv(d, &p), "");
}

TEST(ConvParams, GroupsMustDivideTheChannels) {
  nnrt_op_desc d = conv(NNRT_OP_CONV2D, {contiguous(F32, {1, 6, 5, 5}), contiguous(F32, {4, 3, 3, 3})},
                        {contiguous(F32, {1, 4, 3, 3})});
  d.attrs.groups = 2;
  ConvParams p;
  EXPECT_EQ(translate_conv(d, &p), "");
  d.attrs.groups = 3;
  EXPECT_NE(translate_conv(d, &p), "");
}

TEST(ConvParams, GradientsMapTheirOperandsAndBiasGradient) {
  ConvParams p;
  nnrt_op_desc data = conv(NNRT_OP_CONV2D_BACKWARD_DATA, {contiguous(F32, {64, 50, 4, 4}), contiguous(F32, {50, 20, 5, 5})},
                           {contiguous(F32, {64, 20, 12, 12})}, 2);
  ASSERT_EQ(translate_conv(data, &p), "");
  EXPECT_EQ(p.x.dims[2], 12);  // dx
  EXPECT_EQ(p.y.dims[1], 50);  // dy
  nnrt_op_desc weights = conv(NNRT_OP_CONV2D_BACKWARD_WEIGHTS, {contiguous(F32, {64, 20, 12, 12}),
                                                                contiguous(F32, {64, 50, 4, 4})},
                              {contiguous(F32, {50, 20, 5, 5}), contiguous(F32, {50})}, 2);
  ASSERT_EQ(translate_conv(weights, &p), "");
  EXPECT_TRUE(p.bias_gradient);
  weights.attrs.fused = NNRT_UNARY_RELU;
  EXPECT_NE(translate_conv(weights, &p), "");
}

TEST(ConvParams, HalfPrecisionComputesInF32AndMixedDtypesAreRefused) {
  ConvParams p;
  const int32_t H = NNRT_DTYPE_F16;
  nnrt_op_desc d = conv(NNRT_OP_CONV2D, {contiguous(H, {1, 2, 4, 4}), contiguous(H, {2, 2, 3, 3})},
                        {contiguous(H, {1, 2, 2, 2})});
  ASSERT_EQ(translate_conv(d, &p), "");
  EXPECT_EQ(p.data_type, CUDNN_DATA_HALF);
  EXPECT_EQ(p.compute_type, CUDNN_DATA_FLOAT);
  EXPECT_EQ(p.alignment, 2);
  d.inputs[1].dtype = F32;
  EXPECT_NE(translate_conv(d, &p), "");
}

}  // namespace
}  // namespace nnrt::cudnn
