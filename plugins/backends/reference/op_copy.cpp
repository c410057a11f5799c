// NNRT_OP_COPY: y = x converted to y's dtype (any of the 8 dtypes both ways), over any strides.
// The conversion rules are in dtype.h (convert): floats to f16/bf16 round to nearest even with a
// single rounding, floats to integers truncate toward zero with NaN giving 0 and saturation,
// integers to narrower integers saturate, anything to BOOL is x != 0.
#include <string.h>

#include "dtype.h"
#include "elementwise.h"
#include "op_kernel.h"
#include "validate.h"

namespace nnrt::reference {
namespace {

class CopyKernel final : public OpKernel {
 public:
  explicit CopyKernel(const OpSetup &setup)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), y_(setup.desc.outputs[0]) {
    loop_ = memory_order_loop_over<2>({&y_, &x_});
  }

  void run(const nnrt_op_args &args) const override {
    if (loop_.count == 0) return;
    visit_all(x_.dtype, [&](auto x_type) {
      visit_all(y_.dtype, [&](auto y_type) {
        using X = typename decltype(x_type)::type;
        using Y = typename decltype(y_type)::type;
        copy<X, Y>(input_ptr<X>(args, 0), output_ptr<Y>(args, 0));
      });
    });
  }

 private:
  template <class X, class Y>
  void copy(const X *x, Y *y) const {
    parallel_for(exec_, loop_.count, kCheapGrain, [&](int64_t begin, int64_t end) {
      for_each_run(loop_, begin, end, [&](const int64_t *o, int64_t n) {
        const int64_t sy = loop_.inner_stride(0), sx = loop_.inner_stride(1);
        Y *yr = y + o[0];
        const X *xr = x + o[1];
        if constexpr (std::is_same_v<X, Y>) {
          if (sy == 1 && sx == 1) {
            memcpy(yr, xr, static_cast<size_t>(n) * sizeof(X));
            return;
          }
        }
        if (sy == 1 && sx == 1) {
          for (int64_t i = 0; i < n; ++i) yr[i] = convert<Y>(xr[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) yr[i * sy] = convert<Y>(xr[i * sx]);
        }
      });
    });
  }

  Exec exec_;
  nnrt_tensor_desc x_, y_;
  StridedLoop<2> loop_;
};

}  // namespace

KernelPtr create_copy(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  expect_same_dims(d.outputs[0], "output y", d.inputs[0], "input x");
  return std::make_unique<CopyKernel>(setup);
}

}  // namespace nnrt::reference
