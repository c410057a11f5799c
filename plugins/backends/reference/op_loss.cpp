// NNRT_OP_LOSS and NNRT_OP_LOSS_BACKWARD, float dtypes, PyTorch's conventions.
//
// MSE, L1, BCE and BCE_WITH_LOGITS: pred and target of the same dims and dtype; the loss is the
// mean of kernels/loss.h's terms over every element (NaN for no elements).
// SOFTMAX_CROSS_ENTROPY and NLL: pred [N, C]; target class indices [N] (I32 or I64; an index
// outside [0, C) is NNRT_ERR_INVALID_ARGUMENT) or a float distribution [N, C] of pred's dtype; the
// loss is -sum(t * log_softmax(pred)) / N (cross entropy) or -sum(t * pred) / N (NLL).
// The loss is rank 0 in pred's dtype; the backward op writes dpred = d loss / d pred * scalar 0.
#include <vector>

#include "dtype.h"
#include "op_kernel.h"
#include "strided.h"
#include "summation.h"
#include "validate.h"
#include "nnrt/kernels/fmath.h"
#include "nnrt/kernels/loss.h"

namespace nnrt::reference {
namespace {

bool is_class_loss(int alg) { return alg == NNRT_LOSS_SOFTMAX_CROSS_ENTROPY || alg == NNRT_LOSS_NLL; }

template <class Fn>
decltype(auto) visit_elementwise_loss(int alg, Fn &&fn) {
  switch (alg) {
    case NNRT_LOSS_MSE: return fn(std::integral_constant<int, NNRT_LOSS_MSE>{});
    case NNRT_LOSS_L1: return fn(std::integral_constant<int, NNRT_LOSS_L1>{});
    case NNRT_LOSS_BCE: return fn(std::integral_constant<int, NNRT_LOSS_BCE>{});
    default: return fn(std::integral_constant<int, NNRT_LOSS_BCE_WITH_LOGITS>{});
  }
}

template <int Alg, class C>
C loss_term(C p, C t) {
  if constexpr (Alg == NNRT_LOSS_MSE) return kernels::mse_term(p, t);
  else if constexpr (Alg == NNRT_LOSS_L1) return kernels::l1_term(p, t);
  else if constexpr (Alg == NNRT_LOSS_BCE) return kernels::bce_term(p, t);
  else return kernels::bce_with_logits_term(p, t);
}

template <int Alg, class C>
C loss_grad(C p, C t) {
  if constexpr (Alg == NNRT_LOSS_MSE) return kernels::mse_grad(p, t);
  else if constexpr (Alg == NNRT_LOSS_L1) return kernels::l1_grad(p, t);
  else if constexpr (Alg == NNRT_LOSS_BCE) return kernels::bce_grad(p, t);
  else return kernels::bce_with_logits_grad(p, t);
}

// What LOSS and LOSS_BACKWARD share: the descriptor, and for the class losses the row geometry and
// the check of the class indices.
class LossBase : public OpKernel {
 protected:
  explicit LossBase(const OpSetup &setup)
      : exec_(setup.exec), pred_(setup.desc.inputs[0]), target_(setup.desc.inputs[1]), alg_(setup.desc.attrs.alg),
        index_target_(is_class_loss(alg_) && (kIndexDtypes & dtype_bit(setup.desc.inputs[1].dtype))) {
    if (is_class_loss(alg_)) {
      rows_ = pred_.dims[0];
      classes_ = pred_.dims[1];
    }
  }

  // The class of row i, read as int64.
  int64_t class_of(const void *target, int64_t i) const {
    return visit_index(target_.dtype, [&](auto type) {
      using I = typename decltype(type)::type;
      return static_cast<int64_t>(static_cast<const I *>(target)[i * target_.strides[0]]);
    });
  }

  void check_classes(const void *target) const {
    for (int64_t i = 0; i < rows_; ++i) {
      const int64_t c = class_of(target, i);
      if (c < 0 || c >= classes_)
        fail(NNRT_ERR_INVALID_ARGUMENT, "target[%lld] = %lld is outside the classes [0, %lld) of pred %s",
             static_cast<long long>(i), static_cast<long long>(c), static_cast<long long>(classes_),
             dims_string(pred_).c_str());
    }
  }

