// NNRT_OP_BINARY: c = a (op) b with numpy semantics, broadcasting expressed as stride 0.
// Floats (f32, f64, f16, bf16) compute in f32 or f64; MAX and MIN propagate NaN. I32, I64 and U8
// wrap around on overflow; DIV truncates toward zero, and division by zero gives 0.
#include <limits>

#include "dtype.h"
#include "elementwise.h"
#include "op_kernel.h"
#include "validate.h"
#include "nnrt/kernels/fmath.h"

namespace nnrt::reference {
namespace {

template <int Alg, class C>
C float_binary(C a, C b) {
  if constexpr (Alg == NNRT_BINARY_ADD) return a + b;
  else if constexpr (Alg == NNRT_BINARY_SUB) return a - b;
  else if constexpr (Alg == NNRT_BINARY_MUL) return a * b;
  else if constexpr (Alg == NNRT_BINARY_DIV) return a / b;
  else if constexpr (Alg == NNRT_BINARY_MAX) return kernels::k_max_nan(a, b);
  else return kernels::k_min_nan(a, b);
}

// Integer arithmetic in the unsigned type of the same width: wraps instead of overflowing.
template <int Alg, class T>
T integer_binary(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if constexpr (Alg == NNRT_BINARY_ADD) return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  else if constexpr (Alg == NNRT_BINARY_SUB) return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  else if constexpr (Alg == NNRT_BINARY_MUL) return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  else if constexpr (Alg == NNRT_BINARY_DIV) {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(U(0) - static_cast<U>(a));  // MIN / -1 wraps to MIN
    }
    return static_cast<T>(a / b);
  } else if constexpr (Alg == NNRT_BINARY_MAX) return a > b ? a : b;
  else return a < b ? a : b;
}

template <class Fn>
void visit_binary_alg(int alg, Fn &&fn) {
  switch (alg) {
    case NNRT_BINARY_ADD: return fn(std::integral_constant<int, NNRT_BINARY_ADD>{});
    case NNRT_BINARY_SUB: return fn(std::integral_constant<int, NNRT_BINARY_SUB>{});
    case NNRT_BINARY_MUL: return fn(std::integral_constant<int, NNRT_BINARY_MUL>{});
    case NNRT_BINARY_DIV: return fn(std::integral_constant<int, NNRT_BINARY_DIV>{});
    case NNRT_BINARY_MAX: return fn(std::integral_constant<int, NNRT_BINARY_MAX>{});
    case NNRT_BINARY_MIN: return fn(std::integral_constant<int, NNRT_BINARY_MIN>{});
  }
}

class BinaryKernel final : public OpKernel {
 public:
  explicit BinaryKernel(const OpSetup &setup)
      : exec_(setup.exec), a_(setup.desc.inputs[0]), b_(setup.desc.inputs[1]),
        c_(setup.desc.outputs[0]), alg_(setup.desc.attrs.alg) {
    loop_ = memory_order_loop_over<3>({&c_, &a_, &b_});
  }

  void run(const nnrt_op_args &args) const override {
    if (loop_.count == 0) return;
    visit_numeric(c_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      const T *a = input_ptr<T>(args, 0), *b = input_ptr<T>(args, 1);
      T *c = output_ptr<T>(args, 0);
      visit_binary_alg(alg_, [&](auto op) {
        constexpr int Alg = decltype(op)::value;
        if constexpr (is_float_v<T>) {
          using C = compute_t<T>;
          map_elements(exec_, loop_, kCheapGrain, c, a, b, [](C x, C y) { return float_binary<Alg>(x, y); });
        } else {
          map_elements(exec_, loop_, kCheapGrain, c, a, b, [](T x, T y) { return integer_binary<Alg>(x, y); });
        }
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc a_, b_, c_;
  int alg_;
  StridedLoop<3> loop_;
};

}  // namespace

KernelPtr create_binary(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  if (d.attrs.alg < NNRT_BINARY_ADD || d.attrs.alg > NNRT_BINARY_MIN)
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_binary_alg (ADD 1 .. MIN 6)", d.attrs.alg);
  const nnrt_tensor_desc &c = d.outputs[0];
  expect_dtype(c, "output c", kNumericDtypes);
  expect_same_dtype(d.inputs[0], "input a", c, "output c");
  expect_same_dtype(d.inputs[1], "input b", c, "output c");
  expect_same_dims(d.inputs[0], "input a (broadcast dims have stride 0)", c, "output c");
  expect_same_dims(d.inputs[1], "input b (broadcast dims have stride 0)", c, "output c");
  return std::make_unique<BinaryKernel>(setup);
}

}  // namespace nnrt::reference
