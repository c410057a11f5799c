// NNRT_OP_QUANTIZE: y = saturate(round_half_to_even(x / scale) + zero_point) into U8 or I8, NaN to
// the zero point, over any strides (nnrt/kernels/quantize.h).
#include "elementwise.h"
#include "nnrt/kernels/quantize.h"
#include "op_kernel.h"
#include "quantized_common.h"

namespace nnrt::reference {
namespace {

class QuantizeKernel final : public OpKernel {
 public:
  explicit QuantizeKernel(const OpSetup &setup)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), y_(setup.desc.outputs[0]), scale_(setup.desc.attrs.scale),
        zero_point_(setup.desc.attrs.zero_point) {
    loop_ = memory_order_loop_over<2>({&y_, &x_});
  }

  void run(const nnrt_op_args &args) const override {
    if (loop_.count == 0) return;
    if (y_.dtype == NNRT_DTYPE_U8) quantize<uint8_t>(input_ptr<float>(args, 0), output_ptr<uint8_t>(args, 0), 0, 255);
    else quantize<int8_t>(input_ptr<float>(args, 0), output_ptr<int8_t>(args, 0), -128, 127);
  }

 private:
  template <class Q>
  void quantize(const float *x, Q *y, int lo, int hi) const {
    parallel_for(exec_, loop_.count, kCheapGrain, [&](int64_t begin, int64_t end) {
      for_each_run(loop_, begin, end, [&](const int64_t *o, int64_t n) {
        const int64_t sy = loop_.inner_stride(0), sx = loop_.inner_stride(1);
        for (int64_t i = 0; i < n; ++i)
          y[o[0] + i * sy] = static_cast<Q>(kernels::quantize_value(x[o[1] + i * sx], scale_, zero_point_, lo, hi));
      });
    });
  }

  Exec exec_;
  nnrt_tensor_desc x_, y_;
  double scale_;
  int zero_point_;
  StridedLoop<2> loop_;
};

}  // namespace

KernelPtr create_quantize(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  expect_dtype(d.inputs[0], "input x", dtype_bit(NNRT_DTYPE_F32));
  expect_dtype(d.outputs[0], "output y", kQuantizedDtypes);
  expect_same_dims(d.outputs[0], "output y", d.inputs[0], "input x");
  expect_quantization(d.attrs, d.outputs[0].dtype, "output y");
  return std::make_unique<QuantizeKernel>(setup);
}

}  // namespace nnrt::reference
