// NNRT_OP_LAYERNORM and NNRT_OP_LAYERNORM_BACKWARD: each row (a position of the leading dims
// 0..axis-1 of x) normalized over its trailing dims axis..ndim-1, float dtypes; gamma, beta and the
// row statistics are F32.
//
// A row's statistics accumulate in f32 (f64 for f64 x) in the cascade order, two passes as in
// op_batchnorm.cpp (mean, then the mean of squared deviations); RMS normalization keeps mean 0, so
// its var is the mean of squares. The per-element formulas are batch normalization's
// (nnrt/kernels/batchnorm.h) with a row in place of a channel and g = gamma * dy in place of dy:
//   y = (x - mean) * (gamma * rstd) + beta
//   dx = rstd * (g - sum(g)/N - xhat * sum(g * xhat)/N)        (RMS: sum(g)/N left out)
// dgamma and dbeta sum over the rows instead, one normalized position at a time.
#include <vector>

#include "dtype.h"
#include "op_kernel.h"
#include "strided.h"
#include "summation.h"
#include "validate.h"
#include "nnrt/kernels/batchnorm.h"

namespace nnrt::reference {
namespace {

const Exec kSerial{};
// An absent gamma reads as 1 and an absent beta as 0: one element repeated with stride 0.
const float kOne = 1.0f, kZero = 0.0f;
const int64_t kNoStrides[NNRT_MAX_DIMS] = {};

// Where a kernel's tensors are: the row loop over R operands (leading dims) and the element loop of
// one row over four (trailing dims).
template <int R>
struct RowLayout {
  StridedLoop<R> rows;
  StridedLoop<4> elements;
  int64_t row_count = 0, row_length = 0;

  RowLayout(const nnrt_tensor_desc &x, int axis, const int64_t *const (&row_strides)[R],
            const int64_t *const (&element_strides)[4]) {
    rows = make_strided_loop<R>(axis, x.dims, row_strides);
    elements = make_strided_loop<4>(x.ndim - axis, x.dims + axis, element_strides);
    row_count = rows.count;
    row_length = elements.count;
  }

  // fn(offsets of the row's start in the R row operands, parallel_inside) for every row: in
  // parallel over rows when there are enough of them, else one after another with the pool used
  // inside each row.
  template <class F>
  void for_each_row(const Exec &exec, F fn) const {
    if (row_count == 0) return;
    const bool few_rows = row_count < 2 * exec.threads;
    const int64_t grain = few_rows ? row_count : row_length >= kCheapGrain ? 1 : kCheapGrain / (row_length + 1) + 1;
    parallel_for(few_rows ? kSerial : exec, row_count, grain, [&](int64_t begin, int64_t end) {
      for_each_run(rows, begin, end, [&](const int64_t *o, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          int64_t at[R];
          for (int k = 0; k < R; ++k) at[k] = o[k] + i * rows.inner_stride(k);
          fn(static_cast<const int64_t *>(at), few_rows);
        }
      });
    });
  }
};

template <class A>
A mean_of(A sum, int64_t n) {
  return n > 0 ? sum / static_cast<A>(n) : A(0);
}

class LayernormKernel final : public OpKernel {
 public:
  explicit LayernormKernel(const OpSetup &setup)
      : exec_(setup.exec), rms_(setup.desc.attrs.alg == NNRT_NORM_RMS), stats_(setup.desc.n_outputs == 3),
        has_gamma_(setup.desc.n_inputs > 1), has_beta_(setup.desc.n_inputs > 2), eps_(setup.desc.attrs.eps),
        layout_(setup.desc.inputs[0], setup.desc.attrs.axis,
                {setup.desc.inputs[0].strides, setup.desc.outputs[0].strides,
                 stats_ ? setup.desc.outputs[1].strides : kNoStrides, stats_ ? setup.desc.outputs[2].strides : kNoStrides},
                {setup.desc.inputs[0].strides + setup.desc.attrs.axis, setup.desc.outputs[0].strides + setup.desc.attrs.axis,
                 has_gamma_ ? setup.desc.inputs[1].strides : kNoStrides,
                 has_beta_ ? setup.desc.inputs[2].strides : kNoStrides}),
        x_elements_(make_strided_loop<1>(setup.desc.inputs[0].ndim - setup.desc.attrs.axis,
                                         setup.desc.inputs[0].dims + setup.desc.attrs.axis,
                                         {setup.desc.inputs[0].strides + setup.desc.attrs.axis})),
        dtype_(setup.desc.inputs[0].dtype) {}

