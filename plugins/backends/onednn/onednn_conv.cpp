// NNRT_OP_CONV2D, _BACKWARD_DATA and _BACKWARD_WEIGHTS through oneDNN's convolution primitives:
// f32 or bf16, any stride, padding, dilation and group count, optional bias, a fused activation
// as an eltwise post-op.
//
// Layouts. oneDNN's speed depends on the layouts its primitives work in, and nnrt's tensors are
// NCHW / OIHW (any strides). Measured on the bench's LeNet shapes and a 64-channel 3x3 layer
// (2 threads, AVX-512, reorders from and to NCHW included), GFLOP/s:
//                        fwd        bwd-data   bwd-weights
//   conv1 (C=1)          NCHW 135   NCHW 90    blocked 117   (NHWC 112 / 25 / 85)
//   conv2 (C=20, 12x12)  NHWC 194   NHWC 148   NHWC 151      (blocked 102 / 110 / 104)
//   64->64 3x3, 14x14    NHWC 391   NHWC 353   NHWC 339      (blocked 339 / 358 / 323)
// The best layouts differ by ISA: on a 2-core AVX2 machine (1 thread), conv1's weight gradient
// takes 7.1 ms per batch of 64 blocked and 1.4 ms NHWC. So each pass has a short list of candidate
// layouts (layout_candidates), every candidate with a real kernel is timed once per shape and
// thread count (onednn_measure.h; deterministic mode takes the first instead, from an ISA-aware
// order drawn from these tables), and the fastest is kept. Forward, the NHWC candidate usually
// wins: with a bias and a fused activation, as models use it, the gemm convolution's
// post-processing makes conv1 run at 30 GFLOP/s (AVX-512) where the NHWC kernel (brgconv, or
// jit:avx2 on AVX2) runs at 160; for C = 1, NCHW and NHWC are the same memory. When every
// candidate leaves oneDNN with only its reference kernel (some grouped or bf16 shapes), everything
// goes to oneDNN's own choice (format_tag::any). Reorders between nnrt's layouts and the chosen
// ones are built once here and run in op_run through workspace buffers. The forward convolution
// keeps its weights reordered from call to call while they do not change (onednn_kept_input.h);
// the backward ones reorder them at every call (cheap next to the convolution, and the weights
// change at every training step). For bf16 the weight and bias gradients are accumulated in f32
// and rounded once by the final reorder. Backward data of channels-last f32 tensors has one more
// candidate, measured against oneDNN's chosen primitive: one product over the whole batch and a
// col2im of the plugin's own (onednn_conv_backward_data_gemm.h).
#include "onednn_common.h"
#include "onednn_conv_backward_data_gemm.h"
#include "onednn_conv_geometry.h"
#include "onednn_kept_input.h"
#include "onednn_measure.h"
#include "onednn_special_values.h"
#include "nnrt/kernels/eltwise.h"

#include <cstring>

