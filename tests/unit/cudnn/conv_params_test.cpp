// Convolution descriptors -> cuDNN graph parameters, checked without a handle or a GPU.
#include "conv_params.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "descriptors.h"

namespace nnrt::cudnn {
namespace {

using test::contiguous;
using test::tensor;
using gpu_index = kernels::StridedIndex<2>;

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

// What cuDNN was seen to get wrong on an H100 (a filter with H and W swapped in memory, padded rows)
// goes through a packed NCHW buffer; packed NCHW and packed NHWC go to cuDNN as they are.
TEST(ConvParams, OnlyPackedNchwAndNhwcReachCudnnOtherLayoutsAreStaged) {
  const nnrt_tensor_desc x_nhwc = tensor(F32, {2, 3, 6, 5}, {90, 1, 15, 3});
  const nnrt_tensor_desc w_hw_swapped = tensor(F32, {4, 3, 3, 2}, {18, 6, 1, 3});
  const nnrt_tensor_desc y_padded = tensor(F32, {2, 4, 4, 4}, {100, 25, 6, 1});
  nnrt_op_desc d = conv(NNRT_OP_CONV2D, {x_nhwc, w_hw_swapped}, {y_padded});
  ConvParams p;
  ASSERT_EQ(translate_conv(d, &p), "");
  EXPECT_FALSE(p.x.staged);
  EXPECT_EQ(p.x.strides[1], 1);  // NHWC reaches cuDNN as it is
  EXPECT_TRUE(p.w.staged);
  const int64_t packed_w[4] = {18, 6, 2, 1}, own_w[4] = {18, 6, 1, 3};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(p.w.strides[i], packed_w[i]) << i;
    EXPECT_EQ(p.w.own_strides[i], own_w[i]) << i;
  }
  EXPECT_TRUE(p.y.staged);
  EXPECT_EQ(p.y.strides[0], 64);
  EXPECT_EQ(p.y.own_strides[2], 6);
  EXPECT_EQ(p.y.elements(), 128);

  // A dim of size 1 may carry any stride and stays packed.
  d = conv(NNRT_OP_CONV2D, {tensor(F32, {1, 1, 4, 4}, {7, 99, 4, 1}), contiguous(F32, {1, 1, 3, 3})},
           {contiguous(F32, {1, 1, 2, 2})});
  ASSERT_EQ(translate_conv(d, &p), "");
  EXPECT_FALSE(p.x.staged);
  EXPECT_FALSE(p.w.staged);
  EXPECT_FALSE(p.y.staged);
}

// The staging copies, run on the host through the same index maps and offsets as the GPU's copy
// kernel: an input lands in packed NCHW order, the output goes back to its own strides and leaves
// the gaps between its rows alone.
TEST(ConvParams, StagingCopiesMapTheCallersLayoutToPackedNchwAndBack) {
  const nnrt_tensor_desc w_hw_swapped = tensor(F32, {4, 3, 3, 2}, {18, 6, 1, 3});
  const nnrt_tensor_desc y_padded = tensor(F32, {2, 4, 4, 4}, {100, 25, 6, 1});
  nnrt_op_desc d = conv(NNRT_OP_CONV2D, {contiguous(F32, {2, 3, 6, 5}), w_hw_swapped}, {y_padded});
  ConvParams p;
  ASSERT_EQ(translate_conv(d, &p), "");
  auto copy = [](const gpu_index &index, int64_t count, float *dst, const float *src) {
    for (int64_t i = 0; i < count; ++i) {
      int64_t offsets[2];
      kernels::strided_offsets<2>(index, i, offsets);
      dst[offsets[0]] = src[offsets[1]];
    }
  };
  // w, an input: element (o, c, h, w) is at o*18 + c*6 + h + w*3 in the caller's layout.
  std::vector<float> own(72), packed(72, -1.0f);
  for (int64_t o = 0; o < 4; ++o)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t w = 0; w < 2; ++w) own[o * 18 + c * 6 + h + w * 3] = static_cast<float>(((o * 3 + c) * 3 + h) * 2 + w);
  gpu_index index;
  ASSERT_EQ(staging_index(p.w, false, &index), 72);
  copy(index, 72, packed.data(), own.data());
  for (int64_t i = 0; i < 72; ++i) EXPECT_EQ(packed[i], static_cast<float>(i)) << i;
  // y, the output: from packed NCHW back to rows 6 apart, planes 25 apart, images 100 apart.
  std::vector<float> y_packed(128), y_own(200, -1.0f);
  for (int64_t i = 0; i < 128; ++i) y_packed[i] = static_cast<float>(i);
  ASSERT_EQ(staging_index(p.y, true, &index), 128);
  copy(index, 128, y_own.data(), y_packed.data());
  int64_t written = 0;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 4; ++c)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t w = 0; w < 4; ++w, ++written)
          EXPECT_EQ(y_own[n * 100 + c * 25 + h * 6 + w], static_cast<float>(((n * 4 + c) * 4 + h) * 4 + w));
  int64_t untouched = 0;
  for (float v : y_own) untouched += v == -1.0f;
  EXPECT_EQ(untouched, 200 - written);
}

