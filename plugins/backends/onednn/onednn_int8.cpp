// NNRT_OP_MATMUL_INT8 and NNRT_OP_CONV2D_INT8 through oneDNN's int8 matmul and convolution: u8 or
// s8 activations, s8 weights, s32 sums, f32 output. The header's formula, c = fused(scale *
// scales[n] * acc + bias[n]), maps onto oneDNN as per-output scales (scale * scales[n], rounded to
// f32 as the reference rounds it: oneDNN 2.x's output scales, 3.x's weights scales), a binary-add
// post-op for the bias (oneDNN 2.x adds its own bias argument before the scales in int8
// primitives), then the activation's eltwise post-op; a nonzero zero point of the input is oneDNN's
// run-time source zero point.
//
// Exactness. Without VNNI (AVX2, AVX-512 before Cascade Lake) oneDNN multiplies u8 by s8 with
// vpmaddubsw, which adds pairs of products in 16 bits with saturation: 255 * 127 * 2 overflows, and
// the sum is silently wrong (measured here: -1048576 for -2088960). Weights within [-63, 63] keep
// every pair in range, so such CPUs take only ops whose descriptor promises that
// (NNRT_FLAG_WEIGHTS_7BIT, set by layers quantized with 7-bit weights); the others run on the
// reference backend, exactly.
//
// oneDNN 2.6's int8 convolutions take output scales only as constants fixed when the primitive is
// made, not at run time (its matmul, and oneDNN 3, take them at run time): there the convolution op
// makes one primitive per set of scales it meets (one per layer of a model) and keeps a few.
//
// QUANTIZE runs on the plugin's own loop (onednn_quantize.cpp), not on a oneDNN reorder: the
// contract rounds x / scale in double, and a reorder multiplies by a rounded reciprocal in f32,
// which differs at ties.
#include <cstring>

#include "onednn_common.h"
#include "onednn_conv_geometry.h"
#include "onednn_kept_input.h"

namespace nnrt::onednn {
namespace {

bool has_vnni() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx512_vnni = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_vnni);
  const auto avx2_vnni = static_cast<unsigned>(dnnl_cpu_isa_avx2_vnni);
  return (isa & avx512_vnni) == avx512_vnni || (isa & avx2_vnni) == avx2_vnni;
}

// The checks both ops share: dtypes, and the 7-bit promise on CPUs without VNNI.
void check_int8(const nnrt_op_desc &d, const char *op) {
  check_common(d, 3, 4, 1, 1);
  const int32_t x = d.inputs[0].dtype;
  require(x == NNRT_DTYPE_U8 || x == NNRT_DTYPE_I8, "int8: the input is not u8 or i8");
  require(d.inputs[1].dtype == NNRT_DTYPE_I8 && d.inputs[2].dtype == NNRT_DTYPE_F32 &&
              d.outputs[0].dtype == NNRT_DTYPE_F32 && (d.n_inputs < 4 || d.inputs[3].dtype == NNRT_DTYPE_F32),
          "int8: weights must be i8, scales, bias and output f32");
  if (!(d.attrs.flags & NNRT_FLAG_WEIGHTS_7BIT) && !has_vnni())
    refuse(std::string(op) + ": 8-bit weights without VNNI (oneDNN's int8 kernels saturate 16-bit pair sums here)");
}

// scale * scales[n], each rounded once to f32 (the reference's order).
void combined_scales(const nnrt_op_args &args, const nnrt_tensor_desc &scales, double scale, float *out) {
  const float *s = static_cast<const float *>(args.inputs[2]);
  for (int64_t i = 0; i < scales.dims[0]; ++i) out[i] = static_cast<float>(scale * s[i * scales.strides[0]]);
}

// The input's zero point, as oneDNN's run-time argument, in workspace buffer `slot`.
dnnl::memory zero_point_memory(const Run &r, int slot, int32_t zero_point) {
  dnnl::memory zp = r.buffer(md({1}, dt::s32, dnnl::memory::format_tag::a), slot);
  *static_cast<int32_t *>(zp.get_data_handle()) = zero_point;
  return zp;
}

