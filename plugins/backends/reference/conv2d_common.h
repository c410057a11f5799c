// What CONV2D, CONV2D_BACKWARD_DATA and CONV2D_BACKWARD_WEIGHTS share: the geometry (validated
// against the descriptor), and the index maps of implicit im2col.
//
// All three run on gemm.h without materializing the im2col matrix: the packers gather from x (or
// dy) directly. Per group g (Cg = C / groups input channels, Og = O / groups output channels):
//   a tap k in [0, Cg*KH*KW) is (c, kh, kw), row-major like w's last three dims;
//   a column j in [0, N*OH*OW) is (n, oh, ow), row-major like y's dims without O;
//   im2col(k, j) = x[n, g*Cg + c, oh*sh - pt + kh*dh, ow*sw - pl + kw*dw], 0 in the padding.
#pragma once

#include <stdint.h>

#include <vector>

#include "dtype.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::reference {

struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;  // x
  int64_t o = 0, kh = 0, kw = 0;       // w is [o, c / groups, kh, kw]
  int64_t oh = 0, ow = 0;              // y is [n, o, oh, ow]
  int64_t groups = 1, cg = 0, og = 0;  // channels per group
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0, dilation_h = 1, dilation_w = 1;

  int64_t taps() const { return cg * kh * kw; }     // the depth of the forward product
  int64_t positions() const { return oh * ow; }     // output positions per image
  int64_t columns() const { return n * oh * ow; }   // columns of the im2col matrix
};

// Checks x [N,C,H,W], w [O,C/groups,KH,KW] and y [N,O,OH,OW] against each other and the attributes
// (stride >= 1, dilation >= 1, pad >= 0, groups dividing C and O, OH and OW from the formula
// floor((H + pt + pb - dh*(KH-1) - 1) / sh) + 1). Names are for messages ("input x").
ConvGeometry make_conv_geometry(const nnrt_op_attrs &attrs, const nnrt_tensor_desc &x, const char *x_name,
                                const nnrt_tensor_desc &w, const char *w_name, const nnrt_tensor_desc &y,
                                const char *y_name);

// floor((in + pads - dilation*(kernel-1) - 1) / stride) + 1, or <= 0 when the window does not fit.
int64_t conv_output_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t dilation,
                         int64_t stride);

// Per tap k: the input channel within the group, the kernel row and column, and the row and column
// offsets of the tap in the input (with dilation).
struct ConvTaps {
  std::vector<int64_t> channel, kernel_row, kernel_col, dh, dw;

  explicit ConvTaps(const ConvGeometry &g) {
    const size_t n = static_cast<size_t>(g.taps());
    channel.resize(n);
    kernel_row.resize(n);
    kernel_col.resize(n);
    dh.resize(n);
    dw.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const int64_t kk = static_cast<int64_t>(k);
      channel[k] = kk / (g.kh * g.kw);
      kernel_row[k] = kk / g.kw % g.kh;
      kernel_col[k] = kk % g.kw;
      dh[k] = kernel_row[k] * g.dilation_h;
      dw[k] = kernel_col[k] * g.dilation_w;
    }
  }

  // Offsets of each tap in a 4-D tensor with these strides: in a filter of w (kernel positions), or
  // in x relative to a window's corner (dilated positions).
  std::vector<int64_t> filter_offsets(const int64_t *strides4) const {
    std::vector<int64_t> off(channel.size());
    for (size_t k = 0; k < channel.size(); ++k)
      off[k] = channel[k] * strides4[1] + kernel_row[k] * strides4[2] + kernel_col[k] * strides4[3];
    return off;
  }
  std::vector<int64_t> window_offsets(const int64_t *strides4) const {
    std::vector<int64_t> off(channel.size());
    for (size_t k = 0; k < channel.size(); ++k) off[k] = channel[k] * strides4[1] + dh[k] * strides4[2] + dw[k] * strides4[3];
    return off;
  }
};

// A column j = (n, oh, ow) of the im2col matrix, decoded: the image and the top-left corner of the
// window in x (which may lie in the padding).
struct ConvColumn {
  int64_t image, row0, col0, out_row, out_col;
};

inline ConvColumn conv_column(const ConvGeometry &g, int64_t j) {
  ConvColumn c;
  const int64_t pos = j % (g.oh * g.ow);
  c.image = j / (g.oh * g.ow);
  c.out_row = pos / g.ow;
  c.out_col = pos % g.ow;
  c.row0 = c.out_row * g.stride_h - g.pad_top;
  c.col0 = c.out_col * g.stride_w - g.pad_left;
  return c;
}

inline bool inside(int64_t i, int64_t n) { return static_cast<uint64_t>(i) < static_cast<uint64_t>(n); }

}  // namespace nnrt::reference