  void run(const nnrt_op_args &args) const override {
    visit_float(dtype_, [&](auto type) {
      using T = typename decltype(type)::type;
      using A = compute_t<T>;
      const T *x = input_ptr<T>(args, 0);
      T *y = output_ptr<T>(args, 0);
      const float *gamma = has_gamma_ ? input_ptr<float>(args, 1) : &kOne;
      const float *beta = has_beta_ ? input_ptr<float>(args, 2) : &kZero;
      const int64_t n = layout_.row_length;
      const StridedLoop<4> &el = layout_.elements;
      layout_.for_each_row(exec_, [&](const int64_t *row, bool parallel_inside) {
        const Exec &exec = parallel_inside ? exec_ : kSerial;
        const T *xr = x + row[0];
        A mean = 0;
        if (!rms_) mean = mean_of(parallel_cascade_sum<A>(exec, x_elements_, xr, [](A v) { return v; }), n);
        const A var = mean_of(parallel_cascade_sum<A>(exec, x_elements_, xr, [mean](A v) { return (v - mean) * (v - mean); }), n);
        if (stats_) {
          output_ptr<float>(args, 1)[row[2]] = static_cast<float>(mean);
          output_ptr<float>(args, 2)[row[3]] = static_cast<float>(var);
        }
        const A rstd = kernels::bn_inv_std(var, static_cast<A>(eps_));
        T *yr = y + row[1];
        parallel_for(exec, n, kCheapGrain, [&](int64_t begin, int64_t end) {
          for_each_run(el, begin, end, [&](const int64_t *o, int64_t count) {
            for (int64_t i = 0; i < count; ++i) {
              const A g = static_cast<A>(gamma[o[2] + i * el.inner_stride(2)]);
              const A b = static_cast<A>(beta[o[3] + i * el.inner_stride(3)]);
              store(yr + o[1] + i * el.inner_stride(1), kernels::bn_forward(load(xr + o[0] + i * el.inner_stride(0)), mean, g * rstd, b));
            }
          });
        });
      });
    });
  }

 private:
  Exec exec_;
  bool rms_, stats_, has_gamma_, has_beta_;
  double eps_;
  RowLayout<4> layout_;  // rows of (x, y, mean, var); elements of (x, y, gamma, beta)
  StridedLoop<1> x_elements_;
  int32_t dtype_;
};

class LayernormBackwardKernel final : public OpKernel {
 public:
  explicit LayernormBackwardKernel(const OpSetup &setup)
      : exec_(setup.exec), rms_(setup.desc.attrs.alg == NNRT_NORM_RMS), has_gamma_(setup.desc.n_inputs == 5),
        param_grads_(setup.desc.n_outputs == 3), eps_(setup.desc.attrs.eps), dtype_(setup.desc.inputs[0].dtype) {
    const nnrt_op_desc &d = setup.desc;
    const int axis = d.attrs.axis;
    const nnrt_tensor_desc &x = d.inputs[0], &dy = d.inputs[1], &dx = d.outputs[0];
    const int64_t *gamma_strides = has_gamma_ ? d.inputs[4].strides : kNoStrides;
    // dx: rows of (x, dy, mean, var, dx); elements of (x, dy, dx, gamma).
    dx_layout_ = std::make_unique<RowLayout<5>>(
        x, axis, RowStrides{x.strides, dy.strides, d.inputs[2].strides, d.inputs[3].strides, dx.strides},
        ElementStrides{x.strides + axis, dy.strides + axis, dx.strides + axis, gamma_strides});
    // dgamma, dbeta: elements of (x, dy, dgamma, dbeta), each summed over the same rows.
    if (param_grads_)
      param_elements_ = make_strided_loop<4>(x.ndim - axis, x.dims + axis,
                                             ElementStrides{x.strides + axis, dy.strides + axis, d.outputs[1].strides, d.outputs[2].strides});
  }

