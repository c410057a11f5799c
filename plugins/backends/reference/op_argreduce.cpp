// NNRT_OP_ARGREDUCE: y (I64; x's dims with 1 along attrs.axis) = the index along the axis of the
// largest (ARG_MAX) or smallest (ARG_MIN) element, for every numeric dtype. The first index wins
// ties, and NaN counts as the largest value: ARG_MAX returns the first NaN, ARG_MIN skips NaNs
// unless the whole line is NaN.
#include "nnrt/kernels/index_ops.h"
#include "dtype.h"
#include "op_kernel.h"
#include "strided.h"
#include "validate.h"

namespace nnrt::reference {
namespace {

class ArgReduceKernel final : public OpKernel {
 public:
  explicit ArgReduceKernel(const OpSetup &setup)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), y_(setup.desc.outputs[0]),
        alg_(setup.desc.attrs.alg), axis_(setup.desc.attrs.axis) {
    const int64_t *strides[2] = {y_.strides, x_.strides};
    outputs_ = make_strided_loop<2>(y_.ndim, y_.dims, strides);
    length_ = x_.dims[axis_];
    stride_ = x_.strides[axis_];
  }

  void run(const nnrt_op_args &args) const override {
    if (outputs_.count == 0) return;
    visit_numeric(x_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const T *x = input_ptr<T>(args, 0);
      int64_t *y = output_ptr<int64_t>(args, 0);
      const int64_t grain = length_ >= kCheapGrain ? 1 : kCheapGrain / (length_ > 0 ? length_ : 1);
      parallel_for(exec_, outputs_.count, grain, [&](int64_t begin, int64_t end) {
        for_each_run(outputs_, begin, end, [&](const int64_t *o, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            const T *line = x + o[1] + i * outputs_.inner_stride(1);
            C best = load(line);
            int64_t best_index = 0;
            for (int64_t k = 1; k < length_; ++k) {
              C v = load(line + k * stride_);
              if (kernels::arg_beats(alg_, v, best)) {
                best = v;
                best_index = k;
              }
            }
            y[o[0] + i * outputs_.inner_stride(0)] = best_index;
          }
        });
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc x_, y_;
  int alg_, axis_;
  int64_t length_ = 0, stride_ = 0;
  StridedLoop<2> outputs_;
};

}  // namespace

KernelPtr create_argreduce(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  if (d.attrs.alg != NNRT_ARG_MAX && d.attrs.alg != NNRT_ARG_MIN)
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_argreduce_alg (ARG_MAX 1, ARG_MIN 2)", d.attrs.alg);
  const nnrt_tensor_desc &x = d.inputs[0], &y = d.outputs[0];
  expect_dtype(x, "input x", kNumericDtypes);
  expect_dtype(y, "output y", dtype_bit(NNRT_DTYPE_I64));
  expect_attr(d.attrs.axis >= 0 && d.attrs.axis < x.ndim, "axis %d is outside x's dimensions 0..%d",
              d.attrs.axis, x.ndim - 1);
  int64_t expected[NNRT_MAX_DIMS];
  for (int k = 0; k < x.ndim; ++k) expected[k] = k == d.attrs.axis ? 1 : x.dims[k];
  expect_dims(y, "output y (size 1 along axis)", expected, x.ndim);
  if (x.dims[d.attrs.axis] == 0 && element_count(y) > 0)
    fail(NNRT_ERR_SHAPE, "x %s is empty along axis %d: an arg-reduction of nothing has no index",
         dims_string(x).c_str(), d.attrs.axis);
  return std::make_unique<ArgReduceKernel>(setup);
}

}  // namespace nnrt::reference
