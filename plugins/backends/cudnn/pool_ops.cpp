// POOL2D and POOL2D_BACKWARD as CUDA kernels (kernels.h) over the window rules of kernels/pool.h,
// the ones the reference backend runs: the same results, NaN and padding cases included.
#include <cstring>

#include "kernels.h"
#include "ops.h"

namespace nnrt::cudnn {

namespace {

// The geometry of x [N,C,H,W] pooled into y [N,C,OH,OW]; "" or why the dims do not agree.
std::string pool_geometry(const nnrt_op_desc &d, const nnrt_tensor_desc &x, const nnrt_tensor_desc &y,
                          kernels::PoolGeometry *g) {
  const nnrt_op_attrs &a = d.attrs;
  if (x.ndim != 4 || y.ndim != 4) return "pooling needs 4-d tensors";
  if (a.alg < NNRT_POOL_MAX || a.alg > NNRT_POOL_AVG_EXCLUDE_PAD) return "unknown pool alg";
  for (int i = 0; i < 2; ++i)
    if (a.kernel[i] < 1 || a.stride[i] < 1 || a.pad[i] < 0 || a.pad[i + 2] < 0) return "bad kernel, stride or padding";
  g->n = x.dims[0];
  g->c = x.dims[1];
  g->h = x.dims[2];
  g->w = x.dims[3];
  g->kh = a.kernel[0];
  g->kw = a.kernel[1];
  g->stride_h = a.stride[0];
  g->stride_w = a.stride[1];
  g->pad_top = a.pad[0];
  g->pad_left = a.pad[1];
  g->alg = a.alg;
  const int64_t ph = g->h + a.pad[0] + a.pad[2] - g->kh, pw = g->w + a.pad[1] + a.pad[3] - g->kw;
  if (ph < 0 || pw < 0) return "the kernel is larger than the padded input";
  g->oh = ph / g->stride_h + 1;
  g->ow = pw / g->stride_w + 1;
  if (y.dims[0] != g->n || y.dims[1] != g->c || y.dims[2] != g->oh || y.dims[3] != g->ow)
    return "the output dims do not follow from x, kernel, stride and padding";
  return "";
}

class PoolOp final : public Op {
 public:
  explicit PoolOp(const nnrt_op_desc &d) : backward_(d.kind == NNRT_OP_POOL2D_BACKWARD), dtype_(d.inputs[0].dtype) {
    std::memset(&s_, 0, sizeof s_);
    const nnrt_tensor_desc &x = backward_ ? d.inputs[1] : d.inputs[0];
    const nnrt_tensor_desc &y = backward_ ? d.inputs[0] : d.outputs[0];
    pool_geometry(d, x, y, &g_);
    std::memcpy(s_.x, x.strides, sizeof s_.x);
    std::memcpy(s_.y, y.strides, sizeof s_.y);
    if (backward_) std::memcpy(s_.dx, d.outputs[0].strides, sizeof s_.dx);
  }
  void run(const nnrt_op_args &a, cudaStream_t stream) const override {
    if (backward_) {
      check_cuda(gpu::pool2d_backward(dtype_, g_, s_, a.outputs[0], a.inputs[0], a.inputs[1], stream),
                 "pool backward kernel");
    } else {
      check_cuda(gpu::pool2d(dtype_, g_, s_, a.outputs[0], a.inputs[0], stream), "pool kernel");
    }
  }

 private:
  bool backward_;
  int32_t dtype_;
  kernels::PoolGeometry g_{};
  gpu::PoolStrides s_;
};

}  // namespace

std::string pool_refusal(const nnrt_op_desc &d) {
  const bool backward = d.kind == NNRT_OP_POOL2D_BACKWARD;
  std::string e = check_counts(d, backward ? 2 : 1, backward ? 2 : 1, 1, 1);
  if (!e.empty()) return e;
  const nnrt_tensor_desc &x = backward ? d.inputs[1] : d.inputs[0];
  const nnrt_tensor_desc &y = backward ? d.inputs[0] : d.outputs[0];
  if (!is_float(x.dtype) || y.dtype != x.dtype || d.outputs[0].dtype != x.dtype) return "pooling needs one float dtype";
  if (backward && !same_dims(d.outputs[0], x)) return "dx must have x's dims";
  kernels::PoolGeometry g;
  return pool_geometry(d, x, y, &g);
}

std::unique_ptr<Op> create_pool_op(const nnrt_op_desc &d) { return std::make_unique<PoolOp>(d); }

}  // namespace nnrt::cudnn
