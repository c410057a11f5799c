// NNRT_OP_BATCHNORM (training and inference) and NNRT_OP_BATCHNORM_BACKWARD through oneDNN's
// batch normalization: x f32 or bf16 of rank 2 and up; gamma, beta, mean and var F32 [C].
//
// nnrt's gamma and beta are separate tensors: oneDNN 2.6 takes them as such with the use_scale and
// use_shift flags (the combined scale_shift tensor of older versions is not needed). Its training
// pass returns the biased batch variance, as nnrt's does.
//
// oneDNN's batch normalization takes 2-D to 5-D tensors and is fastest on 4-D ones, so the
// spatial dims are folded into one ([N, C, H*W*..., 1]) whenever the strides allow it.
#include "onednn_batchnorm_exact.h"
#include "onednn_common.h"
#include "onednn_special_values.h"

namespace nnrt::onednn {
namespace {

using tag = dnnl::memory::format_tag;

// t as [N, C, S, 1] with S the product of its spatial dims, if they can be folded (each one's
// stride is the next one's stride times its size, size-1 dims aside).
bool fold_spatial(const nnrt_tensor_desc &t, dims *ds, dims *st) {
  int64_t size = 1, inner_stride = 1;
  bool seen = false;
  for (int d = t.ndim - 1; d >= 2; --d) {
    if (t.dims[d] == 1) continue;
    if (seen && t.strides[d] != inner_stride) return false;
    size *= t.dims[d];
    inner_stride = t.strides[d] * t.dims[d];
    if (!seen) {
      *st = {t.strides[0], t.strides[1], t.strides[d], 1};
      seen = true;
    }
  }
  if (!seen) *st = {t.strides[0], t.strides[1], 1, 1};
  *ds = {t.dims[0], t.dims[1], size, 1};
  return true;
}

// The descriptors of the activation-shaped tensors (x, y / dx, dy) as oneDNN will see them: all
// folded to 4-D, or all as they are when one cannot be folded (then rank 5 at most).
std::vector<md> activation_descs(std::initializer_list<const nnrt_tensor_desc *> ts, dt type) {
  std::vector<md> folded;
  for (const nnrt_tensor_desc *t : ts) {
    dims ds, st;
    if (!fold_spatial(*t, &ds, &st)) break;
    folded.push_back(strided_desc(ds, type, st));
  }
  if (folded.size() == ts.size()) return folded;
  std::vector<md> plain;
  for (const nnrt_tensor_desc *t : ts) {
    require(t->ndim <= 5, "batchnorm: oneDNN takes at most 5-D tensors and the spatial dims do not fold");
    plain.push_back(memory_desc(*t, type));
  }
  return plain;
}

md channel_desc(int64_t c) { return md({c}, dt::f32, tag::a); }

void check_channel_tensor(const nnrt_tensor_desc &t, int64_t c, const char *what) {
  require(t.dtype == NNRT_DTYPE_F32, "batchnorm: gamma, beta, mean and var must be F32");
  require(t.ndim == 1 && t.dims[0] == c, what);
}

void check_activation(const nnrt_tensor_desc &t, const nnrt_tensor_desc &x, const char *what) {
  require(t.ndim == x.ndim, what);
  for (int i = 0; i < x.ndim; ++i) require(t.dims[i] == x.dims[i], what);
}

const dnnl::normalization_flags kScaleShift =
    dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

class BatchnormOp : public Op {
 public:
  BatchnormOp(const nnrt_op_desc &d, bool plan_only) : training_((d.attrs.flags & NNRT_FLAG_TRAINING) != 0) {
    const nnrt_tensor_desc &x = d.inputs[0], &y = d.outputs[0];
    const dt type = dnnl_type(x.dtype);
    std::vector<md> ds = activation_descs({&x, &y}, type);
    x_ = ds[0];
    y_ = ds[1];
    // oneDNN normalizes src into dst of the same layout; another layout is copied into y first
    // and normalized in place.
    copy_first_ = !(x_ == y_);
    const int64_t c = x.dims[1];
    dnnl::normalization_flags flags = kScaleShift;
    if (!training_) flags = flags | dnnl::normalization_flags::use_global_stats;
    dnnl::batch_normalization_forward::primitive_desc pd = batchnorm_forward_pd(
        training_ ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference, y_,
        static_cast<float>(d.attrs.eps), flags, base_attr());
    layout.need_scratchpad(pd);
    if (copy_first_) {
      dnnl::reorder::primitive_desc rpd(cpu_engine(), x_, cpu_engine(), y_, base_attr());
      layout.need_scratchpad(rpd);
      if (!plan_only) copy_ = dnnl::reorder(rpd);
    }
    gamma_ = Bridge::to_inner(memory_desc(d.inputs[1]), channel_desc(c), layout, plan_only);
    beta_ = Bridge::to_inner(memory_desc(d.inputs[2]), channel_desc(c), layout, plan_only);
    if (training_) {
      mean_ = Bridge::to_user(pd.mean_desc(), memory_desc(d.outputs[1]), layout, plan_only);
      var_ = Bridge::to_user(pd.variance_desc(), memory_desc(d.outputs[2]), layout, plan_only);
    } else {
      mean_ = Bridge::to_inner(memory_desc(d.inputs[3]), pd.mean_desc(), layout, plan_only);
      var_ = Bridge::to_inner(memory_desc(d.inputs[4]), pd.variance_desc(), layout, plan_only);
    }
    if (!plan_only) {
      log_impl(training_ ? "batchnorm training" : "batchnorm inference", pd);
      bnorm_ = dnnl::batch_normalization_forward(pd);
    }
  }

