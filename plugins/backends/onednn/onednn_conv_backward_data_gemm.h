// The backward-data convolution of channels-last tensors as one product over the whole batch and
// a col2im, a candidate beside oneDNN's own primitives (onednn_conv.cpp measures both).
//
// dX's columns, dcol [N*OH*OW, KH*KW*C] = dY [N*OH*OW, O] x W [O, KH*KW*C] (W in OHWI), are then
// added into dX image by image. oneDNN 2.6's gemm-based kernel for NHWC runs one small product
// per image instead: LeNet's conv2 (20 -> 50 channels, 5x5, stride 2, 12x12 -> 4x4, batch 64;
// AVX2 AMD EPYC) took 679-785 us at 2 threads and 1245 at 1, against 362-378 and 745 this way.
#pragma once

#include <functional>

#include "onednn_common.h"

namespace nnrt::onednn {

class GemmBackwardData {
 public:
  // Whether the op can take this path: f32, one group, no dilation, dY and dX dense channels-last,
  // and dcol no larger than kMaxColumnBytes.
  static bool applies(const nnrt_op_desc &d);
  static constexpr size_t kMaxColumnBytes = size_t{64} << 20;

  // Builds the weights' reorder and the product; their buffers go into `layout`.
  GemmBackwardData(const nnrt_op_desc &d, WorkspaceLayout &layout);

  void run(const Run &r) const;
  // A timer for onednn_measure.h: each call runs this path once on scratch data of the op's sizes
  // and returns the seconds. The scratch data is made at the first call, which also runs once
  // untimed. Must not outlive this object.
  std::function<double()> scratch_timer() const;

 private:
  // Adds dX's columns into dX, which it first zeroes.
  void col2im(const float *dcol, float *dx) const;

  int64_t n_, c_, h_, w_, o_, oh_, ow_, kh_, kw_, stride_h_, stride_w_, pad_t_, pad_l_;
  md w_user_, w_ohwi_, dy_rows_, w_rows_, dcol_rows_;
  Bridge weights_;
  int dcol_slot_ = -1;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul matmul_;
};

}  // namespace nnrt::onednn