  // log(sum(exp(x - m))) + m over row i of pred: the log-sum-exp.
  template <class T, class C>
  C log_sum_exp(const T *pred, int64_t i) const {
    const T *row = pred + i * pred_.strides[0];
    const int64_t s = pred_.strides[1];
    C m = -static_cast<C>(INFINITY);
    for (int64_t c = 0; c < classes_; ++c) m = kernels::k_max_nan(m, load(row + c * s));
    CascadeSum<C> sum;
    sum.add_run(row, s, classes_, [m](C v) { return kernels::k_exp(v - m); });
    return kernels::k_log(sum.result()) + m;
  }

  // Calls fn(i0, i1) over row ranges in parallel.
  template <class F>
  void for_rows(F fn) const {
    const int64_t grain = classes_ >= kExpensiveGrain ? 1 : kExpensiveGrain / (classes_ + 1) + 1;
    parallel_for(exec_, rows_, grain, fn);
  }

  Exec exec_;
  nnrt_tensor_desc pred_, target_;
  int alg_;
  bool index_target_;
  int64_t rows_ = 0, classes_ = 0;
};

class LossKernel final : public LossBase {
 public:
  explicit LossKernel(const OpSetup &setup) : LossBase(setup), loss_(setup.desc.outputs[0]) {
    if (!is_class_loss(alg_)) pairs_ = loop_over<2>({&pred_, &target_});
  }

  void run(const nnrt_op_args &args) const override {
    if (index_target_) check_classes(args.inputs[1]);
    visit_float(pred_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const T *pred = input_ptr<T>(args, 0);
      C loss;
      if (is_class_loss(alg_)) {
        loss = class_loss<T, C>(pred, args.inputs[1]);
      } else {
        const T *target = input_ptr<T>(args, 1);
        loss = visit_elementwise_loss(alg_, [&](auto a) {
          constexpr int Alg = decltype(a)::value;
          return parallel_cascade_sum<C>(exec_, pairs_, [&](CascadeSum<C> &sum, const int64_t *o, int64_t n) {
            const T *p = pred + o[0], *t = target + o[1];
            const int64_t sp = pairs_.inner_stride(0), st = pairs_.inner_stride(1);
            sum.add_indexed(n, [&](int64_t i) { return loss_term<Alg, C>(load(p + i * sp), load(t + i * st)); });
          });
        }) / static_cast<C>(pairs_.count);
      }
      store(output_ptr<T>(args, 0), loss);
    });
  }

 private:
  // Each row's term into a vector (in parallel), then their cascade sum over N.
  template <class T, class C>
  C class_loss(const T *pred, const void *target) const {
    std::vector<C> row_terms(static_cast<size_t>(rows_));
    const bool softmax = alg_ == NNRT_LOSS_SOFTMAX_CROSS_ENTROPY;
    for_rows([&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const T *row = pred + i * pred_.strides[0];
        const int64_t s = pred_.strides[1];
        const C lse = softmax ? log_sum_exp<T, C>(pred, i) : C(0);
        C term;
        if (index_target_) {
          term = lse - load(row + class_of(target, i) * s);
        } else {
          const T *t = static_cast<const T *>(target) + i * target_.strides[0];
          const int64_t st = target_.strides[1];
          CascadeSum<C> sum;
          sum.add_indexed(classes_, [&](int64_t c) { return load(t + c * st) * (load(row + c * s) - lse); });
          term = -sum.result();
        }
        row_terms[static_cast<size_t>(i)] = term;
      }
    });
    CascadeSum<C> total;
    total.add_run(row_terms.data(), 1, rows_, [](C v) { return v; });
    return total.result() / static_cast<C>(rows_);
  }

  nnrt_tensor_desc loss_;
  StridedLoop<2> pairs_;
};

class LossBackwardKernel final : public LossBase {
 public:
  explicit LossBackwardKernel(const OpSetup &setup) : LossBase(setup), dpred_(setup.desc.outputs[0]) {
    if (!is_class_loss(alg_)) triples_ = loop_over<3>({&dpred_, &pred_, &target_});
  }