// The attributes both ops share: the runtime source zero point, the bias as a binary add over
// `bias` (absent: empty), then the fused activation (integer sums and f32 scales: the only NaN or
// infinity is one the caller put in scales or bias), and the per-output scales (`mask` over the
// weights' dims in oneDNN 3, over the output's in 2.x), at run time unless `fixed` holds them
// (oneDNN 2.x's convolutions).
dnnl::primitive_attr int8_attr(const nnrt_op_desc &d, int32_t zero_point, const md &bias, int mask,
                               const std::vector<float> *fixed = nullptr) {
  dnnl::primitive_attr attr = base_attr();
  dnnl::post_ops ops;
  if (!bias.is_zero()) ops.append_binary(dnnl::algorithm::binary_add, bias);
  attr.set_post_ops(fused_post_ops(d.attrs.fused, d.attrs.alpha, d.attrs.beta, true, ops));
#if DNNL_VERSION_MAJOR >= 3
  (void)fixed;
  if (zero_point != 0) attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
  attr.set_scales_mask(DNNL_ARG_WEIGHTS, mask);
#else
  if (zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  attr.set_output_scales(mask, fixed ? *fixed : std::vector<float>{DNNL_RUNTIME_F32_VAL});
#endif
  return attr;
}

// The argument that carries run-time scales.
#if DNNL_VERSION_MAJOR >= 3
constexpr int kScalesArg = DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS;
#else
constexpr int kScalesArg = DNNL_ARG_ATTR_OUTPUT_SCALES;
#endif

class MatmulInt8Op : public Op {
 public:
  explicit MatmulInt8Op(const Build &b)
      : scales_(b.desc.inputs[2]), scale_(b.desc.attrs.scale), zero_point_(b.desc.attrs.zero_point) {
    const nnrt_op_desc &d = b.desc;
    const nnrt_tensor_desc &a = d.inputs[0], &w = d.inputs[1], &c = d.outputs[0];
    has_bias_ = d.n_inputs == 4;
    const int64_t n = c.dims[1];
    if (has_bias_) bias_ = strided_desc({1, n}, dt::f32, {0, d.inputs[3].strides[0]});
    // Per column of b (its dim 1) and of c (dim 1): the same mask in both versions.
    dnnl::primitive_attr attr = int8_attr(d, zero_point_, bias_, 1 << 1);
    const md a_user = memory_desc(a), w_user = memory_desc(w), c_user = memory_desc(c);
    dnnl::matmul::primitive_desc pd = make_pd<dnnl::matmul>(attr, a_user, w_user, c_user);
    if (is_reference_impl(pd)) {
      dnnl::matmul::primitive_desc blocked = make_pd<dnnl::matmul>(attr, a_user, any_layout(w_user), c_user);
      if (!is_reference_impl(blocked)) pd = blocked;
    }
    layout.need_scratchpad(pd);
    a_ = Bridge::to_inner(a_user, pd.src_desc(), layout, b.plan_only);
    w_ = Bridge::to_kept(w_user, pd.weights_desc(), layout, b.plan_only);  // read through kept_w_ when needed()
    c_ = Bridge::to_user(pd.dst_desc(), c_user, layout, b.plan_only);
    if (w_.needed()) kept_w_ = std::make_unique<KeptInput>(w, false);
    scales_slot_ = layout.add_buffer(static_cast<size_t>(n) * sizeof(float));
    zero_point_slot_ = layout.add_buffer(sizeof(int32_t));
    if (!b.plan_only) {
      log_impl("matmul_int8", pd);
      matmul_ = dnnl::matmul(pd);
    }
  }

  void run(const Run &r) const override {
    std::shared_ptr<const KeptInput::Entry> w;
    if (kept_w_) w = kept_w_->get(r, 1, w_);
    dnnl::memory scales = r.buffer(md({scales_.dims[0]}, dt::f32, dnnl::memory::format_tag::a), scales_slot_);
    combined_scales(r.args(), scales_, scale_, static_cast<float *>(scales.get_data_handle()));
    dnnl::memory c = c_.out(r, 0);
    ExecArgs args{{DNNL_ARG_SRC, a_.in(r, 0)}, {DNNL_ARG_WEIGHTS, w ? w->memory : w_.in(r, 1)}, {DNNL_ARG_DST, c},
                  {kScalesArg, scales}};
    if (has_bias_) args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, r.input(bias_, 3));
    if (zero_point_ != 0) args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_point_memory(r, zero_point_slot_, zero_point_));
    r.execute(matmul_, std::move(args));
    c_.finish(r, c, 0);
  }

 private:
  nnrt_tensor_desc scales_;
  double scale_;
  int32_t zero_point_;
  bool has_bias_ = false;
  md bias_;
  int scales_slot_ = -1, zero_point_slot_ = -1;
  Bridge a_, w_, c_;
  std::unique_ptr<KeptInput> kept_w_;
  dnnl::matmul matmul_;
};