namespace nnrt::onednn {

ConvGeometry conv_geometry(const nnrt_op_attrs &a, const nnrt_tensor_desc &x, const nnrt_tensor_desc &w,
                           const nnrt_tensor_desc &y) {
  require(x.ndim == 4 && w.ndim == 4 && y.ndim == 4, "conv: x, w and y must be 4-D");
  ConvGeometry g;
  g.groups = a.groups;
  const int64_t n = x.dims[0], c = x.dims[1], o = w.dims[0];
  require(g.groups >= 1 && c % g.groups == 0 && o % g.groups == 0, "conv: channels not divisible by groups");
  require(w.dims[1] == c / g.groups, "conv: w's dim 1 is not C / groups");
  require(y.dims[0] == n && y.dims[1] == o, "conv: y is not [N, O, OH, OW]");
  for (int i = 0; i < 2; ++i) {
    const int64_t k = w.dims[2 + i], s = a.stride[i], dil = a.dilation[i], pb = a.pad[i], pe = a.pad[i + 2];
    require(s >= 1 && dil >= 1 && pb >= 0 && pe >= 0, "conv: bad stride, dilation or padding");
    const int64_t extent = (k - 1) * dil + 1, padded = x.dims[2 + i] + pb + pe;
    require(padded >= extent && (padded - extent) / s + 1 == y.dims[2 + i], "conv: output size does not match");
    g.strides.push_back(s);
    g.dilates.push_back(dil - 1);  // oneDNN counts the gaps between taps
    g.pad_l.push_back(pb);
    g.pad_r.push_back(pe);
  }
  g.x_dims = dims_of(x);
  g.y_dims = dims_of(y);
  if (g.groups == 1)
    g.w_dims = dims_of(w);
  else
    g.w_dims = {g.groups, o / g.groups, w.dims[1], w.dims[2], w.dims[3]};
  return g;
}

md user_weights_desc(const nnrt_tensor_desc &w, const ConvGeometry &g, dt type) {
  if (g.groups == 1) return memory_desc(w, type);
  const int64_t og = w.dims[0] / g.groups;
  return strided_desc(g.w_dims, type, {w.strides[0] * og, w.strides[0], w.strides[1], w.strides[2], w.strides[3]});
}

namespace {

using tag = dnnl::memory::format_tag;

md vector_desc(int64_t n, dt type) { return md({n}, type, tag::a); }

enum class Pass { forward, backward_data, backward_weights };

// The layouts a convolution's primitives work in: activations (x, y and their gradients) and
// weights.
struct Layouts {
  tag activations, weights;
  md x(const ConvGeometry &g, dt t) const { return md(g.x_dims, t, activations); }
  md y(const ConvGeometry &g, dt t) const { return md(g.y_dims, t, activations); }
  md w(const ConvGeometry &g, dt t) const { return md(g.w_dims, t, weights); }
};

// The layouts to try (see the table at the top), in the order deterministic mode takes them; the
// last is oneDNN's own choice. Below AVX-512, oneDNN's blocked weight-gradient kernel for a handful
// of input channels is the slow one (LeNet's conv1, AVX2, 1 thread: 7.1 ms blocked, 1.4 ms NHWC).
std::vector<Layouts> layout_candidates(const ConvGeometry &g, Pass pass) {
  const Layouts blocked{tag::any, tag::any}, channels_last{tag::nhwc, tag::any}, plain{tag::nchw, tag::oihw};
  // oneDNN 2.6's NHWC weight-gradient kernel for a strided 1x1 convolution (jit_1x1 and its copy of
  // the strided input into a unit-stride buffer) writes past its scratchpad when a group's input
  // channels do not fill its vectors: with 2 channels and stride 3 (AVX2, 1 thread) valgrind sees
  // the writes, the gradients come out wrong and the heap is corrupted. Such a convolution takes the
  // blocked layouts, whose channels are padded to the vector width.
  const size_t r = g.w_dims.size();
  const bool strided_1x1 = g.w_dims[r - 1] == 1 && g.w_dims[r - 2] == 1 && (g.strides[0] > 1 || g.strides[1] > 1);
  if (pass == Pass::backward_weights && strided_1x1 && (g.x_dims[1] / g.groups) % 16 != 0) return {blocked};
  const bool few_input_channels = g.groups == 1 && g.x_dims[1] < 4;
  if (!few_input_channels) return {channels_last, blocked};
  switch (pass) {
    case Pass::forward: return {channels_last, plain, blocked};
    case Pass::backward_data: return {plain, channels_last, blocked};
    case Pass::backward_weights:
      if (has_avx512_kernels()) return {blocked, channels_last};
      return {channels_last, blocked};
  }
  return {blocked};
}

// The primitive descriptor of the layouts that run fastest here (onednn_measure.h), among the
// candidates that have a real kernel, and those layouts; oneDNN's reference kernel only when no
// candidate has better. make(layouts, geometry) builds a candidate's descriptor; user(geometry)
// gives the user's layout of each argument.
template <class PD>
struct Chosen {
  PD pd;
  Layouts layouts;
};
// Candidates are measured on at most this many examples: the ranking holds, and a prediction
// plan at batch 256 would otherwise hold a candidate's buffers for 256 (peak RSS of LeNet
// training, which predicts its test set at 256: 242 MB before measuring, 295 MB measuring at the
// full batch).
constexpr int64_t kMeasuredBatch = 64;
template <class PD, class Make, class User>
Chosen<PD> choose(const Build &b, const ConvGeometry &g, Pass pass, User &&user, Make &&make) {
  std::vector<Layouts> tried = layout_candidates(g, pass);
  std::vector<Chosen<PD>> fast;
  for (const Layouts &l : tried) {
    try {
      PD pd = make(l, g);
      if (!is_reference_impl(pd)) fast.push_back({pd, l});
    } catch (const dnnl::error &) {
      // these layouts have no implementation: try the next
    }
  }
  if (fast.empty()) return {make(tried.back(), g), tried.back()};
  if (fast.size() == 1 || b.plan_only || b.deterministic) return fast[0];
  ConvGeometry small = g;
  small.x_dims[0] = small.y_dims[0] = std::min<int64_t>(g.x_dims[0], kMeasuredBatch);
  std::vector<PD> measured;
  try {
    for (const Chosen<PD> &c : fast) measured.push_back(small.x_dims[0] < g.x_dims[0] ? make(c.layouts, small) : c.pd);
  } catch (const dnnl::error &) {
    small = g;  // no smaller problem to measure: measure this one
    measured.clear();
    for (const Chosen<PD> &c : fast) measured.push_back(c.pd);
  }
  const std::vector<std::pair<int, md>> user_layouts = user(small);
  std::vector<Candidate> candidates;
  for (const PD &pd : measured) candidates.push_back({&pd, user_layouts});
  return fast[fastest_candidate(b.key(), candidates, true)];
}

// An activation's user descriptor with its batch (dim 0) set to n.
md with_batch(nnrt_tensor_desc t, int64_t n) {
  t.dims[0] = n;
  return memory_desc(t);
}

// The forward convolution. A fused relu is built twice: with oneDNN's relu, run when the input,
// weights and bias are free of NaN and infinities (found by a scan, cheap next to the
// convolution), and with the NaN-keeping form of fused_post_ops for the other inputs. A NaN can
// then only reach the fast path from an overflow inside the sum (inf - inf), which it turns into 0.
// A fused clip (ReLU6, MobileNets' activation) is built the same way, with oneDNN's clip_v2 on the
// fast path; oneDNN has no NaN-keeping clip, so the exact path convolves without a post-op and
// clips the output with nnrt's rule (NaN stays NaN) in a second pass. A hard sigmoid is built the
// same way (oneDNN 3's hardsigmoid, or 2's line and clip_v2, on the fast path). An activation that
// oneDNN has no exact post-op for at all (erf, sign) takes that second pass always, so that the
// convolution stays on oneDNN's kernels.
class ConvForwardOp : public Op {
 public:
  ConvForwardOp(const Build &b, const ConvGeometry &g, dt type) : x_desc_(b.desc.inputs[0]), w_desc_(b.desc.inputs[1]) {
    const nnrt_op_desc &d = b.desc;
    const bool plan_only = b.plan_only;
    has_bias_ = d.n_inputs > 2;
    if (has_bias_) b_desc_ = d.inputs[2];
    const int32_t fused = d.attrs.fused;
    const bool f32_or_bf16 = type == dt::f32 || type == dt::bf16;
    // clip_v2 and nnrt's rule part where the bounds cross; the reference backend takes those.
    if (fused == NNRT_UNARY_CLIP && !(d.attrs.alpha <= d.attrs.beta)) refuse("conv2d: a fused clip needs min <= max");
    after_ = !exact_post_op(fused, d.attrs.alpha, d.attrs.beta);
    if (after_) {
      if (!f32_or_bf16) refuse("conv2d: this fused activation needs f32 or bf16 on oneDNN");
      y_desc_ = d.outputs[0];
      fused_ = fused;
      alpha_ = static_cast<float>(d.attrs.alpha);
      beta_ = static_cast<float>(d.attrs.beta);
    }
    const bool fast_when_finite = fused == NNRT_UNARY_RELU || fused == NNRT_UNARY_CLIP || fused == NNRT_UNARY_HARD_SIGMOID;
    two_paths_ = fast_when_finite && f32_or_bf16;
    md bias = has_bias_ ? vector_desc(g.y_dims[1], type) : md();
    using PD = dnnl::convolution_forward::primitive_desc;
    const md user_w = user_weights_desc(d.inputs[1], g, type);
    auto make_pd = [&](bool finite_inputs, const Layouts &l, const ConvGeometry &m) {
      dnnl::primitive_attr attr = base_attr();
      if (!after_ || finite_inputs) attr.set_post_ops(fused_post_ops(fused, d.attrs.alpha, d.attrs.beta, finite_inputs));
      return onednn::make_pd<dnnl::convolution_forward>(attr, dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::convolution_direct, l.x(m, type),
                                                        l.w(m, type), bias, l.y(m, type), m.strides, m.dilates,
                                                        m.pad_l, m.pad_r);
    };
    // Weights are kept reordered between calls (onednn_kept_input.h), so their reorder is not
    // counted.
    const Chosen<PD> chosen =
        choose<PD>(b, g, Pass::forward,
                   [&](const ConvGeometry &m) -> std::vector<std::pair<int, md>> {
                     return {{DNNL_ARG_SRC, with_batch(d.inputs[0], m.x_dims[0])},
                             {DNNL_ARG_DST, with_batch(d.outputs[0], m.y_dims[0])}};
                   },
                   [&](const Layouts &l, const ConvGeometry &m) { return make_pd(two_paths_, l, m); });
    const PD &pd = chosen.pd;
    layout.need_scratchpad(pd);
    x_ = Bridge::to_inner(memory_desc(d.inputs[0]), pd.src_desc(), layout, plan_only);
    w_ = Bridge::to_kept(user_w, pd.weights_desc(), layout, plan_only);  // read through kept_w_ when needed()
    if (has_bias_) b_ = Bridge::to_inner(memory_desc(d.inputs[2]), pd.bias_desc(), layout, plan_only);
    y_ = Bridge::to_user(pd.dst_desc(), memory_desc(d.outputs[0]), layout, plan_only);
    if (w_.needed()) kept_w_ = std::make_unique<KeptInput>(d.inputs[1], two_paths_);
    if (two_paths_) {
      // The same layouts for both (the post-op does not change oneDNN's choice of kernel family,
      // but checking keeps the bridges right if it ever does).
      PD exact = make_pd(false, chosen.layouts, g);
      if (exact.src_desc() != pd.src_desc() || exact.weights_desc() != pd.weights_desc() ||
          exact.dst_desc() != pd.dst_desc())
        refuse("conv2d: the relu variants chose different layouts");
      layout.need_scratchpad(exact);
      if (!plan_only) conv_exact_ = dnnl::convolution_forward(exact);
    }
    if (!plan_only) {
      log_impl("conv2d", pd);
      conv_ = dnnl::convolution_forward(pd);
    }
  }