  void run(const Run &r) const override {
    dnnl::memory y = r.output(y_, 0);
    dnnl::memory src = y;
    if (copy_first_)
      r.execute(copy_, {{DNNL_ARG_FROM, r.input(x_, 0)}, {DNNL_ARG_TO, y}});
    else
      src = r.input(y_, 0);
    ExecArgs args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_DST, y}, {DNNL_ARG_SCALE, gamma_.in(r, 1)}, {DNNL_ARG_SHIFT, beta_.in(r, 2)}};
    dnnl::memory mean, var;
    if (training_) {
      mean = mean_.out(r, 1);
      var = var_.out(r, 2);
    } else {
      mean = mean_.in(r, 3);
      var = var_.in(r, 4);
    }
    args.emplace(DNNL_ARG_MEAN, mean);
    args.emplace(DNNL_ARG_VARIANCE, var);
    r.execute(bnorm_, std::move(args));
    if (training_) {
      mean_.finish(r, mean, 1);
      var_.finish(r, var, 2);
    }
  }

 private:
  bool training_;
  bool copy_first_ = false;
  md x_, y_;
  dnnl::reorder copy_;
  Bridge gamma_, beta_, mean_, var_;
  dnnl::batch_normalization_forward bnorm_;
};

class BatchnormBackwardOp : public Op {
 public:
  BatchnormBackwardOp(const nnrt_op_desc &d, bool plan_only) : desc_(d) {
    const nnrt_tensor_desc &x = d.inputs[0], &dy = d.inputs[1], &dx = d.outputs[0];
    const dt type = dnnl_type(x.dtype);
    std::vector<md> ds = activation_descs({&x, &dy, &dx}, type);
    const int64_t c = x.dims[1];
    const float eps = static_cast<float>(d.attrs.eps);
    dx_ = ds[2];
    // diff_dst and diff_src share one layout in oneDNN: dy is reordered into dx's when it differs.
    // So is x: oneDNN's fast kernels want src in that layout too, and take their reference kernel
    // (about 20x slower) otherwise, as when a convolution left x channels-last and the gradient
    // from the layer above comes plain.
    dy_ = Bridge::to_inner(ds[1], dx_, layout, plan_only);
    x_ = Bridge::to_inner(ds[0], dx_, layout, plan_only);
    dnnl::batch_normalization_forward::primitive_desc hint =
        batchnorm_forward_pd(dnnl::prop_kind::forward_training, dx_, eps, kScaleShift, dnnl::primitive_attr());
    dnnl::batch_normalization_backward::primitive_desc pd =
        batchnorm_backward_pd(dx_, dx_, eps, kScaleShift, hint, base_attr());
    layout.need_scratchpad(pd);
    mean_ = Bridge::to_inner(memory_desc(d.inputs[2]), pd.mean_desc(), layout, plan_only);
    var_ = Bridge::to_inner(memory_desc(d.inputs[3]), pd.variance_desc(), layout, plan_only);
    gamma_ = Bridge::to_inner(memory_desc(d.inputs[4]), channel_desc(c), layout, plan_only);
    dgamma_ = Bridge::to_user(channel_desc(c), memory_desc(d.outputs[1]), layout, plan_only);
    dbeta_ = Bridge::to_user(channel_desc(c), memory_desc(d.outputs[2]), layout, plan_only);
    if (!plan_only) {
      log_impl("batchnorm backward", pd);
      bnorm_ = dnnl::batch_normalization_backward(pd);
    }
  }

