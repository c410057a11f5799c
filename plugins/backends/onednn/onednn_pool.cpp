// NNRT_OP_POOL2D and NNRT_OP_POOL2D_BACKWARD through oneDNN's pooling primitive (pooling_v2 in 2.x): max, average
// including padding, average excluding padding; f32 or bf16, NCHW with any strides.
//
// Max-pool backward needs the forward pass's workspace (where each max was), which nnrt does not
// keep, so op_run first runs the forward training primitive on x into workspace buffers. oneDNN
// keeps the first maximum of a window in row-major order, as nnrt does (the conformance suite
// checks it with tied inputs).
//
// NaN and -inf: oneDNN's max skips NaN and starts from -FLT_MAX; nnrt's propagates NaN and gives
// -inf for a window of -inf. Max pooling through oneDNN therefore scans x first (one read, the cost
// of a fraction of the op) and computes exactly, in onednn_pool_exact.cpp, when x holds either.
//
// The plugin's own kernels compute nnrt's max exactly and need no scan: shapes oneDNN leaves to its
// simple_nchw kernel (see plain_kernel) run the tiled max pooling (onednn_pool_tiled.cpp) where it
// applies, and are refused otherwise; channels-last 2x2 and 3x3 pools whose windows tile the input
// run onednn_pool_channels_last.cpp, faster than oneDNN's jit kernel (figures there). Refused too:
// windows that lie wholly in padding: nnrt defines them (-inf for max, 0 for average); oneDNN gives
// -FLT_MAX for max and divides by zero for average excluding padding.
#include "onednn_common.h"
#include "onednn_pool_channels_last.h"
#include "onednn_pool_exact.h"
#include "onednn_pool_tiled.h"
#include "onednn_special_values.h"

