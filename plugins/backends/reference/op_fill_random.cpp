// NNRT_OP_FILL (every element = scalar 0, converted as COPY converts an f64) and NNRT_OP_RANDOM
// (counter-based Philox streams, kernels/philox.h: element i of the output, in row-major order, is
// element args.counter + i of the stream of attrs.seed, so any backend, thread count or chunking
// gives the same numbers). RANDOM computes in f32 and rounds once to the output dtype.
#include "dtype.h"
#include "elementwise.h"
#include "op_kernel.h"
#include "random_words.h"
#include "validate.h"
#include "nnrt/kernels/philox.h"

namespace nnrt::reference {
namespace {

class FillKernel final : public OpKernel {
 public:
  explicit FillKernel(const OpSetup &setup) : exec_(setup.exec), y_(setup.desc.outputs[0]) {
    loop_ = loop_over<1>({&y_});
  }

  void run(const nnrt_op_args &args) const override {
    if (loop_.count == 0) return;
    visit_all(y_.dtype, [&](auto y_type) {
      using Y = typename decltype(y_type)::type;
      const Y value = from_double<Y>(args.scalars[NNRT_SCALAR_FILL_VALUE]);
      Y *y = output_ptr<Y>(args, 0);
      parallel_for(exec_, loop_.count, kCheapGrain, [&](int64_t begin, int64_t end) {
        for_each_run(loop_, begin, end, [&](const int64_t *o, int64_t n) {
          const int64_t s = loop_.inner_stride(0);
          Y *yr = y + o[0];
          if (s == 1) {
            for (int64_t i = 0; i < n; ++i) yr[i] = value;
          } else {
            for (int64_t i = 0; i < n; ++i) yr[i * s] = value;
          }
        });
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc y_;
  StridedLoop<1> loop_;
};

class RandomKernel final : public OpKernel {
 public:
  explicit RandomKernel(const OpSetup &setup)
      : exec_(setup.exec), y_(setup.desc.outputs[0]), alg_(setup.desc.attrs.alg),
        seed_(setup.desc.attrs.seed) {
    loop_ = loop_over<1>({&y_});
  }

  void run(const nnrt_op_args &args) const override {
    if (loop_.count == 0) return;
    const float p0 = static_cast<float>(args.scalars[NNRT_SCALAR_RANDOM_A]);
    const float p1 = static_cast<float>(args.scalars[NNRT_SCALAR_RANDOM_B]);
    const uint64_t counter = args.counter;
    visit_float(y_.dtype, [&](auto y_type) {
      using Y = typename decltype(y_type)::type;
      Y *y = output_ptr<Y>(args, 0);
      parallel_for(exec_, loop_.count, kExpensiveGrain, [&](int64_t begin, int64_t end) {
        uint64_t index = counter + static_cast<uint64_t>(begin);
        PhiloxWords words(seed_);
        for_each_run(loop_, begin, end, [&](const int64_t *o, int64_t n) {
          const int64_t s = loop_.inner_stride(0);
          Y *yr = y + o[0];
          for (int64_t i = 0; i < n; ++i, ++index) {
            float v = alg_ == NNRT_RANDOM_UNIFORM
                          ? kernels::uniform_from_word(words.word(index), p0, p1)
                          : kernels::random_normal(seed_, index, p0, p1);
            store(yr + i * s, static_cast<compute_t<Y>>(v));
          }
        });
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc y_;
  int32_t alg_;
  uint64_t seed_;
  StridedLoop<1> loop_;
};

}  // namespace

KernelPtr create_fill(const OpSetup &setup) {
  return std::make_unique<FillKernel>(setup);
}

KernelPtr create_random(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  expect_dtype(d.outputs[0], "output y", kFloatDtypes);
  if (d.attrs.alg != NNRT_RANDOM_UNIFORM && d.attrs.alg != NNRT_RANDOM_NORMAL)
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_random_alg (UNIFORM 1, NORMAL 2)", d.attrs.alg);
  return std::make_unique<RandomKernel>(setup);
}

}  // namespace nnrt::reference
