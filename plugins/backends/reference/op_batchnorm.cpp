// NNRT_OP_BATCHNORM and NNRT_OP_BATCHNORM_BACKWARD over every dimension but 1 (channels) of
// x [N, C, ...] (rank >= 2), float dtypes; gamma, beta, mean and var are F32 [C].
//
// Statistics accumulate in f32 (f64 for f64 x) in the cascade order, two passes (mean, then the
// mean of squared deviations: the biased variance). With xhat = (x - mean) / sqrt(var + eps) and M
// the elements per channel, the backward pass is
//   dbeta = sum(dy), dgamma = sum(dy * xhat), dx = gamma / sqrt(var + eps) * (dy - dbeta/M - xhat * dgamma/M).
// Channels are independent; a channel's sums use the pool when there are few channels.
#include "dtype.h"
#include "op_kernel.h"
#include "strided.h"
#include "summation.h"
#include "validate.h"
#include "nnrt/kernels/batchnorm.h"

namespace nnrt::reference {
namespace {

// The elements of one channel of K tensors with x's dims: loop over the dims with dim 1 set to 1,
// offset by c * strides[1].
template <int K>
StridedLoop<K> channel_loop(const nnrt_tensor_desc *const (&tensors)[K]) {
  int64_t dims[NNRT_MAX_DIMS];
  const int64_t *strides[K];
  for (int d = 0; d < tensors[0]->ndim; ++d) dims[d] = d == 1 ? 1 : tensors[0]->dims[d];
  for (int k = 0; k < K; ++k) strides[k] = tensors[k]->strides;
  return make_strided_loop<K>(tensors[0]->ndim, dims, strides);
}

// Runs per_channel(c, parallel_inside) for every channel: in parallel over channels when there are
// enough of them, else one after another with the pool used inside each.
template <class F>
void for_each_channel(const Exec &exec, int64_t channels, int64_t per_channel_work, F per_channel) {
  if (channels < 2 * exec.threads) {
    for (int64_t c = 0; c < channels; ++c) per_channel(c, true);
    return;
  }
  const int64_t grain = per_channel_work >= kCheapGrain ? 1 : kCheapGrain / (per_channel_work + 1) + 1;
  parallel_for(exec, channels, grain, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) per_channel(c, false);
  });
}

const Exec kSerial{};