namespace nnrt::onednn {
namespace {

struct PoolGeometry {
  dims strides, kernel, pad_l, pad_r;
  dims dilation{0, 0};  // oneDNN counts the gaps: 0 = dense
  MaxPoolShape exact;   // for the exact path
};

// True when max pooling must take the exact path for this x.
bool needs_exact_max(const void *x, const nnrt_tensor_desc &xd) {
  return (find_special_values(x, xd) & (kNaN | kNegInf)) != 0;
}

dnnl::algorithm pool_alg(int32_t alg) {
  switch (alg) {
    case NNRT_POOL_MAX: return dnnl::algorithm::pooling_max;
    case NNRT_POOL_AVG_INCLUDE_PAD: return dnnl::algorithm::pooling_avg_include_padding;
    case NNRT_POOL_AVG_EXCLUDE_PAD: return dnnl::algorithm::pooling_avg_exclude_padding;
    default: refuse("pool: unknown alg [" + std::to_string(alg) + "]");
  }
}

// Checks the shapes of input [N,C,H,W] and output [N,C,OH,OW] against the attributes, and that no
// window lies wholly in padding (windows move monotonically, so the first and the last tell).
PoolGeometry pool_geometry(const nnrt_op_attrs &a, const nnrt_tensor_desc &in, const nnrt_tensor_desc &out) {
  require(in.ndim == 4 && out.ndim == 4, "pool: tensors must be NCHW");
  require(in.dims[0] == out.dims[0] && in.dims[1] == out.dims[1], "pool: N and C of input and output differ");
  PoolGeometry g;
  for (int i = 0; i < 2; ++i) {
    const int64_t k = a.kernel[i], s = a.stride[i], pb = a.pad[i], pe = a.pad[i + 2];
    const int64_t n = in.dims[2 + i], o = out.dims[2 + i];
    require(k >= 1 && s >= 1 && pb >= 0 && pe >= 0, "pool: bad kernel, stride or padding");
    require(n + pb + pe >= k && (n + pb + pe - k) / s + 1 == o, "pool: output size does not match the attributes");
    require(pb < k, "pool: the first window lies wholly in padding");
    require((o - 1) * s - pb < n, "pool: the last window lies wholly in padding");
    g.strides.push_back(s);
    g.kernel.push_back(k);
    g.pad_l.push_back(pb);
    g.pad_r.push_back(pe);
  }
  g.exact = MaxPoolShape{in.dims[2], in.dims[3], a.kernel[0], a.kernel[1], a.stride[0], a.stride[1], a.pad[0], a.pad[1]};
  return g;
}

// Below AVX-512, oneDNN 2.6 (and 3.2) pools plain NCHW tensors with its simple_nchw kernel, scalar and
// slower than nnrt's reference backend (LeNet training with DNNL_MAX_CPU_ISA=AVX2: 59% of all
// oneDNN time). Channels-last tensors, as inference passes them, get oneDNN's jit kernels (except
// the 2x2 and 3x3 max pools the plugin's channels-last kernel takes, see pick_kernel); for plain
// ones this backend runs its own tiled max pooling where it applies (the usual k x k, stride k
// pools) and leaves the rest to another backend.
bool plain_kernel(const dnnl::primitive_desc_base &pd) {
  return std::string(pd.impl_info_str()).rfind("simple_nchw", 0) == 0;
}
// Which kernel runs a pool whose oneDNN kernel would be `pd`, on input x (and, backward, dx) and
// output y; refuses when none is worth running.
enum class Kernel { onednn, tiled, channels_last };
Kernel pick_kernel(const dnnl::primitive_desc_base &pd, const nnrt_op_attrs &a, const nnrt_tensor_desc &x,
                   const nnrt_tensor_desc &y, const nnrt_tensor_desc &dx) {
  if (channels_last_max_pool_applies(a, x, y) && channels_last_max_pool_applies(a, dx, y)) return Kernel::channels_last;
  if (!plain_kernel(pd)) return Kernel::onednn;
  if (!tiled_max_pool_applies(a, x, y) || !tiled_max_pool_applies(a, dx, y)) {
    refuse("pool: oneDNN has only its plain simple_nchw kernel for this shape and ISA");
  }
  return Kernel::tiled;
}

pooling_forward::primitive_desc forward_pd(dnnl::prop_kind prop, dnnl::algorithm alg, const md &src, const md &dst,
                                           const PoolGeometry &g) {
  return make_pd<pooling_forward>(base_attr(), prop, alg, src, dst, g.strides, g.kernel, g.dilation, g.pad_l, g.pad_r);
}

pooling_backward::primitive_desc backward_pd(dnnl::algorithm alg, const md &diff_src, const md &diff_dst,
                                             const PoolGeometry &g, const pooling_forward::primitive_desc &hint) {
  return make_backward_pd<pooling_backward>(hint, base_attr(), alg, diff_src, diff_dst, g.strides, g.kernel,
                                            g.dilation, g.pad_l, g.pad_r);
}

// The output's descriptor. A dense [N, C, 1, 1] output (a global pooling's) is the same memory
// as NCHW and as NHWC; described as NCHW under a channels-last input, the mixed layouts leave
// oneDNN only its reference kernel (MobileNetV2's global average pool at batch 1: 1 ms, an eighth
// of the prediction), so it takes the input's.
md pool_dst_desc(const nnrt_tensor_desc &x, const nnrt_tensor_desc &y) {
  const bool one_by_one = y.ndim == 4 && y.dims[2] == 1 && y.dims[3] == 1 && y.strides[1] == 1 &&
                          (y.dims[0] == 1 || y.strides[0] == y.dims[1]);
  const bool x_channels_last = x.ndim == 4 && x.dims[1] > 1 && x.strides[1] == 1;
  if (!one_by_one || !x_channels_last) return memory_desc(y);
  return md(dims_of(y), dnnl_type(y.dtype), dnnl::memory::format_tag::nhwc);
}

class PoolOp : public Op {
 public:
  PoolOp(const nnrt_op_desc &d, const PoolGeometry &g, bool plan_only)
      : y_(pool_dst_desc(d.inputs[0], d.outputs[0])), is_max_(d.attrs.alg == NNRT_POOL_MAX), exact_(g.exact),
        tiled_{d.attrs.kernel[0], d.attrs.kernel[1]}, x_desc_(d.inputs[0]), y_desc_(d.outputs[0]) {
    pooling_forward::primitive_desc pd =
        forward_pd(dnnl::prop_kind::forward_inference, pool_alg(d.attrs.alg), memory_desc(d.inputs[0]), y_, g);
    kernel_ = pick_kernel(pd, d.attrs, d.inputs[0], d.outputs[0], d.inputs[0]);
    if (kernel_ != Kernel::onednn) return;
    x_ = readable_input(d.inputs[0], dense_desc(d.inputs[0], dnnl_type(d.outputs[0].dtype)), layout, plan_only);
    pd = forward_pd(dnnl::prop_kind::forward_inference, pool_alg(d.attrs.alg), x_.inner(), y_, g);
    layout.need_scratchpad(pd);
    if (!plan_only) {
      log_impl("pool", pd);
      pool_ = pooling_forward(pd);
    }
  }

