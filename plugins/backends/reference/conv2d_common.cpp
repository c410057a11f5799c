#include "conv2d_common.h"

#include "errors.h"
#include "validate.h"

namespace nnrt::reference {

int64_t conv_output_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t dilation,
                         int64_t stride) {
  const int64_t span = in + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  if (span < 0) return 0;
  return span / stride + 1;
}

ConvGeometry make_conv_geometry(const nnrt_op_attrs &attrs, const nnrt_tensor_desc &x, const char *x_name,
                                const nnrt_tensor_desc &w, const char *w_name, const nnrt_tensor_desc &y,
                                const char *y_name) {
  expect_rank(x, x_name, 4);
  expect_rank(w, w_name, 4);
  expect_rank(y, y_name, 4);
  expect_attr(attrs.stride[0] >= 1 && attrs.stride[1] >= 1, "stride [%d, %d] must be >= 1", attrs.stride[0],
              attrs.stride[1]);
  expect_attr(attrs.dilation[0] >= 1 && attrs.dilation[1] >= 1, "dilation [%d, %d] must be >= 1 (1 = dense)",
              attrs.dilation[0], attrs.dilation[1]);
  expect_attr(attrs.pad[0] >= 0 && attrs.pad[1] >= 0 && attrs.pad[2] >= 0 && attrs.pad[3] >= 0,
              "pad [%d, %d, %d, %d] (top, left, bottom, right) must be >= 0", attrs.pad[0], attrs.pad[1],
              attrs.pad[2], attrs.pad[3]);
  expect_attr(attrs.groups >= 1, "groups %d must be >= 1 (1 for a dense convolution)", attrs.groups);
  ConvGeometry g;
  g.n = x.dims[0];
  g.c = x.dims[1];
  g.h = x.dims[2];
  g.w = x.dims[3];
  g.o = w.dims[0];
  g.kh = w.dims[2];
  g.kw = w.dims[3];
  g.groups = attrs.groups;
  g.stride_h = attrs.stride[0];
  g.stride_w = attrs.stride[1];
  g.pad_top = attrs.pad[0];
  g.pad_left = attrs.pad[1];
  g.dilation_h = attrs.dilation[0];
  g.dilation_w = attrs.dilation[1];
  if (g.c % g.groups != 0 || g.o % g.groups != 0)
    fail(NNRT_ERR_SHAPE, "groups %lld must divide the input channels %lld (%s %s) and output channels %lld (%s %s)",
         static_cast<long long>(g.groups), static_cast<long long>(g.c), x_name, dims_string(x).c_str(),
         static_cast<long long>(g.o), w_name, dims_string(w).c_str());
  g.cg = g.c / g.groups;
  g.og = g.o / g.groups;
  if (w.dims[1] != g.cg)
    fail(NNRT_ERR_SHAPE, "%s has dims %s; dim 1 must be C / groups = %lld / %lld = %lld (%s is %s)", w_name,
         dims_string(w).c_str(), static_cast<long long>(g.c), static_cast<long long>(g.groups),
         static_cast<long long>(g.cg), x_name, dims_string(x).c_str());
  if (g.kh < 1 || g.kw < 1)
    fail(NNRT_ERR_SHAPE, "%s has dims %s; the kernel must be at least 1 x 1", w_name, dims_string(w).c_str());
  g.oh = conv_output_size(g.h, attrs.pad[0], attrs.pad[2], g.kh, g.dilation_h, g.stride_h);
  g.ow = conv_output_size(g.w, attrs.pad[1], attrs.pad[3], g.kw, g.dilation_w, g.stride_w);
  if (g.oh < 1 || g.ow < 1)
    fail(NNRT_ERR_SHAPE,
         "the %lld x %lld kernel with dilation [%d, %d] does not fit in the %lld x %lld input padded by "
         "[%d, %d, %d, %d]",
         static_cast<long long>(g.kh), static_cast<long long>(g.kw), attrs.dilation[0], attrs.dilation[1],
         static_cast<long long>(g.h), static_cast<long long>(g.w), attrs.pad[0], attrs.pad[1], attrs.pad[2],
         attrs.pad[3]);
  const int64_t expected[4] = {g.n, g.o, g.oh, g.ow};
  bool same = true;
  for (int d = 0; d < 4; ++d) same = same && y.dims[d] == expected[d];
  if (!same)
    fail(NNRT_ERR_SHAPE,
         "%s has dims %s; expected %s: [N, O, floor((H + pt + pb - dh*(KH-1) - 1) / sh) + 1, floor((W + pl + pr "
         "- dw*(KW-1) - 1) / sw) + 1] for %s %s, %s %s, stride [%d, %d], pad [%d, %d, %d, %d], dilation [%d, %d]",
         y_name, dims_string(y).c_str(), dims_string(expected, 4).c_str(), x_name, dims_string(x).c_str(), w_name,
         dims_string(w).c_str(), attrs.stride[0], attrs.stride[1], attrs.pad[0], attrs.pad[1], attrs.pad[2],
         attrs.pad[3], attrs.dilation[0], attrs.dilation[1]);
  return g;
}

}  // namespace nnrt::reference