  void run(const Run &r) const override {
    std::shared_ptr<const KeptInput::Entry> w;
    if (kept_w_) w = kept_w_->get(r, 1, w_);
    ExecArgs args{{DNNL_ARG_SRC, x_.in(r, 0)}, {DNNL_ARG_WEIGHTS, w ? w->memory : w_.in(r, 1)}};
    args.emplace(DNNL_ARG_DST, y_.out(r, 0));
    if (has_bias_) args.emplace(DNNL_ARG_BIAS, b_.in(r, 2));
    dnnl::memory y = args.at(DNNL_ARG_DST);
    const bool exact =
        two_paths_ && (find_special_values(r.args().inputs[0], x_desc_) != 0 ||
                       (w ? w->special : find_special_values(r.args().inputs[1], w_desc_)) != 0 ||
                       (has_bias_ && find_special_values(r.args().inputs[2], b_desc_) != 0));
    r.execute(exact ? conv_exact_ : conv_, std::move(args));
    y_.finish(r, y, 0);
    if (after_ && (exact || !two_paths_)) activate_output(r.args().outputs[0]);
  }

 private:
  // The exact path's activation by nnrt's rule (NaN kept), on every element of y.
  void activate_output(void *y) const {
    const nnrt_tensor_desc &t = y_desc_;
    const int64_t n = t.dims[0], c = t.dims[1], h = t.dims[2], w = t.dims[3];
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < c; ++j)
        for (int64_t k = 0; k < h; ++k)
          for (int64_t l = 0; l < w; ++l) {
            const int64_t at = i * t.strides[0] + j * t.strides[1] + k * t.strides[2] + l * t.strides[3];
            const float v = load_float(y, t.dtype, at);
            store_float(y, t.dtype, at, kernels::unary_forward(fused_, v, alpha_, beta_));
          }
  }

