// A 2-d convolution's input gradient computed one dx element at a time, shared by the CPU tests and
// the GPU backend: dx[n, c, ih, iw] is the sum of w[o, c % cg, kh, kw] * dy[n, o, oh, ow] over the
// output channels o of c's group and the taps (kh, kw) whose window at (oh, ow) reads (ih, iw).
//
// These are exactly the products the CPU's im2col-gradient-and-col2im adds into that element, so a
// non-finite weight reaches only the elements it multiplies into. The GPU backend runs this where
// cuDNN cannot be trusted with non-finite filters: its engines compute dx as a convolution of dy
// with zeros inserted (strides) and around it (padding), where 0 * inf and 0 * NaN put NaN into
// elements the weight never touches.
#pragma once

#include "nnrt/kernels/kernel_common.h"

namespace nnrt::kernels {

struct Conv2dGeometry {
  int64_t n, c, h, w;  // dx
  int64_t o, kh, kw;   // w is [o, c / groups, kh, kw]
  int64_t oh, ow;      // dy is [n, o, oh, ow]
  int64_t groups, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w;
};

// The output position along one axis whose window reads input position i through kernel tap k,
// in *out; false when none does (between strides, or outside [0, out_size)).
NNRT_HD bool conv_reader(int64_t i, int64_t k, int64_t pad, int64_t dilation, int64_t stride, int64_t out_size,
                         int64_t *out) {
  const int64_t t = i + pad - k * dilation;
  if (t < 0 || t % stride != 0) return false;
  *out = t / stride;
  return *out < out_size;
}

// dx[n, c, ih, iw], accumulated in C in the order (o, kh, kw); dy_at(n, o, oh, ow) and
// w_at(o, ci, kh, kw) load one element as C.
template <class C, class DyAt, class WAt>
NNRT_HD C conv2d_input_gradient(const Conv2dGeometry &g, int64_t n, int64_t c, int64_t ih, int64_t iw, DyAt dy_at,
                                WAt w_at) {
  const int64_t cg = g.c / g.groups, og = g.o / g.groups, group = c / cg, ci = c % cg;
  C acc = C(0);
  for (int64_t o = group * og; o < (group + 1) * og; ++o)
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      int64_t oh;
      if (!conv_reader(ih, kh, g.pad_top, g.dilation_h, g.stride_h, g.oh, &oh)) continue;
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        int64_t ow;
        if (!conv_reader(iw, kw, g.pad_left, g.dilation_w, g.stride_w, g.ow, &ow)) continue;
        acc += w_at(o, ci, kh, kw) * dy_at(n, o, oh, ow);
      }
    }
  return acc;
}

}  // namespace nnrt::kernels