  void run(const Run &r) const override {
    const nnrt_op_args &a = r.args();
    const auto *x = static_cast<const float *>(a.inputs[0]);
    auto *y = static_cast<float *>(a.outputs[0]);
    if (kernel_ == Kernel::tiled)
      tiled_max_pool_forward(tiled_, x, x_desc_, y, y_desc_);
    else if (kernel_ == Kernel::channels_last)
      channels_last_max_pool_forward(tiled_.kernel_h, x, x_desc_, y, y_desc_);
    else if (is_max_ && needs_exact_max(a.inputs[0], x_desc_))
      exact_max_pool_forward(exact_, a.inputs[0], x_desc_, a.outputs[0], y_desc_);
    else
      r.execute(pool_, {{DNNL_ARG_SRC, x_.in(r, 0)}, {DNNL_ARG_DST, r.output(y_, 0)}});
  }

 private:
  md y_;
  bool is_max_;
  MaxPoolShape exact_;
  TiledMaxPool tiled_;
  Kernel kernel_ = Kernel::onednn;
  nnrt_tensor_desc x_desc_, y_desc_;
  Bridge x_;
  pooling_forward pool_;
};

// The layout pooling backward writes dx in. oneDNN 3 clears diff_src as one dense block, writing
// into the gaps of a dx with gaps between its elements (and then misses some of them): such a dx
// is written dense there and reordered into the user's.
md backward_dx_desc(const nnrt_tensor_desc &dx) {
#if DNNL_VERSION_MAJOR >= 3
  int64_t elements = 1, span = 1;
  for (int i = 0; i < dx.ndim; ++i) {
    elements *= dx.dims[i];
    span += (dx.dims[i] - 1) * dx.strides[i];
  }
  if (span != elements) return dense_desc(dx, dnnl_type(dx.dtype));
#endif
  return memory_desc(dx);
}

class PoolBackwardOp : public Op {
 public:
  PoolBackwardOp(const nnrt_op_desc &d, const PoolGeometry &g, bool plan_only)
      : dx_(backward_dx_desc(d.outputs[0])), is_max_(d.attrs.alg == NNRT_POOL_MAX), exact_(g.exact),
        tiled_{d.attrs.kernel[0], d.attrs.kernel[1]}, dy_desc_(d.inputs[0]), x_desc_(d.inputs[1]),
        dx_desc_(d.outputs[0]) {
    const nnrt_tensor_desc &dy = d.inputs[0], &x = d.inputs[1];
    dnnl::algorithm alg = pool_alg(d.attrs.alg);
    {
      // Decided on the user's layout of dx: the kernel oneDNN would pick for it.
      const md user_dx = memory_desc(d.outputs[0]);
      pooling_forward::primitive_desc fwd =
          forward_pd(dnnl::prop_kind::forward_training, alg, user_dx, memory_desc(dy), g);
      pooling_backward::primitive_desc bwd = backward_pd(alg, user_dx, memory_desc(dy), g, fwd);
      kernel_ = pick_kernel(bwd, d.attrs, x, dy, d.outputs[0]);
      if (kernel_ != Kernel::onednn) return;
    }
    dy_ = readable_input(dy, dense_desc(dy, dnnl_type(d.outputs[0].dtype)), layout, plan_only);
    // The forward pass is rerun on x laid out like dx, so that the forward and backward
    // primitives agree on the workspace.
    if (is_max_) x_ = Bridge::to_inner(memory_desc(x), dx_, layout, plan_only);
    pooling_forward::primitive_desc fwd = forward_pd(dnnl::prop_kind::forward_training, alg, dx_, dy_.inner(), g);
    pooling_backward::primitive_desc bwd = backward_pd(alg, dx_, dy_.inner(), g, fwd);
    layout.need_scratchpad(bwd);
    dx_user_ = Bridge::to_user(dx_, memory_desc(d.outputs[0]), layout, plan_only);
    if (is_max_) {
      layout.need_scratchpad(fwd);
      y_md_ = fwd.dst_desc();
      ws_md_ = fwd.workspace_desc();
      y_slot_ = layout.add_buffer(y_md_.get_size());
      ws_slot_ = layout.add_buffer(ws_md_.get_size());
    }
    if (!plan_only) {
      log_impl("pool backward", bwd);
      if (is_max_) forward_ = pooling_forward(fwd);
      backward_ = pooling_backward(bwd);
    }
  }

