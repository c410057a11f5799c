// NNRT_OP_OPTIMIZER_UPDATE: one fused optimizer step, in place, on F32 tensors of the same dims
// (grad in; param, state0 [opt], state1 [opt] out, read and written). The per-element rules are in
// kernels/optimizer.h; this file checks that the states match the alg (SGD: velocity when
// momentum > 0; ADAGRAD, RMSPROP: one; ADAM, ADAMW, ADAMAX: two) and walks the elements.
#include "dtype.h"
#include "op_kernel.h"
#include "strided.h"
#include "validate.h"
#include "nnrt/kernels/op_manifest.h"
#include "nnrt/kernels/optimizer.h"

namespace nnrt::reference {
namespace {

int states_of(const nnrt_op_attrs &attrs) { return kernels::optimizer_state_count(attrs.alg, attrs.momentum); }

bool uses_bias_correction(int alg) {
  return alg == NNRT_OPTIMIZER_ADAM || alg == NNRT_OPTIMIZER_ADAMW || alg == NNRT_OPTIMIZER_ADAMAX;
}

template <class Fn>
void visit_optimizer_alg(int alg, Fn &&fn) {
  switch (alg) {
    case NNRT_OPTIMIZER_SGD: return fn(std::integral_constant<int, NNRT_OPTIMIZER_SGD>{});
    case NNRT_OPTIMIZER_ADAGRAD: return fn(std::integral_constant<int, NNRT_OPTIMIZER_ADAGRAD>{});
    case NNRT_OPTIMIZER_ADAM: return fn(std::integral_constant<int, NNRT_OPTIMIZER_ADAM>{});
    case NNRT_OPTIMIZER_ADAMW: return fn(std::integral_constant<int, NNRT_OPTIMIZER_ADAMW>{});
    case NNRT_OPTIMIZER_RMSPROP: return fn(std::integral_constant<int, NNRT_OPTIMIZER_RMSPROP>{});
    case NNRT_OPTIMIZER_ADAMAX: return fn(std::integral_constant<int, NNRT_OPTIMIZER_ADAMAX>{});
  }
}

// The update of n contiguous elements (the usual case: parameters, gradients and states are dense
// tensors of one layout). Written for the vectorizer: the same per-element rule, with no strides and
// no aliasing, so that it runs 4 or 8 elements an instruction. Vector sqrt and division round as the
// scalar ones do, and the backend is built with -fno-math-errno (without which GCC keeps sqrtf a
// scalar call) and -ffp-contract=off (no fused multiply-add in the AVX2 build below), so the results
// are the strided loop's bit for bit on every machine. An AdaGrad update of the bench's MLP (1.9 M
// parameters) took 29% of a training step (AVX2, 1 thread): MLP training 2500 images/s, 4250 with
// the baseline vector loop, 4800-5400 with the AVX2 one.
template <int Alg, bool HasState0, bool HasState1>
__attribute__((always_inline)) inline void update_run(const float *__restrict grad, float *__restrict param,
                                                      float *__restrict state0, float *__restrict state1, int64_t n,
                                                      const kernels::OptimizerStep &step) {
  const kernels::OptimizerStep s = step;  // a local copy: no store through param can change it
  for (int64_t i = 0; i < n; ++i) {
    float p = param[i];
    float v0 = HasState0 ? state0[i] : 0.0f;
    float v1 = HasState1 ? state1[i] : 0.0f;
    kernels::optimizer_update<Alg>(grad[i], p, v0, v1, s);
    param[i] = p;
    if (HasState0) state0[i] = v0;
    if (HasState1) state1[i] = v1;
  }
}

#if defined(__x86_64__) || defined(__i386__)
// The same loop compiled for AVX2, called when the CPU has it. Chosen by a run-time test rather
// than target_clones: the loader's ifunc resolvers that target_clones makes run before
// ThreadSanitizer's runtime is ready, and crash a TSan build at startup.
template <int Alg, bool HasState0, bool HasState1>
__attribute__((target("avx2"))) void update_run_avx2(const float *__restrict grad, float *__restrict param,
                                                    float *__restrict state0, float *__restrict state1, int64_t n,
                                                    const kernels::OptimizerStep &step) {
  update_run<Alg, HasState0, HasState1>(grad, param, state0, state1, n, step);
}
#endif

template <int Alg, bool HasState0, bool HasState1>
void update_contiguous(const float *grad, float *param, float *state0, float *state1, int64_t n,
                       const kernels::OptimizerStep &step) {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return update_run_avx2<Alg, HasState0, HasState1>(grad, param, state0, state1, n, step);
#endif
  update_run<Alg, HasState0, HasState1>(grad, param, state0, state1, n, step);
}

class OptimizerKernel final : public OpKernel {
 public:
  explicit OptimizerKernel(const OpSetup &setup)
      : exec_(setup.exec), attrs_(setup.desc.attrs), states_(setup.desc.n_outputs - 1) {
    const nnrt_op_desc &d = setup.desc;
    // Absent states walk with the param's strides; they are never touched.
    const int64_t *strides[4] = {d.inputs[0].strides, d.outputs[0].strides,
                                 states_ > 0 ? d.outputs[1].strides : d.outputs[0].strides,
                                 states_ > 1 ? d.outputs[2].strides : d.outputs[0].strides};
    loop_ = make_strided_loop<4>(d.outputs[0].ndim, d.outputs[0].dims, strides);
  }

