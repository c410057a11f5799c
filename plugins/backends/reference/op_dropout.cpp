// NNRT_OP_DROPOUT and NNRT_OP_DROPOUT_BACKWARD, float dtypes. Element i of x (row-major) is kept
// when uniform01(philox_word(attrs.seed, args.counter + i)) >= p, p = attrs.alpha in [0, 1); the
// U8 mask records it (1 kept, 0 dropped) and y = x * mask * (1 / (1 - p)), as PyTorch computes it
// (a dropped NaN stays NaN). Backward: dx = dy * mask * (1 / (1 - p)), any nonzero mask byte
// counting as kept.
#include "dtype.h"
#include "elementwise.h"
#include "op_kernel.h"
#include "random_words.h"
#include "validate.h"

namespace nnrt::reference {
namespace {

class DropoutKernel final : public OpKernel {
 public:
  explicit DropoutKernel(const OpSetup &setup)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), y_(setup.desc.outputs[0]), mask_(setup.desc.outputs[1]),
        p_(setup.desc.attrs.alpha), seed_(setup.desc.attrs.seed) {
    loop_ = loop_over<3>({&y_, &mask_, &x_});
  }

  void run(const nnrt_op_args &args) const override {
    const float p = static_cast<float>(p_);
    const uint64_t counter = args.counter;
    visit_float(x_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const C scale = static_cast<C>(1.0 / (1.0 - p_));
      const T *x = input_ptr<T>(args, 0);
      T *y = output_ptr<T>(args, 0);
      uint8_t *mask = output_ptr<uint8_t>(args, 1);
      parallel_for(exec_, loop_.count, kExpensiveGrain, [&](int64_t begin, int64_t end) {
        PhiloxWords words(seed_);
        uint64_t index = counter + static_cast<uint64_t>(begin);
        for_each_run(loop_, begin, end, [&](const int64_t *o, int64_t n) {
          const int64_t sy = loop_.inner_stride(0), sm = loop_.inner_stride(1), sx = loop_.inner_stride(2);
          for (int64_t i = 0; i < n; ++i, ++index) {
            const uint8_t keep = kernels::uniform01(words.word(index)) >= p ? 1 : 0;
            mask[o[1] + i * sm] = keep;
            store(y + o[0] + i * sy, load(x + o[2] + i * sx) * static_cast<C>(keep) * scale);
          }
        });
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc x_, y_, mask_;
  double p_;
  uint64_t seed_;
  StridedLoop<3> loop_;
};

class DropoutBackwardKernel final : public OpKernel {
 public:
  explicit DropoutBackwardKernel(const OpSetup &setup)
      : exec_(setup.exec), dy_(setup.desc.inputs[0]), mask_(setup.desc.inputs[1]), dx_(setup.desc.outputs[0]),
        p_(setup.desc.attrs.alpha) {
    loop_ = loop_over<3>({&dx_, &dy_, &mask_});
  }

  void run(const nnrt_op_args &args) const override {
    visit_float(dy_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const C scale = static_cast<C>(1.0 / (1.0 - p_));
      map_elements(exec_, loop_, kCheapGrain, output_ptr<T>(args, 0), input_ptr<T>(args, 0),
                   input_ptr<uint8_t>(args, 1),
                   [scale](C g, uint8_t m) { return g * static_cast<C>(m != 0 ? 1 : 0) * scale; });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc dy_, mask_, dx_;
  double p_;
  StridedLoop<3> loop_;
};

void expect_drop_probability(const nnrt_op_attrs &attrs) {
  expect_attr(attrs.alpha >= 0 && attrs.alpha < 1, "the drop probability alpha %g must be in [0, 1)", attrs.alpha);
}

}  // namespace

KernelPtr create_dropout(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &x = d.inputs[0];
  expect_dtype(x, "input x", kFloatDtypes);
  expect_same_dtype(d.outputs[0], "output y", x, "input x");
  expect_same_dims(d.outputs[0], "output y", x, "input x");
  expect_dtype(d.outputs[1], "output mask", dtype_bit(NNRT_DTYPE_U8));
  expect_same_dims(d.outputs[1], "output mask", x, "input x");
  expect_drop_probability(d.attrs);
  return std::make_unique<DropoutKernel>(setup);
}

KernelPtr create_dropout_backward(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &dy = d.inputs[0];
  expect_dtype(dy, "input dy", kFloatDtypes);
  expect_dtype(d.inputs[1], "input mask", dtype_bit(NNRT_DTYPE_U8));
  expect_same_dims(d.inputs[1], "input mask", dy, "input dy");
  expect_same_dtype(d.outputs[0], "output dx", dy, "input dy");
  expect_same_dims(d.outputs[0], "output dx", dy, "input dy");
  expect_drop_probability(d.attrs);
  return std::make_unique<DropoutBackwardKernel>(setup);
}

}  // namespace nnrt::reference
