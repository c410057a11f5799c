// NNRT_OP_REDUCE: y (x's rank, size 1 along each dimension in attrs.axes_mask) = SUM, MEAN, MAX,
// MIN or SUM_SQUARES of x over the masked dimensions.
//
// Floats accumulate in f32 (f64 for f64) in the cascade order of summation.h, so a sum is accurate
// and the same whatever the thread count or x's strides. MAX and MIN propagate NaN. Integer
// dtypes (I32, I64, U8) support SUM, MAX and MIN; SUM accumulates in int64 and wraps to the output
// dtype. An empty reduction gives 0 for SUM and SUM_SQUARES and NaN for MEAN; for MAX and MIN it has
// no identity and op_create refuses it (NNRT_ERR_SHAPE), as numpy does.
#include <cstring>
#include <type_traits>
#include <vector>

#include "dtype.h"
#include "op_kernel.h"
#include "strided.h"
#include "summation.h"
#include "validate.h"
#include "nnrt/kernels/fmath.h"

namespace nnrt::reference {
namespace {

// What reduce_sum_side_by_side sums a strip of outputs in: a cache line (64 bytes) of them, as four
// 16-byte vectors, the baseline x86-64 (SSE2) width, whose vectors every ABI passes in registers.
// A whole line a term: walking a column strip of x one vector (16 bytes) wide, as before, fetched
// each line of x four times, rows apart, and [64, 1024] over its rows took 56-75 us a call.
template <class T>
struct SideBySide {
  typedef T Vec __attribute__((vector_size(16)));
  static constexpr int kVecs = 4;
  static constexpr int64_t kWidth = kVecs * static_cast<int64_t>(sizeof(Vec) / sizeof(T));
  Vec v[kVecs];

  SideBySide &operator+=(const SideBySide &o) {
    for (int i = 0; i < kVecs; ++i) v[i] += o.v[i];
    return *this;
  }
  friend SideBySide operator+(SideBySide a, const SideBySide &b) { return a += b; }
  friend SideBySide operator*(SideBySide a, const SideBySide &b) {
    for (int i = 0; i < kVecs; ++i) a.v[i] *= b.v[i];
    return a;
  }
  T operator[](int64_t j) const { return v[j / (kWidth / kVecs)][j % (kWidth / kVecs)]; }
};

// Below this many terms per output, parallelize over outputs only.
constexpr int64_t kSplitReductionTerms = 1 << 15;

class ReduceKernel final : public OpKernel {
 public:
  explicit ReduceKernel(const OpSetup &setup)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), y_(setup.desc.outputs[0]),
        alg_(setup.desc.attrs.alg) {
    const uint32_t mask = setup.desc.attrs.axes_mask;
    int64_t reduced_dims[NNRT_MAX_DIMS];
    for (int d = 0; d < x_.ndim; ++d) reduced_dims[d] = (mask >> d) & 1u ? x_.dims[d] : 1;
    const int64_t *out_strides[2] = {y_.strides, x_.strides};
    outputs_ = make_strided_loop<2>(y_.ndim, y_.dims, out_strides);
    const int64_t *in_strides[1] = {x_.strides};
    terms_ = make_strided_loop<1>(x_.ndim, reduced_dims, in_strides);
  }

  void run(const nnrt_op_args &args) const override {
    if (outputs_.count == 0) return;
    visit_numeric(x_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      const T *x = input_ptr<T>(args, 0);
      T *y = output_ptr<T>(args, 0);
      if constexpr (is_float_v<T>) {
        using C = compute_t<T>;
        switch (alg_) {
          // The terms are generic: reduce_sum also applies them to vectors of C.
          case NNRT_REDUCE_SUM: return reduce_sum<T>(x, y, [](auto v) { return v; }, false);
          case NNRT_REDUCE_MEAN: return reduce_sum<T>(x, y, [](auto v) { return v; }, true);
          case NNRT_REDUCE_SUM_SQUARES: return reduce_sum<T>(x, y, [](auto v) { return v * v; }, false);
          case NNRT_REDUCE_MAX:
            return reduce_exact<T, C>(x, y, [](C a, C b) { return kernels::k_max_nan(a, b); });
          case NNRT_REDUCE_MIN:
            return reduce_exact<T, C>(x, y, [](C a, C b) { return kernels::k_min_nan(a, b); });
        }
      } else {
        using U = uint64_t;  // wrapping int64 sum
        switch (alg_) {
          case NNRT_REDUCE_SUM: return reduce_exact<T, U>(x, y, [](U a, U b) { return a + b; });
          case NNRT_REDUCE_MAX: return reduce_exact<T, T>(x, y, [](T a, T b) { return a > b ? a : b; });
          case NNRT_REDUCE_MIN: return reduce_exact<T, T>(x, y, [](T a, T b) { return a < b ? a : b; });
        }
      }
    });
  }

