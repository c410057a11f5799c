// How a CONV2D, CONV2D_BACKWARD_DATA or CONV2D_BACKWARD_WEIGHTS descriptor becomes a cuDNN graph
// of one convolution operation: pure translation, unit-tested without a GPU.
//
// cuDNN takes nnrt's NCHW dims and element strides as they are, the filter as [O, C/groups, KH,
// KW] (cuDNN infers the groups from x's channels), nnrt's padding as pre- (top, left) and post-
// (bottom, right) paddings, and cross-correlation mode (what deep learning calls convolution). A
// forward op's bias and fused activation, and a weights gradient's bias gradient, run as this
// backend's own kernels on the result.
//
// cuDNN is given only packed NCHW or packed NHWC tensors. On an H100 (cuDNN 9.14) engines accepted
// filters whose H and W were swapped in memory, and a gradient with padded rows, and computed wrong
// results from them. An operand in any other layout is staged: copied into a packed NCHW buffer in
// the op's workspace before cuDNN runs (inputs), or out of one after (the output).
//
// A weights gradient with asymmetric padding (top != bottom or left != right) gets x staged with
// the padding written out as zeros and cuDNN told of none: on an H100 (cuDNN 9.14) engines computed
// wrong weights gradients from asymmetric pre- and post-paddings (44 cases over 60 conformance seeds).
//
// f32 convolutions keep f32 precision, as matmul does: no engine on tensor cores (which round the
// inputs to TF32's 10-bit mantissa) and none that down-converts its inputs.
#pragma once

#include <cudnn.h>

#include <string>

#include "nnrt/kernels/strided_index.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::cudnn {

struct CudnnTensor {
  int64_t dims[4] = {0, 0, 0, 0};         // as cuDNN sees them: own_dims, or with the padding written out
  int64_t strides[4] = {0, 0, 0, 0};      // as cuDNN sees them: own_strides, or packed NCHW if staged
  int64_t own_dims[4] = {0, 0, 0, 0};     // the operand's, from the descriptor
  int64_t own_strides[4] = {0, 0, 0, 0};
  bool staged = false;                    // neither packed NCHW nor packed NHWC: copied through the workspace
  bool zero_filled = false;               // staged into a zeroed buffer, inside padding written as zeros
  int64_t first = 0;                      // the element of the packed buffer the operand's first goes to
  int64_t elements() const { return dims[0] * dims[1] * dims[2] * dims[3]; }
};

struct ConvParams {
  cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
  cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
  int64_t alignment = 4;  // bytes cuDNN may assume for every pointer: the element size (views may be offset)
  int64_t element_bytes = 4;
  CudnnTensor x, w, y;    // x (or dx), w (or dw), y (or dy)
  int64_t pre_padding[2] = {0, 0}, post_padding[2] = {0, 0}, stride[2] = {1, 1}, dilation[2] = {1, 1};
  bool bias = false;            // CONV2D: add input 2 along the channels afterwards
  int32_t post_activation = 0;  // CONV2D: nnrt_unary_alg applied afterwards
  bool bias_gradient = false;   // CONV2D_BACKWARD_WEIGHTS: output 1 = sum of dy over N, H, W
};

// Fills *p; returns "" or why the descriptor is not one cuDNN convolution.
std::string translate_conv(const nnrt_op_desc &desc, ConvParams *p);

// The index map of the copy that stages t (operand 0 the destination, 1 the source): into its
// packed buffer (from element t.first on) for an input, out of it into the caller's layout for the
// output. Returns the count.
int64_t staging_index(const CudnnTensor &t, bool output, kernels::StridedIndex<2> *index);

// "" if an engine with these numerical notes may run the convolution, else why not (see above; in
// deterministic mode, engines marked nondeterministic are refused too).
std::string engine_refusal(const ConvParams &p, const cudnnBackendNumericalNote_t *notes, int64_t count,
                           bool deterministic);

}  // namespace nnrt::cudnn