  nnrt_tensor_desc x_desc_, w_desc_, b_desc_{}, y_desc_{};
  int32_t fused_ = 0;
  float alpha_ = 0, beta_ = 0;  // the fused activation's, for activate_output
  bool has_bias_ = false, two_paths_ = false;
  bool after_ = false;  // oneDNN's post-op is not exact: the exact path activates in a second pass
  Bridge x_, w_, b_, y_;
  std::unique_ptr<KeptInput> kept_w_;  // when the weights need a reorder
  dnnl::convolution_forward conv_, conv_exact_;
};

// The forward primitive descriptor the backward ones are built against, in the same layouts.
dnnl::convolution_forward::primitive_desc forward_hint(const ConvGeometry &g, const Layouts &l, dt type,
                                                       bool with_bias) {
  return make_pd<dnnl::convolution_forward>(
      dnnl::primitive_attr(), dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, l.x(g, type),
      l.w(g, type), with_bias ? vector_desc(g.y_dims[1], type) : md(), l.y(g, type), g.strides, g.dilates, g.pad_l,
      g.pad_r);
}

class ConvBackwardDataOp : public Op {
 public:
  ConvBackwardDataOp(const Build &b, const ConvGeometry &g, dt type) {
    const nnrt_op_desc &d = b.desc;
    const bool plan_only = b.plan_only;
    using PD = dnnl::convolution_backward_data::primitive_desc;
    const md user_w = user_weights_desc(d.inputs[1], g, type);
    const PD pd = choose<PD>(b, g, Pass::backward_data,
                             [&](const ConvGeometry &m) -> std::vector<std::pair<int, md>> {
                               return {{DNNL_ARG_DIFF_DST, with_batch(d.inputs[0], m.y_dims[0])},
                                       {DNNL_ARG_WEIGHTS, user_w},
                                       {DNNL_ARG_DIFF_SRC, with_batch(d.outputs[0], m.x_dims[0])}};
                             },
                             [&](const Layouts &l, const ConvGeometry &m) {
                               return make_backward_pd<dnnl::convolution_backward_data>(
                                   forward_hint(m, l, type, false), base_attr(), dnnl::algorithm::convolution_direct,
                                   l.x(m, type), l.w(m, type), l.y(m, type), m.strides, m.dilates, m.pad_l, m.pad_r);
                             })
                      .pd;
    if (!plan_only && GemmBackwardData::applies(d)) {
      WorkspaceLayout gemm_layout;
      auto gemm = std::make_unique<GemmBackwardData>(d, gemm_layout);
      if (gemm_is_faster(b, pd, user_w, *gemm)) {
        gemm_ = std::move(gemm);
        layout = gemm_layout;  // the op's only buffers
        log_debug("conv2d backward data: one batched matmul and a col2im");
        return;
      }
    }
    layout.need_scratchpad(pd);
    dy_ = Bridge::to_inner(memory_desc(d.inputs[0]), pd.diff_dst_desc(), layout, plan_only);
    w_ = Bridge::to_inner(user_w, pd.weights_desc(), layout, plan_only);
    dx_ = Bridge::to_user(pd.diff_src_desc(), memory_desc(d.outputs[0]), layout, plan_only);
    if (!plan_only) {
      log_impl("conv2d backward data", pd);
      conv_ = dnnl::convolution_backward_data(pd);
    }
  }