 private:
  // Calls per_output(y_element, x_base) for every output element, in parallel; grain from the
  // number of terms each costs.
  template <class T, class F>
  void for_each_output(const T *x, T *y, int64_t grain, F per_output) const {
    parallel_for(exec_, outputs_.count, grain, [&](int64_t begin, int64_t end) {
      for_each_run(outputs_, begin, end, [&](const int64_t *o, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          per_output(y + o[0] + i * outputs_.inner_stride(0), x + o[1] + i * outputs_.inner_stride(1));
      });
    });
  }

  bool split_each_reduction() const {
    return terms_.count >= kSplitReductionTerms && outputs_.count < 4 * exec_.threads;
  }

  int64_t output_grain() const {
    int64_t per = terms_.count > 0 ? terms_.count : 1;
    return per >= kCheapGrain ? 1 : kCheapGrain / per;
  }

  template <class T, class F>
  void reduce_sum(const T *x, T *y, F term, bool mean) const {
    using C = compute_t<T>;
    const int64_t count = terms_.count;
    auto finish = [&](T *out, C sum) {
      store(out, mean ? sum / static_cast<C>(count) : sum);  // mean of nothing: 0/0 = NaN
    };
    if (split_each_reduction()) {
      for_each_run(outputs_, 0, outputs_.count, [&](const int64_t *o, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          finish(y + o[0] + i * outputs_.inner_stride(0),
                 parallel_cascade_sum<C>(exec_, terms_, x + o[1] + i * outputs_.inner_stride(1), term));
      });
      return;
    }
    auto one_output = [&](T *out, const T *base) {
      CascadeSum<C> sum;
      for_each_run(terms_, 0, count, [&](const int64_t *o, int64_t n) {
        sum.add_run(base + o[0], terms_.inner_stride(0), n, term);
      });
      finish(out, sum.result());
    };
    if constexpr (std::is_same_v<T, C>) {
      if (outputs_.inner_stride(1) == 1) return reduce_sum_side_by_side<T>(x, y, term, finish, one_output);
    }
    for_each_output(x, y, output_grain(), one_output);
  }

  // The sums of outputs whose terms lie side by side in x (the last output dim contiguous in x:
  // a bias gradient, [N, C] summed over N). A strip of kWidth outputs is summed at once, lane j
  // holding output j's cascade, so each output gets the bits one_output would give it; one_output
  // takes the outputs left over at the end of a run. Summing each output alone walks x with a
  // stride of a row per term: [64, 1024] over its 64 rows took 0.2-0.3 ms on 2 threads (AVX2), and
  // 22-29 us in strips of a cache line.
  template <class T, class Term, class Finish, class OneOutput>
  void reduce_sum_side_by_side(const T *x, T *y, Term term, Finish finish, OneOutput one_output) const {
    using Vec = SideBySide<T>;
    constexpr int64_t kWidth = Vec::kWidth;
    const int64_t count = terms_.count, y_step = outputs_.inner_stride(0);
    // A vector add does a vector's width of terms' work: chunks of that many times as many outputs
    // cost what a chunk of scalar sums does.
    parallel_for(exec_, outputs_.count, output_grain() * (kWidth / Vec::kVecs), [&](int64_t begin, int64_t end) {
      for_each_run(outputs_, begin, end, [&](const int64_t *o, int64_t n) {
        int64_t i = 0;
        for (; i + kWidth <= n; i += kWidth) {
          const T *base = x + o[1] + i;
          CascadeSum<Vec> sum;
          for_each_run(terms_, 0, count, [&](const int64_t *t, int64_t terms) {
            const int64_t stride = terms_.inner_stride(0);
            sum.add_indexed(terms, [&](int64_t k) {
              Vec v;
              std::memcpy(&v, base + t[0] + k * stride, sizeof v);
              return term(v);
            });
          });
          const Vec total = sum.result();
          for (int64_t j = 0; j < kWidth; ++j) finish(y + o[0] + (i + j) * y_step, total[j]);
        }
        for (; i < n; ++i) one_output(y + o[0] + i * y_step, x + o[1] + i);
      });
    });
  }

