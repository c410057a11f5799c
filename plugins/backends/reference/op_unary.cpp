// NNRT_OP_UNARY and NNRT_OP_UNARY_BACKWARD: the activations of kernels/eltwise.h on float dtypes,
// and NEG, ABS, SIGN (and IDENTITY) on I32, I64 and U8 with wrap-around like numpy: -INT_MIN and
// |INT_MIN| are INT_MIN, -x of a U8 is 256 - x.
#include "dtype.h"
#include "elementwise.h"
#include "op_kernel.h"
#include "unary_dispatch.h"
#include "validate.h"
#include "nnrt/kernels/eltwise.h"

namespace nnrt::reference {
namespace {

template <class T>
T integer_unary(int alg, T x) {
  using U = std::make_unsigned_t<T>;
  switch (alg) {
    case NNRT_UNARY_NEG: return static_cast<T>(U(0) - static_cast<U>(x));
    case NNRT_UNARY_ABS: return x < T(0) ? static_cast<T>(U(0) - static_cast<U>(x)) : x;
    case NNRT_UNARY_SIGN: return static_cast<T>(x > T(0) ? 1 : (x < T(0) ? -1 : 0));
    default: return x;  // IDENTITY
  }
}

class UnaryKernel final : public OpKernel {
 public:
  explicit UnaryKernel(const OpSetup &setup)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), y_(setup.desc.outputs[0]),
        alg_(setup.desc.attrs.alg), alpha_(setup.desc.attrs.alpha), beta_(setup.desc.attrs.beta) {
    loop_ = memory_order_loop_over<2>({&y_, &x_});
  }

  void run(const nnrt_op_args &args) const override {
    if (loop_.count == 0) return;
    visit_numeric(x_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      const T *x = input_ptr<T>(args, 0);
      T *y = output_ptr<T>(args, 0);
      if constexpr (is_float_v<T>) {
        using C = compute_t<T>;
        const C alpha = static_cast<C>(alpha_), beta = static_cast<C>(beta_);
        const int64_t grain = unary_alg_is_expensive(alg_) ? kExpensiveGrain : kCheapGrain;
        visit_unary_alg(alg_, [&](auto a) {
          constexpr int Alg = decltype(a)::value;
          map_elements(exec_, loop_, grain, y, x,
                       [=](C v) { return kernels::unary_forward<Alg>(v, alpha, beta); });
        });
      } else {
        const int alg = alg_;
        map_elements(exec_, loop_, kCheapGrain, y, x, [=](T v) { return integer_unary(alg, v); });
      }
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc x_, y_;
  int alg_;
  double alpha_, beta_;
  StridedLoop<2> loop_;
};

class UnaryBackwardKernel final : public OpKernel {
 public:
  explicit UnaryBackwardKernel(const OpSetup &setup)
      : exec_(setup.exec), dy_(setup.desc.inputs[0]), s_(setup.desc.inputs[1]),
        dx_(setup.desc.outputs[0]), alg_(setup.desc.attrs.alg),
        use_dst_((setup.desc.attrs.flags & NNRT_FLAG_USE_DST) != 0), alpha_(setup.desc.attrs.alpha),
        beta_(setup.desc.attrs.beta) {
    loop_ = memory_order_loop_over<3>({&dx_, &dy_, &s_});
  }

  void run(const nnrt_op_args &args) const override {
    if (loop_.count == 0) return;
    visit_float(dx_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const C alpha = static_cast<C>(alpha_), beta = static_cast<C>(beta_);
      const T *dy = input_ptr<T>(args, 0), *s = input_ptr<T>(args, 1);
      T *dx = output_ptr<T>(args, 0);
      const int64_t grain = unary_alg_is_expensive(alg_) ? kExpensiveGrain : kCheapGrain;
      visit_unary_alg(alg_, [&](auto a) {
        constexpr int Alg = decltype(a)::value;
        if constexpr (Alg == NNRT_UNARY_RELU || Alg == NNRT_UNARY_LEAKY_RELU || Alg == NNRT_UNARY_ELU ||
                      Alg == NNRT_UNARY_SIGMOID || Alg == NNRT_UNARY_TANH || Alg == NNRT_UNARY_LINEAR) {
          if (use_dst_) {
            map_elements(exec_, loop_, grain, dx, dy, s, [=](C g, C y) {
              return kernels::unary_backward_from_dst<Alg>(g, y, alpha, beta);
            });
            return;
          }
        }
        map_elements(exec_, loop_, grain, dx, dy, s,
                     [=](C g, C x) { return kernels::unary_backward<Alg>(g, x, alpha, beta); });
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc dy_, s_, dx_;
  int alg_;
  bool use_dst_;
  double alpha_, beta_;
  StridedLoop<3> loop_;
};

void expect_unary_alg(const nnrt_op_attrs &attrs) {
  if (!is_unary_alg(attrs.alg))
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_unary_alg (%d .. %d)", attrs.alg, NNRT_UNARY_IDENTITY,
         NNRT_UNARY_LAST);
  if (attrs.alg == NNRT_UNARY_CLIP)
    expect_attr(attrs.alpha <= attrs.beta, "CLIP needs alpha (low) <= beta (high); got alpha %g, beta %g",
                attrs.alpha, attrs.beta);
}

}  // namespace

KernelPtr create_unary(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  expect_unary_alg(d.attrs);
  const nnrt_tensor_desc &x = d.inputs[0];
  int alg = d.attrs.alg;
  bool integer_alg = alg == NNRT_UNARY_IDENTITY || alg == NNRT_UNARY_NEG || alg == NNRT_UNARY_ABS ||
                     alg == NNRT_UNARY_SIGN;
  expect_dtype(x, "input x", integer_alg ? kNumericDtypes : kFloatDtypes);
  expect_same_dtype(d.outputs[0], "output y", x, "input x");
  expect_same_dims(d.outputs[0], "output y", x, "input x");
  return std::make_unique<UnaryKernel>(setup);
}

KernelPtr create_unary_backward(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  expect_unary_alg(d.attrs);
  const nnrt_tensor_desc &dy = d.inputs[0];
  expect_dtype(dy, "input dy", kFloatDtypes);
  expect_same_dtype(d.inputs[1], "input s", dy, "input dy");
  expect_same_dtype(d.outputs[0], "output dx", dy, "input dy");
  expect_same_dims(d.inputs[1], "input s", dy, "input dy");
  expect_same_dims(d.outputs[0], "output dx", dy, "input dy");
  if (d.attrs.flags & NNRT_FLAG_USE_DST) {
    expect_attr(kernels::unary_backward_allows_dst(d.attrs.alg),
                "NNRT_FLAG_USE_DST is allowed for RELU, LEAKY_RELU, ELU, SIGMOID, TANH and LINEAR; "
                "alg is %d",
                d.attrs.alg);
    if (d.attrs.alg == NNRT_UNARY_LEAKY_RELU || d.attrs.alg == NNRT_UNARY_ELU)
      expect_attr(d.attrs.alpha >= 0,
                  "NNRT_FLAG_USE_DST with LEAKY_RELU or ELU needs alpha >= 0 (the sign of y must tell "
                  "the side of 0); got alpha %g",
                  d.attrs.alpha);
  }
  return std::make_unique<UnaryBackwardKernel>(setup);
}

}  // namespace nnrt::reference