  void run(const nnrt_op_args &args) const override {
    visit_float(dtype_, [&](auto type) {
      using T = typename decltype(type)::type;
      using A = compute_t<T>;
      const T *x = input_ptr<T>(args, 0), *dy = input_ptr<T>(args, 1);
      const float *mean_in = input_ptr<float>(args, 2), *var_in = input_ptr<float>(args, 3);
      const float *gamma = has_gamma_ ? input_ptr<float>(args, 4) : &kOne;
      T *dx = output_ptr<T>(args, 0);
      const RowLayout<5> &layout = *dx_layout_;
      const StridedLoop<4> &el = layout.elements;
      const A eps = static_cast<A>(eps_);
      const int64_t n = layout.row_length;
      layout.for_each_row(exec_, [&](const int64_t *row, bool parallel_inside) {
        const Exec &exec = parallel_inside ? exec_ : kSerial;
        const T *xr = x + row[0], *dyr = dy + row[1];
        const A mean = static_cast<A>(mean_in[row[2]]);
        const A rstd = kernels::bn_inv_std(static_cast<A>(var_in[row[3]]), eps);
        auto g_at = [&](const int64_t *o, int64_t i) {
          return static_cast<A>(gamma[o[3] + i * el.inner_stride(3)]) * load(dyr + o[1] + i * el.inner_stride(1));
        };
        auto xhat_at = [&](const int64_t *o, int64_t i) { return (load(xr + o[0] + i * el.inner_stride(0)) - mean) * rstd; };
        const A sum_g = rms_ ? A(0) : parallel_cascade_sum<A>(exec, el, [&](CascadeSum<A> &sum, const int64_t *o, int64_t count) {
          sum.add_indexed(count, [&](int64_t i) { return g_at(o, i); });
        });
        const A sum_g_xhat = parallel_cascade_sum<A>(exec, el, [&](CascadeSum<A> &sum, const int64_t *o, int64_t count) {
          sum.add_indexed(count, [&](int64_t i) { return g_at(o, i) * xhat_at(o, i); });
        });
        const A mean_g = mean_of(sum_g, n), mean_g_xhat = mean_of(sum_g_xhat, n);
        T *dxr = dx + row[4];
        parallel_for(exec, n, kCheapGrain, [&](int64_t begin, int64_t end) {
          for_each_run(el, begin, end, [&](const int64_t *o, int64_t count) {
            for (int64_t i = 0; i < count; ++i)
              store(dxr + o[2] + i * el.inner_stride(2),
                    kernels::bn_backward(g_at(o, i), xhat_at(o, i), rstd, mean_g, mean_g_xhat));
          });
        });
      });
      if (param_grads_) parameter_gradients<T, A>(args, x, dy, mean_in, var_in);
    });
  }

 private:
  using RowStrides = const int64_t *const[5];
  using ElementStrides = const int64_t *const[4];

  // dgamma = sum over rows of dy * xhat, dbeta = sum over rows of dy: parallel over the normalized
  // positions, each summing its column of rows in the cascade order.
  template <class T, class A>
  void parameter_gradients(const nnrt_op_args &args, const T *x, const T *dy, const float *mean_in, const float *var_in) const {
    float *dgamma = output_ptr<float>(args, 1), *dbeta = output_ptr<float>(args, 2);
    const StridedLoop<5> &rows = dx_layout_->rows;
    const StridedLoop<4> &el = param_elements_;
    const A eps = static_cast<A>(eps_);
    // Each row's mean and 1 / sqrt(var + eps), once, in the rows' order.
    std::vector<A> row_mean, row_rstd;
    row_mean.reserve(static_cast<size_t>(rows.count));
    row_rstd.reserve(static_cast<size_t>(rows.count));
    for_each_run(rows, 0, rows.count, [&](const int64_t *r, int64_t nr) {
      for (int64_t j = 0; j < nr; ++j) {
        row_mean.push_back(static_cast<A>(mean_in[r[2] + j * rows.inner_stride(2)]));
        row_rstd.push_back(kernels::bn_inv_std(static_cast<A>(var_in[r[3] + j * rows.inner_stride(3)]), eps));
      }
    });
    const int64_t grain = dx_layout_->row_count >= kCheapGrain ? 1 : kCheapGrain / (dx_layout_->row_count + 1) + 1;
    parallel_for(exec_, el.count, grain, [&](int64_t begin, int64_t end) {
      for_each_run(el, begin, end, [&](const int64_t *o, int64_t count) {
        for (int64_t i = 0; i < count; ++i) {
          const T *xp = x + o[0] + i * el.inner_stride(0), *dyp = dy + o[1] + i * el.inner_stride(1);
          CascadeSum<A> sum_dy, sum_dy_xhat;
          size_t row = 0;
          for_each_run(rows, 0, rows.count, [&](const int64_t *r, int64_t nr) {
            for (int64_t j = 0; j < nr; ++j, ++row) {
              const A d = load(dyp + r[1] + j * rows.inner_stride(1));
              sum_dy.add(d);
              sum_dy_xhat.add(d * ((load(xp + r[0] + j * rows.inner_stride(0)) - row_mean[row]) * row_rstd[row]));
            }
          });
          dgamma[o[2] + i * el.inner_stride(2)] = static_cast<float>(sum_dy_xhat.result());
          dbeta[o[3] + i * el.inner_stride(3)] = static_cast<float>(sum_dy.result());
        }
      });
    });
  }