  // Reductions whose result does not depend on the order (max, min, integer sums), with the
  // accumulator type A. A range starts from its own first term, so no identity is needed; an empty
  // reduction (only allowed for integer sums) gives A{} = 0.
  template <class T, class A, class Combine>
  void reduce_exact(const T *x, T *y, Combine combine) const {
    const int64_t count = terms_.count;
    auto reduce_range = [&](const T *base, int64_t begin, int64_t end) {
      A acc{};
      bool started = false;
      for_each_run(terms_, begin, end, [&](const int64_t *o, int64_t n) {
        const T *p = base + o[0];
        const int64_t s = terms_.inner_stride(0);
        int64_t i = 0;
        if (!started) {
          acc = static_cast<A>(load(p));
          started = true;
          i = 1;
        }
        for (; i < n; ++i) acc = combine(acc, static_cast<A>(load(p + i * s)));
      });
      return acc;
    };
    auto finish = [&](T *out, A acc) { store(out, static_cast<compute_t<T>>(acc)); };
    if (split_each_reduction()) {
      const int64_t group = kSumBlock * kSumGroupBlocks;
      const int64_t groups = (count + group - 1) / group;
      std::vector<A> partial(static_cast<size_t>(groups));
      for_each_run(outputs_, 0, outputs_.count, [&](const int64_t *o, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          const T *base = x + o[1] + i * outputs_.inner_stride(1);
          parallel_for(exec_, groups, 1, [&](int64_t g0, int64_t g1) {
            for (int64_t g = g0; g < g1; ++g) {
              int64_t end = (g + 1) * group < count ? (g + 1) * group : count;
              partial[static_cast<size_t>(g)] = reduce_range(base, g * group, end);
            }
          });
          A acc = partial[0];
          for (size_t g = 1; g < partial.size(); ++g) acc = combine(acc, partial[g]);
          finish(y + o[0] + i * outputs_.inner_stride(0), acc);
        }
      });
      return;
    }
    for_each_output(x, y, output_grain(), [&](T *out, const T *base) {
      finish(out, reduce_range(base, 0, count));
    });
  }

  Exec exec_;
  nnrt_tensor_desc x_, y_;
  int alg_;
  StridedLoop<2> outputs_;  // over y's elements: (y, x) offsets of each output and its first term
  StridedLoop<1> terms_;    // over the reduced dims of x, relative to an output's first term
};

}  // namespace

KernelPtr create_reduce(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const int alg = d.attrs.alg;
  if (alg < NNRT_REDUCE_SUM || alg > NNRT_REDUCE_SUM_SQUARES)
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_reduce_alg (SUM 1 .. SUM_SQUARES 5)", alg);
  const nnrt_tensor_desc &x = d.inputs[0], &y = d.outputs[0];
  const bool integer_alg = alg == NNRT_REDUCE_SUM || alg == NNRT_REDUCE_MAX || alg == NNRT_REDUCE_MIN;
  expect_dtype(x, "input x", integer_alg ? kNumericDtypes : kFloatDtypes);
  expect_same_dtype(y, "output y", x, "input x");
  const uint32_t mask = d.attrs.axes_mask;
  expect_attr(x.ndim >= 32 || (mask >> x.ndim) == 0,
              "axes_mask 0x%x names a dimension beyond x's rank %d", mask, x.ndim);
  int64_t expected[NNRT_MAX_DIMS];
  int64_t terms = 1, outputs = 1;
  for (int k = 0; k < x.ndim; ++k) {
    bool reduced = (mask >> k) & 1u;
    expected[k] = reduced ? 1 : x.dims[k];
    (reduced ? terms : outputs) *= x.dims[k];
  }
  expect_dims(y, "output y (size 1 along each reduced dimension)", expected, x.ndim);
  if (terms == 0 && outputs > 0 && (alg == NNRT_REDUCE_MAX || alg == NNRT_REDUCE_MIN))
    fail(NNRT_ERR_SHAPE, "%s of x %s over axes_mask 0x%x reduces an empty set, which has no identity",
         alg == NNRT_REDUCE_MAX ? "MAX" : "MIN", dims_string(x).c_str(), mask);
  return std::make_unique<ReduceKernel>(setup);
}

}  // namespace nnrt::reference
