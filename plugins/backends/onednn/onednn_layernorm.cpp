// NNRT_OP_LAYERNORM and NNRT_OP_LAYERNORM_BACKWARD (alg LAYER) through oneDNN's layer
// normalization, x f32 or bf16; gamma, beta and the row statistics F32. RMS normalization, which
// oneDNN 2.6 does not have, runs on the reference backend.
//
// oneDNN normalizes over the last dim, so every tensor is seen as [rows, row length]: the leading
// dims (0..axis-1) folded into one dim, the normalized ones into another. x, y, dy and dx must be
// dense row-major there (oneDNN 2.x takes one layout for src and dst, and its bf16 kernel wrote
// wrong rows of length 1 when normalizing a copy in place in a padded y): other layouts go to the
// reference backend, as do statistics and parameters that are not dense.
#include "onednn_common.h"

namespace nnrt::onednn {
namespace {

using tag = dnnl::memory::format_tag;

// t as [rows, row length] with the normalized dims axis.. dense (stride 1 inside) and the leading
// ones one stride apart; false when they do not fold.
bool as_rows(const nnrt_tensor_desc &t, int axis, dims *ds, dims *st) {
  int64_t length = 1;
  for (int d = t.ndim - 1; d >= axis; --d) {
    if (t.dims[d] == 1) continue;
    if (t.strides[d] != length) return false;
    length *= t.dims[d];
  }
  int64_t rows = 1, row_stride = length, next = -1;
  for (int d = axis - 1; d >= 0; --d) {
    if (t.dims[d] == 1) continue;
    if (next >= 0 && t.strides[d] != next) return false;
    if (next < 0) row_stride = t.strides[d];
    next = t.strides[d] * t.dims[d];
    rows *= t.dims[d];
  }
  *ds = {rows, length};
  *st = {row_stride, 1};
  return true;
}

int64_t product(const nnrt_tensor_desc &t, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; ++d) n *= t.dims[d];
  return n;
}

md rows_desc(const nnrt_tensor_desc &t, int axis, dt type) {
  dims ds, st;
  require(as_rows(t, axis, &ds, &st) && (ds[0] == 1 || st[0] == ds[1]), "layernorm: x, y, dy or dx is not dense");
  return md(ds, type, tag::ab);
}

// A per-row F32 tensor (mean, var) as [rows]; a per-element one (gamma, beta and their gradients)
// as [row length], which must be dense.
md statistic_desc(const nnrt_tensor_desc &t, int64_t rows) {
  dims ds, st;
  require(t.dtype == NNRT_DTYPE_F32, "layernorm: mean and var must be F32");
  require(as_rows(t, t.ndim, &ds, &st), "layernorm: mean or var does not fold into one strided dim");
  return strided_desc({rows}, dt::f32, {st[0]});
}
md parameter_desc(const nnrt_tensor_desc &t, int64_t length) {
  dims ds, st;
  require(t.dtype == NNRT_DTYPE_F32, "layernorm: gamma, beta and their gradients must be F32");
  require(!has_zero_stride(t) && as_rows(t, 0, &ds, &st), "layernorm: gamma, beta or a gradient is not dense");
  return md({length}, dt::f32, tag::a);
}

dnnl::layer_normalization_forward::primitive_desc forward_pd(dnnl::prop_kind prop, const md &data, float eps,
                                                             dnnl::normalization_flags flags,
                                                             const dnnl::primitive_attr &attr) {
#if DNNL_VERSION_MAJOR >= 3
  // Without a statistics descriptor: oneDNN 3.2 refuses an empty one (md()) for every shape.
  return make_pd<dnnl::layer_normalization_forward>(attr, prop, data, data, eps, flags);
#else
  return make_pd<dnnl::layer_normalization_forward>(attr, prop, data, eps, flags);
#endif
}

dnnl::normalization_flags flags_for(bool scale, bool shift) {
  dnnl::normalization_flags f = dnnl::normalization_flags::none;
  if (scale) f = f | dnnl::normalization_flags::use_scale;
  if (shift) f = f | dnnl::normalization_flags::use_shift;
  return f;
}

class LayernormOp : public Op {
 public:
  LayernormOp(const nnrt_op_desc &d, bool plan_only)
      : has_gamma_(d.n_inputs > 1), has_beta_(d.n_inputs > 2), stats_(d.n_outputs == 3) {
    const nnrt_tensor_desc &x = d.inputs[0], &y = d.outputs[0];
    const int axis = d.attrs.axis;
    const dt type = dnnl_type(x.dtype);
    x_ = rows_desc(x, axis, type);
    y_ = rows_desc(y, axis, type);
    const int64_t rows = product(x, 0, axis), length = product(x, axis, x.ndim);
    dnnl::layer_normalization_forward::primitive_desc pd =
        forward_pd(stats_ ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference, y_,
                   static_cast<float>(d.attrs.eps), flags_for(has_gamma_, has_beta_), base_attr());
    layout.need_scratchpad(pd);
    if (has_gamma_) gamma_ = parameter_desc(d.inputs[1], length);
    if (has_beta_) beta_ = parameter_desc(d.inputs[2], length);
    if (stats_) {
      mean_ = Bridge::to_user(pd.mean_desc(), statistic_desc(d.outputs[1], rows), layout, plan_only);
      var_ = Bridge::to_user(pd.variance_desc(), statistic_desc(d.outputs[2], rows), layout, plan_only);
    }
    if (!plan_only) {
      log_impl("layernorm", pd);
      norm_ = dnnl::layer_normalization_forward(pd);
    }
  }