// oneDNN 2.x: one primitive per set of output scales (see the top of the file), made at the first
// run that meets it, with the layouts of the primitive checked at creation. oneDNN 3: one
// primitive, its scales given at run time.
//
// An s8 input without VNNI: oneDNN adds 128 to it (to use the u8 x s8 instruction) and halves the
// weights in their reorder to keep the pair sums in range, which rounds odd weights (measured: 191
// of 520 outputs of a 3x3 convolution off by up to 6%). Here the input is given as u8 instead, 128
// added (x ^ 0x80, exact) and its zero point raised by 128: the same sums, and no halving.
class ConvInt8Op : public Op {
 public:
  ConvInt8Op(const Build &b, const ConvGeometry &g) : desc_(b.desc), g_(g) {
    const nnrt_op_desc &d = b.desc;
    has_bias_ = d.n_inputs == 4;
    if (has_bias_) bias_ = strided_desc({1, g.y_dims[1], 1, 1}, dt::f32, {0, d.inputs[3].strides[0], 0, 0});
    shift_ = d.inputs[0].dtype == NNRT_DTYPE_I8 && !has_vnni();
    zero_point_ = d.attrs.zero_point + (shift_ ? 128 : 0);
    const md x_user = shift_ ? memory_desc(d.inputs[0], dt::u8) : memory_desc(d.inputs[0]), y_user = memory_desc(d.outputs[0]);
    const md w_user = user_weights_desc(d.inputs[1], g, dt::s8);
    const std::vector<float> ones(static_cast<size_t>(g.y_dims[1]), 1.0f);
    // The layouts: the caller's activations where oneDNN has a real kernel for them (channels-last,
    // as inference keeps images), else its own choice.
    dnnl::convolution_forward::primitive_desc pd = make(ones, x_user, y_user);
    if (is_reference_impl(pd)) {
      dnnl::convolution_forward::primitive_desc any = make(ones, any_layout(x_user), any_layout(y_user));
      if (!is_reference_impl(any)) pd = any;
    }
    if (shift_) {
      x_shifted_ = x_user;
      shifted_slot_ = layout.add_buffer(x_user.get_size());
    }
    x_inner_ = pd.src_desc();
    y_inner_ = pd.dst_desc();
    layout.need_scratchpad(pd);
    x_ = Bridge::to_inner(x_user, pd.src_desc(), layout, b.plan_only);
    w_ = Bridge::to_kept(w_user, pd.weights_desc(), layout, b.plan_only);  // read through kept_w_ when needed()
    y_ = Bridge::to_user(pd.dst_desc(), y_user, layout, b.plan_only);
    kept_w_ = std::make_unique<KeptInput>(d.inputs[1], false);
    scales_slot_ = layout.add_buffer(static_cast<size_t>(g.y_dims[1]) * sizeof(float));
    zero_point_slot_ = layout.add_buffer(sizeof(int32_t));
    if (!b.plan_only) {
      log_impl("conv2d_int8", pd);
#if DNNL_VERSION_MAJOR >= 3
      conv_ = dnnl::convolution_forward(pd);
#endif
    }
  }

  void run(const Run &r) const override {
    dnnl::memory scales = r.buffer(md({g_.y_dims[1]}, dt::f32, dnnl::memory::format_tag::a), scales_slot_);
    float *combined = static_cast<float *>(scales.get_data_handle());
    combined_scales(r.args(), desc_.inputs[2], desc_.attrs.scale, combined);
    dnnl::memory w = w_.needed() ? kept_w_->get(r, 1, w_)->memory : w_.in(r, 1);
    dnnl::memory y = y_.out(r, 0);
    ExecArgs args{{DNNL_ARG_SRC, shift_ ? x_.in_memory(r, shifted_input(r)) : x_.in(r, 0)}, {DNNL_ARG_WEIGHTS, w},
                  {DNNL_ARG_DST, y}};
    if (has_bias_) args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, r.input(bias_, 3));
    if (zero_point_ != 0) args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_point_memory(r, zero_point_slot_, zero_point_));
#if DNNL_VERSION_MAJOR >= 3
    args.emplace(kScalesArg, scales);
    r.execute(conv_, std::move(args));
#else
    r.execute(primitive_for(combined)->conv, std::move(args));