  Exec exec_;
  bool rms_, has_gamma_, param_grads_;
  double eps_;
  int32_t dtype_;
  std::unique_ptr<RowLayout<5>> dx_layout_;
  StridedLoop<4> param_elements_;
};

// x, the alg and the attributes both directions share.
void expect_norm_x(const nnrt_op_desc &d, const nnrt_tensor_desc &x) {
  expect_dtype(x, "input x", kFloatDtypes);
  if (d.attrs.alg != NNRT_NORM_LAYER && d.attrs.alg != NNRT_NORM_RMS)
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_norm_alg (LAYER 1, RMS 2)", d.attrs.alg);
  expect_attr(d.attrs.axis >= 0 && d.attrs.axis < x.ndim, "axis %d is outside the dimensions 0..%d of x %s",
              d.attrs.axis, x.ndim - 1, dims_string(x).c_str());
  expect_attr(d.attrs.eps >= 0, "eps %g must be >= 0", d.attrs.eps);
}

// An F32 tensor with x's normalized dims (gamma, beta and their gradients).
void expect_parameter(const nnrt_tensor_desc &t, const char *name, const nnrt_tensor_desc &x, int axis) {
  expect_dtype(t, name, dtype_bit(NNRT_DTYPE_F32));
  expect_dims(t, name, x.dims + axis, x.ndim - axis);
}

// An F32 tensor with x's row dims (mean and var).
void expect_statistic(const nnrt_tensor_desc &t, const char *name, const nnrt_tensor_desc &x, int axis) {
  expect_dtype(t, name, dtype_bit(NNRT_DTYPE_F32));
  expect_dims(t, name, x.dims, axis);
}

}  // namespace

KernelPtr create_layernorm(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &x = d.inputs[0];
  expect_norm_x(d, x);
  if (d.n_outputs == 2) fail(NNRT_ERR_INVALID_ARGUMENT, "outputs: expected (y) or (y, mean, var), got 2 outputs");
  const int axis = d.attrs.axis;
  expect_same_dtype(d.outputs[0], "output y", x, "input x");
  expect_same_dims(d.outputs[0], "output y", x, "input x");
  if (d.n_inputs > 1) expect_parameter(d.inputs[1], "input gamma (f32, x's normalized dims)", x, axis);
  if (d.n_inputs > 2) expect_parameter(d.inputs[2], "input beta (f32, x's normalized dims)", x, axis);
  if (d.n_outputs == 3) {
    expect_statistic(d.outputs[1], "output mean (f32, x's row dims)", x, axis);
    expect_statistic(d.outputs[2], "output var (f32, x's row dims)", x, axis);
  }
  return std::make_unique<LayernormKernel>(setup);
}

KernelPtr create_layernorm_backward(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &x = d.inputs[0];
  expect_norm_x(d, x);
  if (d.n_outputs == 2)
    fail(NNRT_ERR_INVALID_ARGUMENT, "outputs: expected (dx) or (dx, dgamma, dbeta), got 2 outputs");
  const int axis = d.attrs.axis;
  expect_same_dtype(d.inputs[1], "input dy", x, "input x");
  expect_same_dims(d.inputs[1], "input dy", x, "input x");
  expect_statistic(d.inputs[2], "input mean (f32, x's row dims)", x, axis);
  expect_statistic(d.inputs[3], "input var (f32, x's row dims)", x, axis);
  if (d.n_inputs == 5) expect_parameter(d.inputs[4], "input gamma (f32, x's normalized dims)", x, axis);
  expect_same_dtype(d.outputs[0], "output dx", x, "input x");
  expect_same_dims(d.outputs[0], "output dx", x, "input x");
  if (d.n_outputs == 3) {
    expect_parameter(d.outputs[1], "output dgamma (f32, x's normalized dims)", x, axis);
    expect_parameter(d.outputs[2], "output dbeta (f32, x's normalized dims)", x, axis);
  }
  return std::make_unique<LayernormBackwardKernel>(setup);
}

}  // namespace nnrt::reference
