// How a CONV2D, CONV2D_BACKWARD_DATA or CONV2D_BACKWARD_WEIGHTS descriptor becomes a cuDNN graph
// of one convolution operation: pure translation, unit-tested without a GPU.
//
// cuDNN takes nnrt's NCHW dims and element strides as they are, the filter as [O, C/groups, KH,
// KW] (cuDNN infers the groups from x's channels), nnrt's padding as pre- (top, left) and post-
// (bottom, right) paddings, and cross-correlation mode (what deep learning calls convolution). A
// forward op's bias and fused activation, and a weights gradient's bias gradient, run as this
// backend's own kernels on the result.
#pragma once

#include <cudnn.h>

#include <string>

#include "nnrt/nnrt_backend.h"

namespace nnrt::cudnn {

struct CudnnTensor {
  int64_t dims[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
};

struct ConvParams {
  cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
  cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
  int64_t alignment = 4;  // bytes cuDNN may assume for every pointer: the element size (views may be offset)
  CudnnTensor x, w, y;    // x (or dx), w (or dw), y (or dy)
  int64_t pre_padding[2] = {0, 0}, post_padding[2] = {0, 0}, stride[2] = {1, 1}, dilation[2] = {1, 1};
  bool bias = false;            // CONV2D: add input 2 along the channels afterwards
  int32_t post_activation = 0;  // CONV2D: nnrt_unary_alg applied afterwards
  bool bias_gradient = false;   // CONV2D_BACKWARD_WEIGHTS: output 1 = sum of dy over N, H, W
};

// Fills *p; returns "" or why the descriptor is not one cuDNN convolution.
std::string translate_conv(const nnrt_op_desc &desc, ConvParams *p);

}  // namespace nnrt::cudnn
