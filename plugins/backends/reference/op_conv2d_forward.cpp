// NNRT_OP_CONV2D: y[N,O,OH,OW] = fused(conv(x[N,C,H,W], w[O,C/groups,KH,KW]) + bias[O]), float
// dtypes, any strides, with stride, padding, dilation and groups.
//
// Per group, y_g = W_g [Og x taps] * im2col(x)_g [taps x N*OH*OW]: one product over the whole batch,
// so that even small images make wide tiles; the im2col matrix is gathered while packing.
#include <vector>

#include "activation.h"
#include "conv2d_common.h"
#include "conv2d_packers.h"
#include "dtype.h"
#include "gemm.h"
#include "op_kernel.h"
#include "validate.h"

namespace nnrt::reference {
namespace {

// Receives tiles of y_g [Og x columns], adds the bias, applies the activation and stores.
template <class T, class C>
struct ConvOutputSink {
  T *y;
  Strides4 s;
  const ConvGeometry *g;
  const T *bias;  // or NULL
  int64_t bias_stride;
  int fused;
  C alpha, beta;

  void store(int64_t group, int64_t i0, int64_t mc, int64_t j0, int64_t nc, C *tile, int64_t ld) const {
    int64_t column_offset[gemm::Blocking<C>::NC];
    ColumnCursor cursor(*g, j0);
    for (int64_t j = 0; j < nc; ++j, cursor.next()) column_offset[j] = cursor.output_offset(s);
    for (int64_t i = 0; i < mc; ++i) {
      const int64_t o = group * g->og + i0 + i;
      C *row = tile + i * ld;
      if (bias) {
        const C b = load(bias + o * bias_stride);
        for (int64_t j = 0; j < nc; ++j) row[j] += b;
      }
      apply_activation(fused, row, nc, alpha, beta);
      T *channel = y + o * s.c;
      for (int64_t j = 0; j < nc; ++j) reference::store(channel + column_offset[j], row[j]);
    }
  }
};

class Conv2dKernel final : public OpKernel {
 public:
  Conv2dKernel(const OpSetup &setup, const ConvGeometry &geometry)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), w_(setup.desc.inputs[1]), y_(setup.desc.outputs[0]),
        has_bias_(setup.desc.n_inputs == 3), fused_(setup.desc.attrs.fused), alpha_(setup.desc.attrs.alpha),
        beta_(setup.desc.attrs.beta), g_(geometry), taps_(geometry) {
    if (has_bias_) bias_ = setup.desc.inputs[2];
    tap_offsets_ = taps_.filter_offsets(w_.strides);
    window_offsets_ = taps_.window_offsets(x_.strides);
    shape_.batches = g_.groups;
    shape_.m = g_.og;
    shape_.n = g_.columns();
    shape_.k = g_.taps();
    visit_float(y_.dtype, [&](auto type) {
      using C = compute_t<typename decltype(type)::type>;
      workspace_bytes_ = gemm::parallel_workspace_bytes<C>(exec_, shape_);
    });
  }

  void run(const nnrt_op_args &args) const override {
    visit_float(y_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      WeightPacker<T, C, gemm::Blocking<C>::MR, false> a{input_ptr<T>(args, 1), w_.strides[0], tap_offsets_.data(),
                                                         g_.og};
      Im2col<T, C> b{input_ptr<T>(args, 0), Strides4(x_), &g_, &taps_, window_offsets_.data()};
      ConvOutputSink<T, C> sink{output_ptr<T>(args, 0),
                                Strides4(y_),
                                &g_,
                                has_bias_ ? input_ptr<T>(args, 2) : nullptr,
                                has_bias_ ? bias_.strides[0] : 0,
                                fused_,
                                static_cast<C>(alpha_),
                                static_cast<C>(beta_)};
      gemm::compute_parallel<C>(exec_, shape_, a, b, sink, args.workspace);
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc x_, w_, y_, bias_{};
  bool has_bias_;
  int fused_;
  double alpha_, beta_;
  ConvGeometry g_;
  ConvTaps taps_;
  std::vector<int64_t> tap_offsets_, window_offsets_;  // of each tap in a filter of w, and in x
  gemm::Shape shape_;
};

}  // namespace

KernelPtr create_conv2d(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &x = d.inputs[0], &w = d.inputs[1], &y = d.outputs[0];
  expect_dtype(x, "input x", kFloatDtypes);
  expect_same_dtype(w, "input w", x, "input x");
  expect_same_dtype(y, "output y", x, "input x");
  const ConvGeometry g = make_conv_geometry(d.attrs, x, "input x", w, "input w", y, "output y");
  if (d.n_inputs == 3) {
    expect_same_dtype(d.inputs[2], "input bias", x, "input x");
    expect_dims(d.inputs[2], "input bias ([O])", {g.o});
  }
  expect_fused_activation(d.attrs);
  return std::make_unique<Conv2dKernel>(setup, g);
}

}  // namespace nnrt::reference
