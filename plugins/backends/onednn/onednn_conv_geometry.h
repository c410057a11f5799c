// A convolution's geometry as oneDNN takes it, shared by the float convolutions (onednn_conv.cpp)
// and the integer one (onednn_int8.cpp).
#pragma once

#include "onednn_common.h"

namespace nnrt::onednn {

struct ConvGeometry {
  dims strides, dilates, pad_l, pad_r;
  int64_t groups = 1;
  dims x_dims, w_dims, y_dims;  // w_dims is [G, O/G, C/G, KH, KW] when groups > 1
};

// Checks x [N,C,H,W], w [O,C/G,KH,KW] and y [N,O,OH,OW] against the attributes.
ConvGeometry conv_geometry(const nnrt_op_attrs &a, const nnrt_tensor_desc &x, const nnrt_tensor_desc &w,
                           const nnrt_tensor_desc &y);

// nnrt's weights [O, C/G, KH, KW] as oneDNN sees them: [G, O/G, C/G, KH, KW] when grouped.
md user_weights_desc(const nnrt_tensor_desc &w, const ConvGeometry &g, dt type);

}  // namespace nnrt::onednn