#endif
    y_.finish(r, y, 0);
  }

 private:
  // Scales per output channel: weights' dim 0, or dims 0 and 1 ([G, O/G, ...]) when grouped (3.x);
  // the output's dim 1 (2.x).
  dnnl::convolution_forward::primitive_desc make(const std::vector<float> &scales, const md &x, const md &y) const {
#if DNNL_VERSION_MAJOR >= 3
    (void)scales;
    const int mask = g_.groups > 1 ? 3 : 1;
#else
    const int mask = 1 << 1;
#endif
    dnnl::primitive_attr attr = int8_attr(desc_, zero_point_, bias_, mask, &scales);
    return make_pd<dnnl::convolution_forward>(attr, dnnl::prop_kind::forward_inference,
                                              dnnl::algorithm::convolution_direct, x,
                                              md(g_.w_dims, dt::s8, dnnl::memory::format_tag::any), y, g_.strides,
                                              g_.dilates, g_.pad_l, g_.pad_r);
  }

  // The s8 input as u8 with 128 added, in its own layout, in the workspace (every byte of its span).
  dnnl::memory shifted_input(const Run &r) const {
    dnnl::memory x = r.buffer(x_shifted_, shifted_slot_);
    const auto *from = static_cast<const uint8_t *>(r.args().inputs[0]);
    auto *to = static_cast<uint8_t *>(x.get_data_handle());
    for (size_t i = 0, n = x_shifted_.get_size(); i < n; ++i) to[i] = from[i] ^ 0x80u;
    return x;
  }

#if DNNL_VERSION_MAJOR < 3
  struct Made {
    std::vector<float> scales;
    dnnl::convolution_forward conv;
  };

  // The primitive for the g_.y_dims[1] scales at `scales`: compared in place on every run, copied
  // only when a primitive is made for them.
  std::shared_ptr<const Made> primitive_for(const float *scales) const {
    const size_t n = static_cast<size_t>(g_.y_dims[1]);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const auto &m : made_)
        if (std::memcmp(m->scales.data(), scales, n * sizeof(float)) == 0) return m;
    }
    auto m = std::make_shared<Made>();
    m->scales.assign(scales, scales + n);
    dnnl::convolution_forward::primitive_desc pd = make(m->scales, x_inner_, y_inner_);
    if (pd.weights_desc() != w_.inner() || pd.scratchpad_desc().get_size() > layout.scratchpad_bytes())
      throw Unsupported{"conv2d_int8: oneDNN chose other layouts for other scales"};
    m->conv = dnnl::convolution_forward(pd);
    std::lock_guard<std::mutex> lock(mutex_);
    made_.insert(made_.begin(), m);
    if (made_.size() > kMaxMade) made_.pop_back();
    return m;
  }

  static constexpr size_t kMaxMade = 32;
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const Made>> made_;  // the most recently made first
#else
  dnnl::convolution_forward conv_;
#endif
  nnrt_op_desc desc_;
  ConvGeometry g_;
  bool has_bias_ = false, shift_ = false;
  int32_t zero_point_ = 0;  // the input's, raised by 128 when shifted
  md bias_, x_inner_, y_inner_, x_shifted_;
  int scales_slot_ = -1, zero_point_slot_ = -1, shifted_slot_ = -1;
  Bridge x_, w_, y_;
  std::unique_ptr<KeptInput> kept_w_;
};

}  // namespace

std::unique_ptr<Op> make_matmul_int8(const Build &b) {
  check_int8(b.desc, "matmul_int8");
  const nnrt_op_desc &d = b.desc;
  const nnrt_tensor_desc &a = d.inputs[0], &w = d.inputs[1], &c = d.outputs[0];
  require(a.ndim == 2 && w.ndim == 2 && c.ndim == 2 && a.dims[0] == c.dims[0] && a.dims[1] == w.dims[0] &&
              w.dims[1] == c.dims[1],
          "matmul_int8: shapes are not [M, K] x [K, N] -> [M, N]");
  auto op = std::make_unique<MatmulInt8Op>(b);
  return b.plan_only ? nullptr : std::move(op);
}

std::unique_ptr<Op> make_conv2d_int8(const Build &b) {
  check_int8(b.desc, "conv2d_int8");
  const nnrt_op_desc &d = b.desc;
  ConvGeometry g = conv_geometry(d.attrs, d.inputs[0], d.inputs[1], d.outputs[0]);
  auto op = std::make_unique<ConvInt8Op>(b, g);
  return b.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
