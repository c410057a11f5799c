// NNRT_OP_SOFTMAX and NNRT_OP_SOFTMAX_BACKWARD along attrs.axis, for float dtypes.
//
// Forward subtracts the line's maximum before exp (stable), and sums in the cascade order:
//   softmax     y = exp(x - m) / sum(exp(x - m))
//   log_softmax y = (x - m) - log(sum(exp(x - m)))
// Backward, from the forward output y:
//   softmax     dx = y * (dy - sum(dy * y))
//   log_softmax dx = dy - exp(y) * sum(dy)
#include "dtype.h"
#include "op_kernel.h"
#include "strided.h"
#include "summation.h"
#include "validate.h"
#include "nnrt/kernels/fmath.h"

namespace nnrt::reference {
namespace {

// Lines along the axis of K tensors with the same dims.
template <int K>
struct Lines {
  StridedLoop<K> starts;  // over every dim but the axis
  int64_t length = 0;
  int64_t stride[K] = {};

  Lines(const nnrt_tensor_desc *const (&tensors)[K], int axis) {
    int64_t dims[NNRT_MAX_DIMS];
    const int64_t *strides[K];
    for (int d = 0; d < tensors[0]->ndim; ++d) dims[d] = d == axis ? 1 : tensors[0]->dims[d];
    for (int k = 0; k < K; ++k) {
      strides[k] = tensors[k]->strides;
      stride[k] = tensors[k]->strides[axis];
    }
    starts = make_strided_loop<K>(tensors[0]->ndim, dims, strides);
    length = tensors[0]->dims[axis];
  }

  // fn(offsets of the line start) for every line, in parallel.
  template <class F>
  void for_each(const Exec &exec, F fn) const {
    if (starts.count == 0 || length == 0) return;
    const int64_t grain = length >= kExpensiveGrain ? 1 : kExpensiveGrain / length;
    parallel_for(exec, starts.count, grain, [&](int64_t begin, int64_t end) {
      for_each_run(starts, begin, end, [&](const int64_t *o, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          int64_t offsets[K];
          for (int k = 0; k < K; ++k) offsets[k] = o[k] + i * starts.inner_stride(k);
          fn(static_cast<const int64_t *>(offsets));
        }
      });
    });
  }
};

class SoftmaxKernel final : public OpKernel {
 public:
  explicit SoftmaxKernel(const OpSetup &setup)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), y_(setup.desc.outputs[0]), log_(setup.desc.attrs.alg == NNRT_LOG_SOFTMAX),
        lines_({&y_, &x_}, setup.desc.attrs.axis) {}

  void run(const nnrt_op_args &args) const override {
    visit_float(x_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const T *x = input_ptr<T>(args, 0);
      T *y = output_ptr<T>(args, 0);
      const int64_t n = lines_.length, sx = lines_.stride[1], sy = lines_.stride[0];
      lines_.for_each(exec_, [&](const int64_t *o) {
        const T *xl = x + o[1];
        T *yl = y + o[0];
        C m = load(xl);
        for (int64_t i = 1; i < n; ++i) m = kernels::k_max_nan(m, load(xl + i * sx));
        // exp is computed twice rather than kept, so that no line needs scratch memory.
        CascadeSum<C> sum;
        sum.add_run(xl, sx, n, [m](C v) { return kernels::k_exp(v - m); });
        const C total = sum.result();
        if (log_) {
          const C log_sum = kernels::k_log(total);
          for (int64_t i = 0; i < n; ++i) store(yl + i * sy, (load(xl + i * sx) - m) - log_sum);
        } else {
          for (int64_t i = 0; i < n; ++i) store(yl + i * sy, kernels::k_exp(load(xl + i * sx) - m) / total);
        }
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc x_, y_;
  bool log_;
  Lines<2> lines_;
};

class SoftmaxBackwardKernel final : public OpKernel {
 public:
  explicit SoftmaxBackwardKernel(const OpSetup &setup)
      : exec_(setup.exec), dy_(setup.desc.inputs[0]), y_(setup.desc.inputs[1]), dx_(setup.desc.outputs[0]),
        log_(setup.desc.attrs.alg == NNRT_LOG_SOFTMAX), lines_({&dx_, &dy_, &y_}, setup.desc.attrs.axis) {}

  void run(const nnrt_op_args &args) const override {
    visit_float(dy_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const T *dy = input_ptr<T>(args, 0), *y = input_ptr<T>(args, 1);
      T *dx = output_ptr<T>(args, 0);
      const int64_t n = lines_.length, sdx = lines_.stride[0], sdy = lines_.stride[1], sy = lines_.stride[2];
      lines_.for_each(exec_, [&](const int64_t *o) {
        const T *dyl = dy + o[1], *yl = y + o[2];
        T *dxl = dx + o[0];
        CascadeSum<C> sum;
        if (log_) {
          sum.add_run(dyl, sdy, n, [](C v) { return v; });
          const C s = sum.result();
          for (int64_t i = 0; i < n; ++i)
            store(dxl + i * sdx, load(dyl + i * sdy) - kernels::k_exp(load(yl + i * sy)) * s);
        } else {
          for (int64_t i = 0; i < n; ++i) sum.add(load(dyl + i * sdy) * load(yl + i * sy));
          const C dot = sum.result();
          for (int64_t i = 0; i < n; ++i) {
            const C yv = load(yl + i * sy);
            store(dxl + i * sdx, yv * (load(dyl + i * sdy) - dot));
          }
        }
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc dy_, y_, dx_;
  bool log_;
  Lines<3> lines_;
};

void expect_softmax_attrs(const nnrt_op_desc &d, const nnrt_tensor_desc &x) {
  if (d.attrs.alg != NNRT_SOFTMAX && d.attrs.alg != NNRT_LOG_SOFTMAX)
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_softmax_alg (SOFTMAX 1, LOG_SOFTMAX 2)", d.attrs.alg);
  expect_attr(d.attrs.axis >= 0 && d.attrs.axis < x.ndim, "axis %d is outside the dimensions 0..%d of %s",
              d.attrs.axis, x.ndim - 1, dims_string(x).c_str());
}

}  // namespace

KernelPtr create_softmax(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &x = d.inputs[0];
  expect_dtype(x, "input x", kFloatDtypes);
  expect_same_dtype(d.outputs[0], "output y", x, "input x");
  expect_same_dims(d.outputs[0], "output y", x, "input x");
  expect_softmax_attrs(d, x);
  return std::make_unique<SoftmaxKernel>(setup);
}

KernelPtr create_softmax_backward(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &dy = d.inputs[0];
  expect_dtype(dy, "input dy", kFloatDtypes);
  expect_same_dtype(d.inputs[1], "input y", dy, "input dy");
  expect_same_dtype(d.outputs[0], "output dx", dy, "input dy");
  expect_same_dims(d.inputs[1], "input y", dy, "input dy");
  expect_same_dims(d.outputs[0], "output dx", dy, "input dy");
  expect_softmax_attrs(d, dy);
  return std::make_unique<SoftmaxBackwardKernel>(setup);
}

}  // namespace nnrt::reference