class BatchnormKernel final : public OpKernel {
 public:
  explicit BatchnormKernel(const OpSetup &setup)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), y_(setup.desc.outputs[0]),
        training_((setup.desc.attrs.flags & NNRT_FLAG_TRAINING) != 0), eps_(setup.desc.attrs.eps) {
    for (int i = 1; i < setup.desc.n_inputs; ++i) params_[i - 1] = setup.desc.inputs[i];  // gamma, beta[, mean, var]
    if (training_) {
      stats_[0] = setup.desc.outputs[1];
      stats_[1] = setup.desc.outputs[2];
    }
    x_terms_ = channel_loop<1>({&x_});
    y_x_ = channel_loop<2>({&y_, &x_});
  }

  void run(const nnrt_op_args &args) const override {
    visit_float(x_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using A = compute_t<T>;
      const T *x = input_ptr<T>(args, 0);
      T *y = output_ptr<T>(args, 0);
      const float *gamma = input_ptr<float>(args, 1), *beta = input_ptr<float>(args, 2);
      const int64_t channels = x_.dims[1], count = x_terms_.count;
      for_each_channel(exec_, channels, count, [&](int64_t c, bool parallel_inside) {
        const Exec &exec = parallel_inside ? exec_ : kSerial;
        const T *xc = x + c * x_.strides[1];
        A mean, var;
        if (training_) {
          mean = parallel_cascade_sum<A>(exec, x_terms_, xc, [](A v) { return v; }) / static_cast<A>(count);
          var = parallel_cascade_sum<A>(exec, x_terms_, xc, [mean](A v) { return (v - mean) * (v - mean); }) /
                static_cast<A>(count);
          output_ptr<float>(args, 1)[c * stats_[0].strides[0]] = static_cast<float>(mean);
          output_ptr<float>(args, 2)[c * stats_[1].strides[0]] = static_cast<float>(var);
        } else {
          mean = static_cast<A>(input_ptr<float>(args, 3)[c * params_[2].strides[0]]);
          var = static_cast<A>(input_ptr<float>(args, 4)[c * params_[3].strides[0]]);
        }
        const A scale = kernels::bn_scale(static_cast<A>(gamma[c * params_[0].strides[0]]), var, static_cast<A>(eps_));
        const A shift = static_cast<A>(beta[c * params_[1].strides[0]]);
        T *yc = y + c * y_.strides[1];
        parallel_for(exec, y_x_.count, kCheapGrain, [&](int64_t begin, int64_t end) {
          for_each_run(y_x_, begin, end, [&](const int64_t *o, int64_t n) {
            const int64_t sy = y_x_.inner_stride(0), sx = y_x_.inner_stride(1);
            for (int64_t i = 0; i < n; ++i)
              store(yc + o[0] + i * sy, kernels::bn_forward(load(xc + o[1] + i * sx), mean, scale, shift));
          });
        });
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc x_, y_, params_[4] = {}, stats_[2] = {};
  bool training_;
  double eps_;
  StridedLoop<1> x_terms_;
  StridedLoop<2> y_x_;
};

class BatchnormBackwardKernel final : public OpKernel {
 public:
  explicit BatchnormBackwardKernel(const OpSetup &setup)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), dy_(setup.desc.inputs[1]), mean_(setup.desc.inputs[2]),
        var_(setup.desc.inputs[3]), gamma_(setup.desc.inputs[4]), dx_(setup.desc.outputs[0]),
        dgamma_(setup.desc.outputs[1]), dbeta_(setup.desc.outputs[2]), eps_(setup.desc.attrs.eps) {
    dy_terms_ = channel_loop<1>({&dy_});
    x_dy_ = channel_loop<2>({&x_, &dy_});
    dx_x_dy_ = channel_loop<3>({&dx_, &x_, &dy_});
  }

  void run(const nnrt_op_args &args) const override {
    visit_float(x_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using A = compute_t<T>;
      const T *x = input_ptr<T>(args, 0), *dy = input_ptr<T>(args, 1);
      const float *mean_in = input_ptr<float>(args, 2), *var_in = input_ptr<float>(args, 3),
                  *gamma_in = input_ptr<float>(args, 4);
      T *dx = output_ptr<T>(args, 0);
      float *dgamma = output_ptr<float>(args, 1), *dbeta = output_ptr<float>(args, 2);
      const int64_t channels = x_.dims[1], count = dy_terms_.count;
      for_each_channel(exec_, channels, count, [&](int64_t c, bool parallel_inside) {
        const Exec &exec = parallel_inside ? exec_ : kSerial;
        const T *xc = x + c * x_.strides[1], *dyc = dy + c * dy_.strides[1];
        const A mean = static_cast<A>(mean_in[c * mean_.strides[0]]);
        const A inv_std = kernels::bn_inv_std(static_cast<A>(var_in[c * var_.strides[0]]), static_cast<A>(eps_));
        const A gamma = static_cast<A>(gamma_in[c * gamma_.strides[0]]);
        const A sum_dy = parallel_cascade_sum<A>(exec, dy_terms_, dyc, [](A v) { return v; });
        const A sum_dy_xhat = parallel_cascade_sum<A>(exec, x_dy_, [&](CascadeSum<A> &sum, const int64_t *o, int64_t n) {
          const T *xr = xc + o[0], *dyr = dyc + o[1];
          const int64_t sx = x_dy_.inner_stride(0), sdy = x_dy_.inner_stride(1);
          sum.add_indexed(n, [&](int64_t i) { return load(dyr + i * sdy) * ((load(xr + i * sx) - mean) * inv_std); });
        });
        dbeta[c * dbeta_.strides[0]] = static_cast<float>(sum_dy);
        dgamma[c * dgamma_.strides[0]] = static_cast<float>(sum_dy_xhat);
        const A scale = gamma * inv_std, mean_dy = sum_dy / static_cast<A>(count),
                mean_dy_xhat = sum_dy_xhat / static_cast<A>(count);
        T *dxc = dx + c * dx_.strides[1];
        parallel_for(exec, dx_x_dy_.count, kCheapGrain, [&](int64_t begin, int64_t end) {
          for_each_run(dx_x_dy_, begin, end, [&](const int64_t *o, int64_t n) {
            const int64_t sdx = dx_x_dy_.inner_stride(0), sx = dx_x_dy_.inner_stride(1), sdy = dx_x_dy_.inner_stride(2);
            for (int64_t i = 0; i < n; ++i) {
              const A xhat = (load(xc + o[1] + i * sx) - mean) * inv_std;
              store(dxc + o[0] + i * sdx,
                    kernels::bn_backward(load(dyc + o[2] + i * sdy), xhat, scale, mean_dy, mean_dy_xhat));
            }
          });
        });
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc x_, dy_, mean_, var_, gamma_, dx_, dgamma_, dbeta_;
  double eps_;
  StridedLoop<1> dy_terms_;
  StridedLoop<2> x_dy_;
  StridedLoop<3> dx_x_dy_;
};

void expect_channel_vector(const nnrt_tensor_desc &t, const char *name, int64_t channels) {
  expect_dtype(t, name, dtype_bit(NNRT_DTYPE_F32));
  expect_dims(t, name, {channels});
}

void expect_x(const nnrt_op_desc &d, const nnrt_tensor_desc &x) {
  expect_dtype(x, "input x", kFloatDtypes);
  if (x.ndim < 2)
    fail(NNRT_ERR_SHAPE, "input x has dims %s; expected rank >= 2 ([N, C, ...])", dims_string(x).c_str());
  expect_attr(d.attrs.eps >= 0, "eps %g must be >= 0", d.attrs.eps);
}

}  // namespace

KernelPtr create_batchnorm(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const bool training = (d.attrs.flags & NNRT_FLAG_TRAINING) != 0;
  if (training)
    expect_counts(d, 3, 3, "(x, gamma, beta) in training", 3, 3, "(y, mean, var)");
  else
    expect_counts(d, 5, 5, "(x, gamma, beta, mean, var) in inference", 1, 1, "(y)");
  const nnrt_tensor_desc &x = d.inputs[0];
  expect_x(d, x);
  expect_same_dtype(d.outputs[0], "output y", x, "input x");
  expect_same_dims(d.outputs[0], "output y", x, "input x");
  const int64_t channels = x.dims[1];
  expect_channel_vector(d.inputs[1], "input gamma (f32 [C])", channels);
  expect_channel_vector(d.inputs[2], "input beta (f32 [C])", channels);
  if (training) {
    expect_channel_vector(d.outputs[1], "output mean (f32 [C])", channels);
    expect_channel_vector(d.outputs[2], "output var (f32 [C])", channels);
  } else {
    expect_channel_vector(d.inputs[3], "input mean (f32 [C])", channels);
    expect_channel_vector(d.inputs[4], "input var (f32 [C])", channels);
  }
  return std::make_unique<BatchnormKernel>(setup);
}

KernelPtr create_batchnorm_backward(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  expect_counts(d, 5, 5, "(x, dy, mean, var, gamma)", 3, 3, "(dx, dgamma, dbeta)");
  const nnrt_tensor_desc &x = d.inputs[0];
  expect_x(d, x);
  expect_same_dtype(d.inputs[1], "input dy", x, "input x");
  expect_same_dims(d.inputs[1], "input dy", x, "input x");
  expect_same_dtype(d.outputs[0], "output dx", x, "input x");
  expect_same_dims(d.outputs[0], "output dx", x, "input x");
  const int64_t channels = x.dims[1];
  expect_channel_vector(d.inputs[2], "input mean (f32 [C])", channels);
  expect_channel_vector(d.inputs[3], "input var (f32 [C])", channels);
  expect_channel_vector(d.inputs[4], "input gamma (f32 [C])", channels);
  expect_channel_vector(d.outputs[1], "output dgamma (f32 [C])", channels);
  expect_channel_vector(d.outputs[2], "output dbeta (f32 [C])", channels);
  return std::make_unique<BatchnormBackwardKernel>(setup);
}

}  // namespace nnrt::reference