  void run(const nnrt_op_args &args) const override {
    const double t = args.scalars[NNRT_SCALAR_STEP];
    if (uses_bias_correction(attrs_.alg) && !(t >= 1))
      fail(NNRT_ERR_INVALID_ARGUMENT, "the step number t (scalar 1) is %g; bias correction needs t >= 1", t);
    const kernels::OptimizerStep step = kernels::make_optimizer_step(attrs_, args.scalars[NNRT_SCALAR_LEARNING_RATE], t,
                                                                       args.scalars[NNRT_SCALAR_GRAD_FACTOR]);
    const float *grad = input_ptr<float>(args, 0);
    float *param = output_ptr<float>(args, 0);
    float *state0 = states_ > 0 ? output_ptr<float>(args, 1) : nullptr;
    float *state1 = states_ > 1 ? output_ptr<float>(args, 2) : nullptr;
    visit_optimizer_alg(attrs_.alg, [&](auto a) {
      constexpr int Alg = decltype(a)::value;
      parallel_for(exec_, loop_.count, kCheapGrain / 4, [&](int64_t begin, int64_t end) {
        for_each_run(loop_, begin, end, [&](const int64_t *o, int64_t n) {
          const int64_t sg = loop_.inner_stride(0), sp = loop_.inner_stride(1), s0 = loop_.inner_stride(2),
                        s1 = loop_.inner_stride(3);
          if (sg == 1 && sp == 1 && s0 == 1 && s1 == 1) {
            float *st0 = state0 ? state0 + o[2] : nullptr, *st1 = state1 ? state1 + o[3] : nullptr;
            if (state1)
              update_contiguous<Alg, true, true>(grad + o[0], param + o[1], st0, st1, n, step);
            else if (state0)
              update_contiguous<Alg, true, false>(grad + o[0], param + o[1], st0, st1, n, step);
            else
              update_contiguous<Alg, false, false>(grad + o[0], param + o[1], st0, st1, n, step);
            return;
          }
          for (int64_t i = 0; i < n; ++i) {
            float p = param[o[1] + i * sp];
            float v0 = state0 ? state0[o[2] + i * s0] : 0.0f;
            float v1 = state1 ? state1[o[3] + i * s1] : 0.0f;
            kernels::optimizer_update<Alg>(grad[o[0] + i * sg], p, v0, v1, step);
            param[o[1] + i * sp] = p;
            if (state0) state0[o[2] + i * s0] = v0;
            if (state1) state1[o[3] + i * s1] = v1;
          }
        });
      });
    });
  }

 private:
  Exec exec_;
  nnrt_op_attrs attrs_;
  int states_;
  StridedLoop<4> loop_;
};

void expect_hyperparameters(const nnrt_op_attrs &a) {
  auto non_negative = [](const char *name, double v) {
    expect_attr(v >= 0, "%s %g must be >= 0", name, v);  // also refuses NaN
  };
  non_negative("eps", a.eps);
  non_negative("weight_decay", a.weight_decay);
  non_negative("l1", a.l1);
  non_negative("l2", a.l2);
  non_negative("clip_value", a.clip_value);
  switch (a.alg) {
    case NNRT_OPTIMIZER_SGD:
      non_negative("momentum", a.momentum);
      expect_attr(!(a.flags & NNRT_FLAG_NESTEROV) || a.momentum > 0, "Nesterov momentum needs momentum > 0; got %g",
                  a.momentum);
      break;
    case NNRT_OPTIMIZER_RMSPROP:
      expect_attr(a.beta1 >= 0 && a.beta1 < 1, "RMSPROP's rho (beta1) %g must be in [0, 1)", a.beta1);
      break;
    case NNRT_OPTIMIZER_ADAM:
    case NNRT_OPTIMIZER_ADAMW:
    case NNRT_OPTIMIZER_ADAMAX:
      expect_attr(a.beta1 >= 0 && a.beta1 < 1 && a.beta2 >= 0 && a.beta2 < 1,
                  "beta1 %g and beta2 %g must be in [0, 1)", a.beta1, a.beta2);
      break;
    default: break;
  }
}

}  // namespace

KernelPtr create_optimizer_update(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_op_attrs &a = d.attrs;
  if (a.alg < NNRT_OPTIMIZER_SGD || a.alg > NNRT_OPTIMIZER_ADAMAX)
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_optimizer_alg (SGD 1 .. ADAMAX 6)", a.alg);
  expect_hyperparameters(a);
  const int states = states_of(a);
  static const char *const outputs[] = {"(param)", "(param, state0)", "(param, state0, state1)"};
  expect_counts(d, 1, 1, "(grad)", 1 + states, 1 + states, outputs[states]);
  const nnrt_tensor_desc &param = d.outputs[0];
  const char *const names[] = {"output param", "output state0", "output state1"};
  for (int i = 0; i <= states; ++i) {
    expect_dtype(d.outputs[i], names[i], dtype_bit(NNRT_DTYPE_F32));
    expect_same_dims(d.outputs[i], names[i], param, "output param");
  }
  expect_dtype(d.inputs[0], "input grad", dtype_bit(NNRT_DTYPE_F32));
  expect_same_dims(d.inputs[0], "input grad", param, "output param");
  return std::make_unique<OptimizerKernel>(setup);
}

}  // namespace nnrt::reference