  void run(const nnrt_op_args &args) const override {
    if (index_target_) check_classes(args.inputs[1]);
    visit_float(pred_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const T *pred = input_ptr<T>(args, 0);
      T *dpred = output_ptr<T>(args, 0);
      if (is_class_loss(alg_)) {
        const C factor = static_cast<C>(args.scalars[NNRT_SCALAR_LOSS_SCALE] / static_cast<double>(rows_));
        return class_gradient<T, C>(pred, args.inputs[1], dpred, factor);
      }
      const C factor = static_cast<C>(args.scalars[NNRT_SCALAR_LOSS_SCALE] / static_cast<double>(triples_.count));
      const T *target = input_ptr<T>(args, 1);
      visit_elementwise_loss(alg_, [&](auto a) {
        constexpr int Alg = decltype(a)::value;
        parallel_for(exec_, triples_.count, kExpensiveGrain, [&](int64_t begin, int64_t end) {
          for_each_run(triples_, begin, end, [&](const int64_t *o, int64_t n) {
            const int64_t sd = triples_.inner_stride(0), sp = triples_.inner_stride(1), st = triples_.inner_stride(2);
            for (int64_t i = 0; i < n; ++i)
              store(dpred + o[0] + i * sd, loss_grad<Alg, C>(load(pred + o[1] + i * sp), load(target + o[2] + i * st)) * factor);
          });
        });
      });
    });
  }

 private:
  // Cross entropy: softmax(pred) * sum(t) - t; NLL: -t; each times factor = scale / N.
  template <class T, class C>
  void class_gradient(const T *pred, const void *target, T *dpred, C factor) const {
    const bool softmax = alg_ == NNRT_LOSS_SOFTMAX_CROSS_ENTROPY;
    for_rows([&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const T *row = pred + i * pred_.strides[0];
        T *out = dpred + i * dpred_.strides[0];
        const int64_t s = pred_.strides[1], so = dpred_.strides[1];
        const C lse = softmax ? log_sum_exp<T, C>(pred, i) : C(0);
        const int64_t label = index_target_ ? class_of(target, i) : -1;
        const T *t = index_target_ ? nullptr : static_cast<const T *>(target) + i * target_.strides[0];
        const int64_t st = index_target_ ? 0 : target_.strides[1];
        C target_sum = C(1);
        if (!index_target_ && softmax) {
          CascadeSum<C> sum;
          sum.add_run(t, st, classes_, [](C v) { return v; });
          target_sum = sum.result();
        }
        for (int64_t c = 0; c < classes_; ++c) {
          const C tc = index_target_ ? C(c == label ? 1 : 0) : load(t + c * st);
          const C g = softmax ? kernels::k_exp(load(row + c * s) - lse) * target_sum - tc : -tc;
          store(out + c * so, g * factor);
        }
      }
    });
  }

  nnrt_tensor_desc dpred_;
  StridedLoop<3> triples_;
};

void validate_loss_inputs(const nnrt_op_desc &d) {
  const int alg = d.attrs.alg;
  if (alg < NNRT_LOSS_SOFTMAX_CROSS_ENTROPY || alg > NNRT_LOSS_BCE_WITH_LOGITS)
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_loss_alg (SOFTMAX_CROSS_ENTROPY 1 .. BCE_WITH_LOGITS 6)", alg);
  const nnrt_tensor_desc &pred = d.inputs[0], &target = d.inputs[1];
  expect_dtype(pred, "input pred", kFloatDtypes);
  if (!is_class_loss(alg)) {
    expect_same_dtype(target, "input target", pred, "input pred");
    expect_same_dims(target, "input target", pred, "input pred");
    return;
  }
  if (pred.ndim != 2)
    fail(NNRT_ERR_SHAPE, "input pred has dims %s; the class losses expect [N, C]", dims_string(pred).c_str());
  if (kIndexDtypes & dtype_bit(target.dtype)) {
    expect_dims(target, "input target (class indices [N])", {pred.dims[0]});
  } else {
    if (target.dtype != pred.dtype)
      fail(NNRT_ERR_DTYPE, "input target has dtype %s; expected class indices (i32 or i64) or a distribution of pred's dtype %s",
           dtype_name(target.dtype), dtype_name(pred.dtype));
    expect_same_dims(target, "input target (a distribution [N, C])", pred, "input pred");
  }
}

}  // namespace

KernelPtr create_loss(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  validate_loss_inputs(d);
  expect_same_dtype(d.outputs[0], "output loss", d.inputs[0], "input pred");
  expect_rank(d.outputs[0], "output loss", 0);
  return std::make_unique<LossKernel>(setup);
}

KernelPtr create_loss_backward(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  validate_loss_inputs(d);
  expect_same_dtype(d.outputs[0], "output dpred", d.inputs[0], "input pred");
  expect_same_dims(d.outputs[0], "output dpred", d.inputs[0], "input pred");
  return std::make_unique<LossBackwardKernel>(setup);
}

}  // namespace nnrt::reference
