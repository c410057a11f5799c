// NNRT_OP_CONV2D_INT8: y[n, o, oh, ow] = fused(scale * scales[o] * acc + bias[o]), acc the exact
// int32 sum over o's window of (x - zero_point) * w, with x U8 or I8, w I8, and the padding holding
// the zero point (so it adds nothing). The oracle of the optimized backends' int8 convolutions:
// plain loops over the window, output rows split over the pool.
#include <vector>

#include "conv2d_common.h"
#include "op_kernel.h"
#include "quantized_common.h"
#include "strided.h"

namespace nnrt::reference {
namespace {

class Conv2dInt8Kernel final : public OpKernel {
 public:
  Conv2dInt8Kernel(const OpSetup &setup, const ConvGeometry &g) : exec_(setup.exec), g_(g), desc_(setup.desc) {}

  void run(const nnrt_op_args &args) const override {
    if (desc_.inputs[0].dtype == NNRT_DTYPE_U8) convolve(input_ptr<uint8_t>(args, 0), args);
    else convolve(input_ptr<int8_t>(args, 0), args);
  }

 private:
  // One task per (image, output channel, output row): the sums of that row of y.
  template <class X>
  void convolve(const X *x, const nnrt_op_args &args) const {
    const int8_t *w = input_ptr<int8_t>(args, 1);
    float *y = output_ptr<float>(args, 0);
    const nnrt_tensor_desc &xt = desc_.inputs[0], &wt = desc_.inputs[1], &yt = desc_.outputs[0];
    const int32_t zero_point = desc_.attrs.zero_point;
    const Int8Epilogue epilogue = int8_epilogue(desc_, args);
    const int64_t rows = g_.n * g_.o * g_.oh;
    const int64_t grain = std::max<int64_t>(1, kCheapGrain / std::max<int64_t>(1, g_.ow * g_.taps()));
    parallel_for(exec_, rows, grain, [&](int64_t begin, int64_t end) {
      std::vector<int32_t> acc(static_cast<size_t>(g_.ow));
      std::vector<float> row(static_cast<size_t>(g_.ow));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t image = r / (g_.o * g_.oh), o = r / g_.oh % g_.o, oh = r % g_.oh;
        const int64_t c0 = o / g_.og * g_.cg;
        for (int64_t ow = 0; ow < g_.ow; ++ow) {
          int32_t sum = 0;
          for (int64_t c = 0; c < g_.cg; ++c) {
            for (int64_t kh = 0; kh < g_.kh; ++kh) {
              const int64_t ih = oh * g_.stride_h - g_.pad_top + kh * g_.dilation_h;
              if (ih < 0 || ih >= g_.h) continue;
              for (int64_t kw = 0; kw < g_.kw; ++kw) {
                const int64_t iw = ow * g_.stride_w - g_.pad_left + kw * g_.dilation_w;
                if (iw < 0 || iw >= g_.w) continue;
                const int32_t xv = static_cast<int32_t>(x[image * xt.strides[0] + (c0 + c) * xt.strides[1] +
                                                          ih * xt.strides[2] + iw * xt.strides[3]]) -
                                   zero_point;
                sum += xv * static_cast<int32_t>(
                                w[o * wt.strides[0] + c * wt.strides[1] + kh * wt.strides[2] + kw * wt.strides[3]]);
              }
            }
          }
          acc[static_cast<size_t>(ow)] = sum;
        }
        for (int64_t ow = 0; ow < g_.ow; ++ow) {
          epilogue.apply(&acc[static_cast<size_t>(ow)], o, 1, &row[static_cast<size_t>(ow)]);
          y[image * yt.strides[0] + o * yt.strides[1] + oh * yt.strides[2] + ow * yt.strides[3]] = row[ow];
        }
      }
    });
  }

  Exec exec_;
  ConvGeometry g_;
  nnrt_op_desc desc_;
};

}  // namespace

KernelPtr create_conv2d_int8(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const ConvGeometry g = make_conv_geometry(d.attrs, d.inputs[0], "input x", d.inputs[1], "input w", d.outputs[0],
                                            "output y");
  expect_int8_operands(d, "input x", "input w", g.o, g.taps());
  return std::make_unique<Conv2dInt8Kernel>(setup, g);
}

}  // namespace nnrt::reference