// A weights gradient with asymmetric padding (the shape cuDNN got wrong on an H100: 2 rows of
// padding above a 1-row input, 1 below) gets x in a zeroed buffer with the padding written out
// around it, and cuDNN no padding; the output extent is the same either way.
TEST(ConvParams, AsymmetricPaddingOfAWeightsGradientIsWrittenOutAroundX) {
  nnrt_op_desc d = conv(NNRT_OP_CONV2D_BACKWARD_WEIGHTS, {contiguous(F32, {3, 2, 1, 4}), contiguous(F32, {3, 4, 1, 1})},
                        {contiguous(F32, {4, 1, 3, 2})}, 2);
  d.attrs.groups = 2;
  d.attrs.dilation[1] = 2;
  d.attrs.pad[0] = 2;  // top
  d.attrs.pad[2] = 1;  // bottom
  ConvParams p;
  ASSERT_EQ(translate_conv(d, &p), "");
  EXPECT_TRUE(p.x.staged);
  EXPECT_TRUE(p.x.zero_filled);
  const int64_t dims[4] = {3, 2, 4, 4}, strides[4] = {32, 16, 4, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(p.x.dims[i], dims[i]) << i;
    EXPECT_EQ(p.x.strides[i], strides[i]) << i;
  }
  EXPECT_EQ(p.x.first, 8);  // row 2, column 0
  for (int i = 0; i < 2; ++i) EXPECT_EQ(p.pre_padding[i] + p.post_padding[i], 0) << i;
  EXPECT_FALSE(p.y.staged);
  gpu_index index;
  ASSERT_EQ(staging_index(p.x, false, &index), 24);
  std::vector<float> padded(96, 0.0f);
  for (int64_t i = 0; i < 24; ++i) {
    int64_t offsets[2];
    kernels::strided_offsets<2>(index, i, offsets);
    padded[p.x.first + offsets[0]] = static_cast<float>(offsets[1] + 1);
  }
  for (int64_t plane = 0; plane < 6; ++plane)
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 4; ++c)
        EXPECT_EQ(padded[plane * 16 + r * 4 + c], r == 2 ? static_cast<float>(plane * 4 + c + 1) : 0.0f)
            << plane << " " << r << " " << c;

  // Symmetric padding, and a forward convolution's asymmetric padding, go to cuDNN as they are.
  d.attrs.pad[2] = 2;
  d.inputs[1] = contiguous(F32, {3, 4, 2, 1});
  ASSERT_EQ(translate_conv(d, &p), "");
  EXPECT_FALSE(p.x.staged);
  EXPECT_EQ(p.post_padding[0], 2);
}

TEST(ConvParams, EnginesThatRoundF32OrDownConvertAreRefused) {
  ConvParams f32;
  ConvParams f16;
  f16.data_type = CUDNN_DATA_HALF;
  const cudnnBackendNumericalNote_t tensor_core[1] = {CUDNN_NUMERICAL_NOTE_TENSOR_CORE};
  const cudnnBackendNumericalNote_t down_convert[1] = {CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS};
  const cudnnBackendNumericalNote_t nondeterministic[2] = {CUDNN_NUMERICAL_NOTE_WINOGRAD,
                                                           CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC};
  EXPECT_EQ(engine_refusal(f32, nullptr, 0, true), "");
  EXPECT_NE(engine_refusal(f32, tensor_core, 1, false), "");  // TF32
  EXPECT_EQ(engine_refusal(f16, tensor_core, 1, false), "");
  EXPECT_NE(engine_refusal(f16, down_convert, 1, false), "");
  EXPECT_EQ(engine_refusal(f32, nondeterministic, 2, false), "");
  EXPECT_NE(engine_refusal(f32, nondeterministic, 2, true), "");
}

}  // namespace
}  // namespace nnrt::cudnn