  void run(const Run &r) const override {
    ExecArgs args{{DNNL_ARG_SRC, r.input(x_, 0)}, {DNNL_ARG_DST, r.output(y_, 0)}};
    if (has_gamma_) args.emplace(DNNL_ARG_SCALE, r.input(gamma_, 1));
    if (has_beta_) args.emplace(DNNL_ARG_SHIFT, r.input(beta_, 2));
    dnnl::memory mean, var;
    if (stats_) {
      mean = mean_.out(r, 1);
      var = var_.out(r, 2);
      args.emplace(DNNL_ARG_MEAN, mean);
      args.emplace(DNNL_ARG_VARIANCE, var);
    }
    r.execute(norm_, std::move(args));
    if (stats_) {
      mean_.finish(r, mean, 1);
      var_.finish(r, var, 2);
    }
  }

 private:
  bool has_gamma_, has_beta_, stats_;
  md x_, y_, gamma_, beta_;
  Bridge mean_, var_;
  dnnl::layer_normalization_forward norm_;
};

class LayernormBackwardOp : public Op {
 public:
  LayernormBackwardOp(const nnrt_op_desc &d, bool plan_only)
      : has_gamma_(d.n_inputs == 5), param_grads_(d.n_outputs == 3) {
    const nnrt_tensor_desc &x = d.inputs[0];
    const int axis = d.attrs.axis;
    const dt type = dnnl_type(x.dtype);
    x_ = rows_desc(x, axis, type);
    dx_ = rows_desc(d.outputs[0], axis, type);
    const int64_t rows = product(x, 0, axis), length = product(x, axis, x.ndim);
    const float eps = static_cast<float>(d.attrs.eps);
    dy_ = rows_desc(d.inputs[1], axis, type);
    // dbeta comes with use_shift, which needs no beta (oneDNN 2.6 and 3.2 still ask for a shift input
    // at execution: gamma stands in, as in onednn_batchnorm.cpp).
    const dnnl::normalization_flags flags = flags_for(has_gamma_, param_grads_);
    const dnnl::prop_kind prop = param_grads_ ? dnnl::prop_kind::backward : dnnl::prop_kind::backward_data;
    dnnl::layer_normalization_forward::primitive_desc hint =
        forward_pd(dnnl::prop_kind::forward_training, x_, eps, flags, dnnl::primitive_attr());
#if DNNL_VERSION_MAJOR >= 3
    dnnl::layer_normalization_backward::primitive_desc pd = make_backward_pd<dnnl::layer_normalization_backward>(
        hint, base_attr(), prop, dx_, dx_, x_, eps, flags);
#else
    dnnl::layer_normalization_backward::primitive_desc pd =
        make_backward_pd<dnnl::layer_normalization_backward>(hint, base_attr(), prop, dx_, x_, eps, flags);
#endif
    layout.need_scratchpad(pd);
    mean_ = Bridge::to_inner(statistic_desc(d.inputs[2], rows), pd.mean_desc(), layout, plan_only);
    var_ = Bridge::to_inner(statistic_desc(d.inputs[3], rows), pd.variance_desc(), layout, plan_only);
    if (has_gamma_) gamma_ = parameter_desc(d.inputs[4], length);
    if (param_grads_) {
      dgamma_ = parameter_desc(d.outputs[1], length);
      dbeta_ = parameter_desc(d.outputs[2], length);
    }
    if (!plan_only) {
      log_impl("layernorm backward", pd);
      norm_ = dnnl::layer_normalization_backward(pd);
    }
  }

  void run(const Run &r) const override {
    ExecArgs args{{DNNL_ARG_SRC, r.input(x_, 0)},
                  {DNNL_ARG_DIFF_DST, r.input(dy_, 1)},
                  {DNNL_ARG_MEAN, mean_.in(r, 2)},
                  {DNNL_ARG_VARIANCE, var_.in(r, 3)},
                  {DNNL_ARG_DIFF_SRC, r.output(dx_, 0)}};
    if (has_gamma_) {
      dnnl::memory gamma = r.input(gamma_, 4);
      args.emplace(DNNL_ARG_SCALE, gamma);
      if (param_grads_) args.emplace(DNNL_ARG_SHIFT, gamma);
    }
    if (param_grads_) {
      args.emplace(DNNL_ARG_DIFF_SCALE, r.output(dgamma_, 1));
      args.emplace(DNNL_ARG_DIFF_SHIFT, r.output(dbeta_, 2));
    }
    r.execute(norm_, std::move(args));
  }

 private:
  bool has_gamma_, param_grads_;
  md x_, dx_, dy_, gamma_, dgamma_, dbeta_;
  Bridge mean_, var_;
  dnnl::layer_normalization_backward norm_;
};

void check_norm(const nnrt_op_desc &d, const char *what) {
  require(d.attrs.alg == NNRT_NORM_LAYER, "layernorm: oneDNN has no RMS normalization");
  require(d.attrs.axis >= 0 && d.attrs.axis < d.inputs[0].ndim, what);
  require(d.n_outputs != 2, "layernorm: two outputs");
}

}  // namespace

std::unique_ptr<Op> make_layernorm(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 1, 3, 1, 3);
  check_norm(d, "layernorm: axis outside the tensor's rank");
  require_compute_dtype({&d.inputs[0], &d.outputs[0]});
  auto op = std::make_unique<LayernormOp>(d, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

std::unique_ptr<Op> make_layernorm_backward(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 4, 5, 1, 3);
  check_norm(d, "layernorm backward: axis outside the tensor's rank");
  // Without gamma oneDNN has no scale to differentiate: dgamma and dbeta are the reference's.
  require(d.n_inputs == 5 || d.n_outputs == 1, "layernorm backward: parameter gradients without gamma");
  require_compute_dtype({&d.inputs[0], &d.inputs[1], &d.outputs[0]});
  auto op = std::make_unique<LayernormBackwardOp>(d, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
