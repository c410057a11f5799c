#include "conv_params.h"

#include <algorithm>

namespace nnrt::cudnn {

namespace {

bool data_types(int32_t dtype, ConvParams *p) {
  switch (dtype) {
    case NNRT_DTYPE_F32: p->data_type = CUDNN_DATA_FLOAT; p->compute_type = CUDNN_DATA_FLOAT; p->alignment = 4; break;
    case NNRT_DTYPE_F16: p->data_type = CUDNN_DATA_HALF; p->compute_type = CUDNN_DATA_FLOAT; p->alignment = 2; break;
    case NNRT_DTYPE_BF16: p->data_type = CUDNN_DATA_BFLOAT16; p->compute_type = CUDNN_DATA_FLOAT; p->alignment = 2; break;
    case NNRT_DTYPE_F64: p->data_type = CUDNN_DATA_DOUBLE; p->compute_type = CUDNN_DATA_DOUBLE; p->alignment = 8; break;
    default: return false;
  }
  p->element_bytes = p->alignment;
  return true;
}

// Gives t packed NCHW strides over its dims.
void pack_nchw(CudnnTensor *t) {
  int64_t stride = 1;
  for (int d = 3; d >= 0; --d) {
    t->strides[d] = stride;
    stride *= t->dims[d];
  }
}

// Whether t's strides pack its elements with no gap in the memory order `order` (innermost dim
// first); dims of size 1 may carry any stride.
bool packed_in_order(const CudnnTensor &t, const int (&order)[4]) {
  int64_t expected = 1;
  for (int d : order) {
    if (t.dims[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.dims[d];
  }
  return true;
}

// Gives t packed NCHW strides for cuDNN unless it is packed NCHW or packed NHWC already.
void stage_unless_packed(CudnnTensor *t) {
  static const int nchw[4] = {3, 2, 1, 0}, nhwc[4] = {1, 3, 2, 0};
  if (packed_in_order(*t, nchw) || packed_in_order(*t, nhwc)) return;
  t->staged = true;
  pack_nchw(t);
}

// x staged with the padding written out around it as zeros, and cuDNN told of no padding.
void write_out_padding(ConvParams *p) {
  CudnnTensor &x = p->x;
  x.staged = x.zero_filled = true;
  for (int i = 0; i < 2; ++i) x.dims[2 + i] = x.own_dims[2 + i] + p->pre_padding[i] + p->post_padding[i];
  pack_nchw(&x);
  x.first = p->pre_padding[0] * x.strides[2] + p->pre_padding[1] * x.strides[3];
  for (int i = 0; i < 2; ++i) p->pre_padding[i] = p->post_padding[i] = 0;
}

bool rank4(const nnrt_tensor_desc &t, CudnnTensor *out) {
  if (t.ndim != 4) return false;
  for (int i = 0; i < 4; ++i) {
    if (t.dims[i] <= 0) return false;  // empty convolutions run on the reference backend
    out->dims[i] = out->own_dims[i] = t.dims[i];
    // cuDNN wants positive strides; a dim of size 1 may carry any stride, so give it a valid one.
    out->strides[i] = t.strides[i];
  }
  for (int i = 3; i >= 0; --i) {
    if (out->dims[i] == 1 && out->strides[i] <= 0) out->strides[i] = i == 3 ? 1 : out->strides[i + 1] * out->dims[i + 1];
    if (out->strides[i] <= 0) return false;
  }
  std::copy(out->strides, out->strides + 4, out->own_strides);
  stage_unless_packed(out);
  return true;
}

// The output extent of a convolution along one spatial dim.
int64_t out_extent(int64_t in, int64_t k, int64_t pad_before, int64_t pad_after, int64_t stride, int64_t dilation) {
  int64_t span = dilation * (k - 1) + 1;
  int64_t padded = in + pad_before + pad_after;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

}  // namespace

std::string translate_conv(const nnrt_op_desc &d, ConvParams *p) {
  *p = ConvParams{};
  const nnrt_op_attrs &a = d.attrs;
  const nnrt_tensor_desc *x, *w, *y;
  switch (d.kind) {
    case NNRT_OP_CONV2D:
      if (d.n_inputs < 2 || d.n_inputs > 3 || d.n_outputs != 1) return "conv2d takes x, w, [bias] and gives y";
      x = &d.inputs[0];
      w = &d.inputs[1];
      y = &d.outputs[0];
      break;
    case NNRT_OP_CONV2D_BACKWARD_DATA:
      if (d.n_inputs != 2 || d.n_outputs != 1) return "conv2d_backward_data takes dy, w and gives dx";
      y = &d.inputs[0];
      w = &d.inputs[1];
      x = &d.outputs[0];
      break;
    case NNRT_OP_CONV2D_BACKWARD_WEIGHTS:
      if (d.n_inputs != 2 || d.n_outputs < 1 || d.n_outputs > 2) return "conv2d_backward_weights takes x, dy and gives dw, [db]";
      x = &d.inputs[0];
      y = &d.inputs[1];
      w = &d.outputs[0];
      break;
    default: return "not a convolution";
  }
  if (x->dtype != w->dtype || y->dtype != x->dtype || !data_types(x->dtype, p)) return "convolutions need one float dtype";
  if (!rank4(*x, &p->x) || !rank4(*w, &p->w) || !rank4(*y, &p->y)) return "convolutions need non-empty 4-d tensors";
  const int64_t groups = a.groups;
  if (groups < 1 || p->x.dims[1] % groups != 0 || p->w.dims[0] % groups != 0 || p->w.dims[1] * groups != p->x.dims[1])
    return "the channels do not agree with the groups";
  if (p->y.dims[0] != p->x.dims[0] || p->y.dims[1] != p->w.dims[0]) return "y's batch or channels are wrong";
  for (int i = 0; i < 2; ++i) {
    if (a.stride[i] < 1 || a.dilation[i] < 1 || a.pad[i] < 0 || a.pad[i + 2] < 0) return "bad stride, dilation or padding";
    p->stride[i] = a.stride[i];
    p->dilation[i] = a.dilation[i];
    p->pre_padding[i] = a.pad[i];       // top, left
    p->post_padding[i] = a.pad[i + 2];  // bottom, right
    if (out_extent(p->x.dims[2 + i], p->w.dims[2 + i], p->pre_padding[i], p->post_padding[i], p->stride[i],
                   p->dilation[i]) != p->y.dims[2 + i])
      return "y's spatial dims do not follow from x, w, stride, padding and dilation";
  }
  if (d.kind == NNRT_OP_CONV2D) {
    if (d.n_inputs == 3) {
      const nnrt_tensor_desc &b = d.inputs[2];
      if (b.dtype != x->dtype || b.ndim != 1 || b.dims[0] != p->w.dims[0]) return "the bias must be [O] of x's dtype";
      p->bias = true;
    }
    if (a.fused < NNRT_UNARY_NONE || a.fused > NNRT_UNARY_LAST) return "unknown fused activation";
    p->post_activation = a.fused == NNRT_UNARY_IDENTITY ? 0 : a.fused;
  } else if (a.fused != 0) {
    return "a convolution gradient has no fused activation";
  }
  if (d.kind == NNRT_OP_CONV2D_BACKWARD_WEIGHTS &&
      (p->pre_padding[0] != p->post_padding[0] || p->pre_padding[1] != p->post_padding[1]))
    write_out_padding(p);
  if (d.kind == NNRT_OP_CONV2D_BACKWARD_WEIGHTS && d.n_outputs == 2) {
    const nnrt_tensor_desc &db = d.outputs[1];
    if (db.dtype != x->dtype || db.ndim != 1 || db.dims[0] != p->w.dims[0]) return "db must be [O] of x's dtype";
    p->bias_gradient = true;
  }
  return "";
}

int64_t staging_index(const CudnnTensor &t, bool output, kernels::StridedIndex<2> *index) {
  *index = kernels::StridedIndex<2>{};
  const int64_t *strides[2] = {output ? t.own_strides : t.strides, output ? t.strides : t.own_strides};
  return kernels::make_strided_index<2>(4, t.own_dims, strides, index);
}

std::string engine_refusal(const ConvParams &p, const cudnnBackendNumericalNote_t *notes, int64_t count,
                           bool deterministic) {
  for (int64_t i = 0; i < count; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return "only engines that down-convert their inputs";
    if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && p.data_type == CUDNN_DATA_FLOAT)
      return "only tensor-core (TF32) engines for f32";
    if (notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC && deterministic) return "only nondeterministic engines";
  }
  return "";
}

}  // namespace nnrt::cudnn