  void run(const Run &r) const override {
    if (gemm_) return gemm_->run(r);
    dnnl::memory dx = dx_.out(r, 0);
    r.execute(conv_, {{DNNL_ARG_DIFF_DST, dy_.in(r, 0)}, {DNNL_ARG_WEIGHTS, w_.in(r, 1)}, {DNNL_ARG_DIFF_SRC, dx}});
    dx_.finish(r, dx, 0);
  }

 private:
  // Whether the batched product (onednn_conv_backward_data_gemm.h) beats oneDNN's chosen primitive
  // on this shape, measured; deterministic mode takes it below AVX-512 (where it was measured
  // faster) and oneDNN's primitive with AVX-512 kernels.
  static bool gemm_is_faster(const Build &b, const dnnl::convolution_backward_data::primitive_desc &pd,
                             const md &user_w, const GemmBackwardData &gemm) {
    const bool gemm_first = !has_avx512_kernels();
    if (b.deterministic) return gemm_first;
    const std::vector<std::pair<int, md>> user = {
        {DNNL_ARG_DIFF_DST, memory_desc(b.desc.inputs[0])}, {DNNL_ARG_WEIGHTS, user_w},
        {DNNL_ARG_DIFF_SRC, memory_desc(b.desc.outputs[0])}};
    Candidate gemm_candidate{nullptr, {}, gemm.scratch_timer(), "batched gemm + col2im"};
    Candidate primitive{&pd, user};
    const std::vector<Candidate> candidates =
        gemm_first ? std::vector<Candidate>{gemm_candidate, primitive} : std::vector<Candidate>{primitive, gemm_candidate};
    const size_t chosen = fastest_candidate(b.key() + "/gemm", candidates, true);
    return (chosen == 0) == gemm_first;
  }

