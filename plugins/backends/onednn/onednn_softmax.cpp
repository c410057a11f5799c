// NNRT_OP_SOFTMAX and NNRT_OP_SOFTMAX_BACKWARD through oneDNN's softmax primitive (softmax_v2 in 2.x)
// (softmax_accurate and softmax_log) along one axis, f32 or bf16.
//
// NaN and infinities: nnrt subtracts the line's maximum (NaN propagating) before exp, so a line
// holding NaN or +inf, or made only of -inf, comes out all NaN. oneDNN's max skips NaN and its
// exp(NaN) is +inf, which gives zeros or -inf instead; and log_softmax's backward, exp(y) * sum(dy),
// is +-inf rather than NaN where y is NaN. So the ops scan their input (one read) and, when it
// holds such values, patch the affected lines or elements after oneDNN's run.
#include <limits>

#include "onednn_common.h"
#include "onednn_special_values.h"

namespace nnrt::onednn {
namespace {

dnnl::algorithm softmax_alg(int32_t alg) {
  switch (alg) {
    case NNRT_SOFTMAX: return dnnl::algorithm::softmax_accurate;
    case NNRT_LOG_SOFTMAX: return dnnl::algorithm::softmax_log;
    default: refuse("softmax: unknown alg [" + std::to_string(alg) + "]");
  }
}

// Calls f(offset in a, offset in b) for the first element of every line along `axis` of two
// tensors with the same dims.
template <class F>
void for_each_line(const nnrt_tensor_desc &a, const nnrt_tensor_desc &b, int axis, F &&f) {
  int64_t idx[NNRT_MAX_DIMS] = {0};
  for (;;) {
    int64_t oa = 0, ob = 0;
    for (int d = 0; d < a.ndim; ++d) {
      oa += idx[d] * a.strides[d];
      ob += idx[d] * b.strides[d];
    }
    f(oa, ob);
    int d = a.ndim - 1;
    for (; d >= 0; --d) {
      if (d == axis) continue;
      if (++idx[d] < a.dims[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Forward: every line of x holding NaN or +inf, or only -inf, becomes all NaN in y.
void patch_forward(const void *x, const nnrt_tensor_desc &xd, void *y, const nnrt_tensor_desc &yd, int axis) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t n = xd.dims[axis], sx = xd.strides[axis], sy = yd.strides[axis];
  for_each_line(xd, yd, axis, [&](int64_t ox, int64_t oy) {
    bool poisoned = false, all_neg_inf = true;
    for (int64_t i = 0; i < n; ++i) {
      const float v = load_float(x, xd.dtype, ox + i * sx);
      poisoned = poisoned || v != v || v == std::numeric_limits<float>::infinity();
      all_neg_inf = all_neg_inf && v == -std::numeric_limits<float>::infinity();
    }
    if (poisoned || all_neg_inf)
      for (int64_t i = 0; i < n; ++i) store_float(y, yd.dtype, oy + i * sy, nan);
  });
}

// log_softmax backward: dx is NaN wherever y is NaN.
void patch_log_backward(const void *y, const nnrt_tensor_desc &yd, void *dx, const nnrt_tensor_desc &dxd, int axis) {
  const int64_t n = yd.dims[axis], sy = yd.strides[axis], sdx = dxd.strides[axis];
  for_each_line(yd, dxd, axis, [&](int64_t oy, int64_t odx) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = load_float(y, yd.dtype, oy + i * sy);
      if (v != v) store_float(dx, dxd.dtype, odx + i * sdx, v);
    }
  });
}

void check_same_dims(const nnrt_tensor_desc &a, const nnrt_tensor_desc &b) {
  require(a.ndim == b.ndim, "softmax: tensors of different ranks");
  for (int i = 0; i < a.ndim; ++i) require(a.dims[i] == b.dims[i], "softmax: tensors of different dims");
}

class SoftmaxOp : public Op {
 public:
  SoftmaxOp(const nnrt_op_desc &d, bool plan_only)
      : y_(memory_desc(d.outputs[0])), x_desc_(d.inputs[0]), y_desc_(d.outputs[0]), axis_(d.attrs.axis) {
    x_ = readable_input(d.inputs[0], y_, layout, plan_only);
    softmax_forward::primitive_desc pd = make_pd<softmax_forward>(
        base_attr(), dnnl::prop_kind::forward_training, softmax_alg(d.attrs.alg), x_.inner(), y_, d.attrs.axis);
    layout.need_scratchpad(pd);
    if (!plan_only) {
      log_impl("softmax", pd);
      softmax_ = softmax_forward(pd);
    }
  }

  void run(const Run &r) const override {
    const nnrt_op_args &a = r.args();
    const bool special = find_special_values(a.inputs[0], x_desc_) != 0;
    r.execute(softmax_, {{DNNL_ARG_SRC, x_.in(r, 0)}, {DNNL_ARG_DST, r.output(y_, 0)}});
    if (special) {
      thread_stream().wait();
      patch_forward(a.inputs[0], x_desc_, a.outputs[0], y_desc_, axis_);
    }
  }

 private:
  md y_;
  nnrt_tensor_desc x_desc_, y_desc_;
  int axis_;
  Bridge x_;
  softmax_forward softmax_;
};

class SoftmaxBackwardOp : public Op {
 public:
  SoftmaxBackwardOp(const nnrt_op_desc &d, bool plan_only)
      : dx_(memory_desc(d.outputs[0])), is_log_(d.attrs.alg == NNRT_LOG_SOFTMAX), y_desc_(d.inputs[1]),
        dx_desc_(d.outputs[0]), axis_(d.attrs.axis) {
    dy_ = readable_input(d.inputs[0], dx_, layout, plan_only);
    y_ = readable_input(d.inputs[1], dx_, layout, plan_only);
    dnnl::algorithm alg = softmax_alg(d.attrs.alg);
    softmax_forward::primitive_desc hint = make_pd<softmax_forward>(
        dnnl::primitive_attr(), dnnl::prop_kind::forward_training, alg, dx_, y_.inner(), d.attrs.axis);
    softmax_backward::primitive_desc pd =
        make_backward_pd<softmax_backward>(hint, base_attr(), alg, dx_, dy_.inner(), y_.inner(), d.attrs.axis);
    layout.need_scratchpad(pd);
    if (!plan_only) {
      log_impl("softmax backward", pd);
      softmax_ = softmax_backward(pd);
    }
  }

  void run(const Run &r) const override {
    const nnrt_op_args &a = r.args();
    r.execute(softmax_, {{DNNL_ARG_DIFF_DST, dy_.in(r, 0)}, {DNNL_ARG_DST, y_.in(r, 1)},
                         {DNNL_ARG_DIFF_SRC, r.output(dx_, 0)}});
    if (is_log_ && (find_special_values(a.inputs[1], y_desc_) & kNaN)) {
      thread_stream().wait();
      patch_log_backward(a.inputs[1], y_desc_, a.outputs[0], dx_desc_, axis_);
    }
  }

 private:
  md dx_;
  bool is_log_;
  nnrt_tensor_desc y_desc_, dx_desc_;
  int axis_;
  Bridge dy_, y_;
  softmax_backward softmax_;
};

}  // namespace

std::unique_ptr<Op> make_softmax(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 1, 1, 1, 1);
  require_compute_dtype({&d.inputs[0], &d.outputs[0]});
  check_same_dims(d.inputs[0], d.outputs[0]);
  require(d.attrs.axis >= 0 && d.attrs.axis < d.inputs[0].ndim, "softmax: axis outside the tensor's rank");
  auto op = std::make_unique<SoftmaxOp>(d, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

std::unique_ptr<Op> make_softmax_backward(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 2, 2, 1, 1);
  require_compute_dtype({&d.inputs[0], &d.inputs[1], &d.outputs[0]});
  check_same_dims(d.inputs[0], d.outputs[0]);
  check_same_dims(d.inputs[1], d.outputs[0]);
  require(d.attrs.axis >= 0 && d.attrs.axis < d.outputs[0].ndim, "softmax backward: axis outside the tensor's rank");
  auto op = std::make_unique<SoftmaxBackwardOp>(d, b.plan_only);
  return b.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