  void run(const Run &r) const override {
    const nnrt_op_args &a = r.args();
    const auto *dy = static_cast<const float *>(a.inputs[0]), *x = static_cast<const float *>(a.inputs[1]);
    auto *dx_out = static_cast<float *>(a.outputs[0]);
    if (kernel_ == Kernel::tiled) {
      tiled_max_pool_backward(tiled_, dy, dy_desc_, x, x_desc_, dx_out, dx_desc_);
      return;
    }
    if (kernel_ == Kernel::channels_last) {
      channels_last_max_pool_backward(tiled_.kernel_h, dy, dy_desc_, x, x_desc_, dx_out, dx_desc_);
      return;
    }
    if (is_max_ && needs_exact_max(a.inputs[1], x_desc_)) {
      exact_max_pool_backward(exact_, a.inputs[0], dy_desc_, a.inputs[1], x_desc_, a.outputs[0], dx_desc_);
      return;
    }
    dnnl::memory dx = dx_user_.out(r, 0);
    ExecArgs args{{DNNL_ARG_DIFF_DST, dy_.in(r, 0)},
                                               {DNNL_ARG_DIFF_SRC, dx}};
    if (is_max_) {
      dnnl::memory ws = r.buffer(ws_md_, ws_slot_);
      r.execute(forward_, {{DNNL_ARG_SRC, x_.in(r, 1)}, {DNNL_ARG_DST, r.buffer(y_md_, y_slot_)},
                           {DNNL_ARG_WORKSPACE, ws}});
      args.emplace(DNNL_ARG_WORKSPACE, ws);
    }
    r.execute(backward_, std::move(args));
    dx_user_.finish(r, dx, 0);
  }

 private:
  md dx_;
  bool is_max_;
  MaxPoolShape exact_;
  TiledMaxPool tiled_;
  Kernel kernel_ = Kernel::onednn;
  nnrt_tensor_desc dy_desc_, x_desc_, dx_desc_;
  Bridge dy_, x_, dx_user_;
  md y_md_, ws_md_;
  int y_slot_ = -1, ws_slot_ = -1;
  pooling_forward forward_;
  pooling_backward backward_;
};

}  // namespace

std::unique_ptr<Op> make_pool(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 1, 1, 1, 1);
  require_compute_dtype({&d.inputs[0], &d.outputs[0]});
  PoolGeometry g = pool_geometry(d.attrs, d.inputs[0], d.outputs[0]);
  auto op = std::make_unique<PoolOp>(d, g, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

std::unique_ptr<Op> make_pool_backward(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 2, 2, 1, 1);
  const nnrt_tensor_desc &dy = d.inputs[0], &x = d.inputs[1], &dx = d.outputs[0];
  require_compute_dtype({&dy, &x, &dx});
  require(x.ndim == 4 && dx.ndim == 4, "pool backward: tensors must be NCHW");
  for (int i = 0; i < 4; ++i) require(x.dims[i] == dx.dims[i], "pool backward: x and dx dims differ");
  PoolGeometry g = pool_geometry(d.attrs, dx, dy);
  auto op = std::make_unique<PoolBackwardOp>(d, g, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