  Bridge dy_, w_, dx_;
  dnnl::convolution_backward_data conv_;
  std::unique_ptr<GemmBackwardData> gemm_;
};

// The kernel taps, along one spatial dim, that meet only padding at every output position: their
// weight gradient is exactly 0. oneDNN 2.6's native-bf16 weight-gradient kernels (avx512_core_bf16)
// leave such taps' elements unwritten (seen on AMD Zen 4 as leftover workspace values in the
// gradient), so the op writes those zeros itself after the primitive has run.
std::vector<bool> taps_outside_input(const ConvGeometry &g, int dim) {
  const size_t r = g.w_dims.size();
  const int64_t in = g.x_dims[2 + dim], out = g.y_dims[2 + dim], kernel = g.w_dims[r - 2 + dim];
  const int64_t stride = g.strides[dim], dilation = g.dilates[dim] + 1, pad = g.pad_l[dim];
  std::vector<bool> outside(static_cast<size_t>(kernel), true);
  for (int64_t k = 0; k < kernel; ++k)
    for (int64_t o = 0; o < out && outside[k]; ++o) {
      const int64_t at = o * stride - pad + k * dilation;
      if (at >= 0 && at < in) outside[k] = false;
    }
  return outside;
}

class ConvBackwardWeightsOp : public Op {
 public:
  ConvBackwardWeightsOp(const Build &b, const ConvGeometry &g, dt type) {
    const nnrt_op_desc &d = b.desc;
    const bool plan_only = b.plan_only;
    has_bias_ = d.n_outputs > 1;
    // Gradients of bf16 weights are summed over the whole batch: accumulate them in f32.
    const dt grad_type = type == dt::bf16 ? dt::f32 : type;
    using PD = dnnl::convolution_backward_weights::primitive_desc;
    const md user_dw = user_weights_desc(d.outputs[0], g, type);
    const PD pd = choose<PD>(b, g, Pass::backward_weights,
                             [&](const ConvGeometry &m) -> std::vector<std::pair<int, md>> {
                               return {{DNNL_ARG_SRC, with_batch(d.inputs[0], m.x_dims[0])},
                                       {DNNL_ARG_DIFF_DST, with_batch(d.inputs[1], m.y_dims[0])},
                                       {DNNL_ARG_DIFF_WEIGHTS, user_dw}};
                             },
                             [&](const Layouts &l, const ConvGeometry &m) {
                               return make_backward_pd<dnnl::convolution_backward_weights>(
                                   forward_hint(m, l, type, has_bias_), base_attr(),
                                   dnnl::algorithm::convolution_direct, l.x(m, type), l.w(m, grad_type),
                                   has_bias_ ? vector_desc(m.y_dims[1], grad_type) : md(), l.y(m, type), m.strides,
                                   m.dilates, m.pad_l, m.pad_r);
                             })
                      .pd;
    layout.need_scratchpad(pd);
    outside_h_ = taps_outside_input(g, 0);
    outside_w_ = taps_outside_input(g, 1);
    for (bool h : outside_h_) zero_taps_ = zero_taps_ || h;
    for (bool w : outside_w_) zero_taps_ = zero_taps_ || w;
    dw_desc_ = d.outputs[0];
    x_ = Bridge::to_inner(memory_desc(d.inputs[0]), pd.src_desc(), layout, plan_only);
    dy_ = Bridge::to_inner(memory_desc(d.inputs[1]), pd.diff_dst_desc(), layout, plan_only);
    dw_ = Bridge::to_user(pd.diff_weights_desc(), user_dw, layout, plan_only);
    if (has_bias_) db_ = Bridge::to_user(pd.diff_bias_desc(), memory_desc(d.outputs[1]), layout, plan_only);
    if (!plan_only) {
      log_impl("conv2d backward weights", pd);
      conv_ = dnnl::convolution_backward_weights(pd);
    }
  }