  void run(const Run &r) const override {
    dnnl::memory dy = dy_.in(r, 1);
    dnnl::memory dgamma = dgamma_.out(r, 1), dbeta = dbeta_.out(r, 2);
    dnnl::memory gamma = gamma_.in(r, 4);
    ExecArgs args{{DNNL_ARG_SRC, x_.in(r, 0)},
                  {DNNL_ARG_DIFF_DST, dnnl::memory(dx_, cpu_engine(), dy.get_data_handle())},
                  {DNNL_ARG_MEAN, mean_.in(r, 2)},
                  {DNNL_ARG_VARIANCE, var_.in(r, 3)},
                  {DNNL_ARG_SCALE, gamma},
                  {DNNL_ARG_DIFF_SRC, r.output(dx_, 0)},
                  {DNNL_ARG_DIFF_SCALE, dgamma},
                  {DNNL_ARG_DIFF_SHIFT, dbeta}};
#if DNNL_VERSION_MAJOR < 3
    // oneDNN 2.6 insists on a shift input with use_shift, though no gradient depends on beta;
    // gamma's buffer (read only) stands in for it. oneDNN 3 refuses one.
    args.emplace(DNNL_ARG_SHIFT, gamma);
#endif
    r.execute(bnorm_, std::move(args));
    dgamma_.finish(r, dgamma, 1);
    dbeta_.finish(r, dbeta, 2);
    // oneDNN's f32 arithmetic overflows on inputs above about 2e19, where the exact dx can be
    // finite; NaN and infinities in the inputs take the exact path too (onednn_batchnorm_exact.h).
    if (find_special_values(r.args().outputs[0], desc_.outputs[0])) exact_batchnorm_backward(desc_, r.args());
  }

 private:
  nnrt_op_desc desc_;
  md dx_;
  Bridge x_, dy_, mean_, var_, gamma_, dgamma_, dbeta_;
  dnnl::batch_normalization_backward bnorm_;
};

}  // namespace

std::unique_ptr<Op> make_batchnorm(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  const bool training = (d.attrs.flags & NNRT_FLAG_TRAINING) != 0;
  if (training)
    check_common(d, 3, 3, 3, 3);
  else
    check_common(d, 5, 5, 1, 1);
  const nnrt_tensor_desc &x = d.inputs[0];
  require_compute_dtype({&x, &d.outputs[0]});
  require(x.ndim >= 2, "batchnorm: x must be [N, C, ...]");
  require(!has_zero_stride(x), "batchnorm: broadcast inputs are left to the reference backend");
  check_activation(d.outputs[0], x, "batchnorm: y dims differ from x's");
  const int64_t c = x.dims[1];
  for (int i = 1; i < d.n_inputs; ++i) check_channel_tensor(d.inputs[i], c, "batchnorm: a per-channel input is not [C]");
  for (int i = 1; i < d.n_outputs; ++i) check_channel_tensor(d.outputs[i], c, "batchnorm: mean or var is not [C]");
  auto op = std::make_unique<BatchnormOp>(d, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

std::unique_ptr<Op> make_batchnorm_backward(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 5, 5, 3, 3);
  const nnrt_tensor_desc &x = d.inputs[0];
  require_compute_dtype({&x, &d.inputs[1], &d.outputs[0]});
  require(x.ndim >= 2, "batchnorm backward: x must be [N, C, ...]");
  require(!has_zero_stride(x) && !has_zero_stride(d.inputs[1]),
          "batchnorm backward: broadcast inputs are left to the reference backend");
  check_activation(d.inputs[1], x, "batchnorm backward: dy dims differ from x's");
  check_activation(d.outputs[0], x, "batchnorm backward: dx dims differ from x's");
  const int64_t c = x.dims[1];
  for (int i = 2; i < 5; ++i) check_channel_tensor(d.inputs[i], c, "batchnorm backward: mean, var or gamma is not [C]");
  for (int i = 1; i < 3; ++i) check_channel_tensor(d.outputs[i], c, "batchnorm backward: dgamma or dbeta is not [C]");
  auto op = std::make_unique<BatchnormBackwardOp>(d, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