  void run(const Run &r) const override {
    dnnl::memory dw = dw_.out(r, 0);
    ExecArgs args{
        {DNNL_ARG_SRC, x_.in(r, 0)}, {DNNL_ARG_DIFF_DST, dy_.in(r, 1)}, {DNNL_ARG_DIFF_WEIGHTS, dw}};
    dnnl::memory db;
    if (has_bias_) {
      db = db_.out(r, 1);
      args.emplace(DNNL_ARG_DIFF_BIAS, db);
    }
    r.execute(conv_, std::move(args));
    dw_.finish(r, dw, 0);
    if (has_bias_) db_.finish(r, db, 1);
    if (zero_taps_) zero_outside_taps(r.args().outputs[0]);
  }

 private:
  // Writes 0 (all bits clear, in f32 and bf16 alike) at the taps that meet only padding.
  void zero_outside_taps(void *dw) const {
    const nnrt_tensor_desc &t = dw_desc_;
    const int64_t size = static_cast<int64_t>(kernels::dtype_size(t.dtype));
    char *base = static_cast<char *>(dw);
    for (int64_t o = 0; o < t.dims[0]; ++o)
      for (int64_t c = 0; c < t.dims[1]; ++c)
        for (int64_t kh = 0; kh < t.dims[2]; ++kh)
          for (int64_t kw = 0; kw < t.dims[3]; ++kw)
            if (outside_h_[kh] || outside_w_[kw])
              std::memset(base + (o * t.strides[0] + c * t.strides[1] + kh * t.strides[2] + kw * t.strides[3]) * size,
                          0, static_cast<size_t>(size));
  }

  bool has_bias_ = false, zero_taps_ = false;
  std::vector<bool> outside_h_, outside_w_;  // taps_outside_input
  nnrt_tensor_desc dw_desc_{};
  Bridge x_, dy_, dw_, db_;
  dnnl::convolution_backward_weights conv_;
};

}  // namespace

std::unique_ptr<Op> make_conv(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 2, 3, 1, 1);
  dt type = d.n_inputs > 2 ? require_compute_dtype({&d.inputs[0], &d.inputs[1], &d.inputs[2], &d.outputs[0]})
                           : require_compute_dtype({&d.inputs[0], &d.inputs[1], &d.outputs[0]});
  ConvGeometry g = conv_geometry(d.attrs, d.inputs[0], d.inputs[1], d.outputs[0]);
  if (d.n_inputs > 2) require(d.inputs[2].ndim == 1 && d.inputs[2].dims[0] == g.y_dims[1], "conv: bias is not [O]");
  auto op = std::make_unique<ConvForwardOp>(b, g, type);
  return b.plan_only ? nullptr : std::move(op);
}

std::unique_ptr<Op> make_conv_backward_data(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 2, 2, 1, 1);
  dt type = require_compute_dtype({&d.inputs[0], &d.inputs[1], &d.outputs[0]});
  ConvGeometry g = conv_geometry(d.attrs, d.outputs[0], d.inputs[1], d.inputs[0]);
  auto op = std::make_unique<ConvBackwardDataOp>(b, g, type);
  return b.plan_only ? nullptr : std::move(op);
}

std::unique_ptr<Op> make_conv_backward_weights(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 2, 2, 1, 2);
  dt type = d.n_outputs > 1 ? require_compute_dtype({&d.inputs[0], &d.inputs[1], &d.outputs[0], &d.outputs[1]})
                            : require_compute_dtype({&d.inputs[0], &d.inputs[1], &d.outputs[0]});
  ConvGeometry g = conv_geometry(d.attrs, d.inputs[0], d.outputs[0], d.inputs[1]);
  if (d.n_outputs > 1)
    require(d.outputs[1].ndim == 1 && d.outputs[1].dims[0] == g.y_dims[1], "conv backward weights: db is not [O]");
  auto op = std::make_unique<ConvBackwardWeightsOp>(b, g, type);
  return b.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
