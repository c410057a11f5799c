// NNRT_OP_MATMUL: c[..., M, N] = fused(a[..., M, K] * b[..., K, N] + bias[N]) for float dtypes,
// with batch dims broadcast through stride 0 and transposed operands as strided views. Runs on the
// blocked product of gemm.h, accumulating in f32 (f64 for f64).
#include "activation.h"
#include "dtype.h"
#include "gemm.h"
#include "op_kernel.h"
#include "unary_dispatch.h"
#include "validate.h"

namespace nnrt::reference {
namespace {

// Element offsets of the matrices of batch entry `batch` (row-major over c's batch dims).
struct BatchOffsets {
  int ndim = 0;
  int64_t dims[NNRT_MAX_DIMS] = {};
  int64_t strides[3][NNRT_MAX_DIMS] = {};  // a, b, c

  int64_t offset(int which, int64_t batch) const {
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      off += (batch % dims[d]) * strides[which][d];
      batch /= dims[d];
    }
    return off;
  }
};

template <class T, class C>
struct APacker {
  const T *a;
  int64_t rs, cs;
  const BatchOffsets *batches;
  void pack(int64_t batch, int64_t i0, int64_t mc, int64_t p0, int64_t kc, C *dst) const {
    gemm::pack_panels<gemm::Blocking<C>::MR>(a + batches->offset(0, batch) + i0 * rs + p0 * cs, rs, cs,
                                             mc, kc, dst);
  }
};

template <class T, class C>
struct BPacker {
  const T *b;
  int64_t rs, cs;
  const BatchOffsets *batches;
  void pack(int64_t batch, int64_t p0, int64_t kc, int64_t j0, int64_t nc, C *dst) const {
    gemm::pack_panels<gemm::Blocking<C>::NR>(b + batches->offset(1, batch) + p0 * rs + j0 * cs, cs, rs,
                                             nc, kc, dst);
  }
};

template <class T, class C>
struct CSink {
  T *c;
  int64_t rs, cs;
  const T *bias;  // or NULL
  int64_t bias_stride;
  int fused;
  C alpha, beta;
  const BatchOffsets *batches;
  void store(int64_t batch, int64_t i0, int64_t mc, int64_t j0, int64_t nc, C *tile, int64_t ld) const {
    T *base = c + batches->offset(2, batch);
    for (int64_t i = 0; i < mc; ++i) {
      C *row = tile + i * ld;
      if (bias)
        for (int64_t j = 0; j < nc; ++j) row[j] += load(bias + (j0 + j) * bias_stride);
      apply_activation(fused, row, nc, alpha, beta);
      T *out = base + (i0 + i) * rs + j0 * cs;
      if (cs == 1) {
        for (int64_t j = 0; j < nc; ++j) reference::store(out + j, row[j]);
      } else {
        for (int64_t j = 0; j < nc; ++j) reference::store(out + j * cs, row[j]);
      }
    }
  }
};

class MatmulKernel final : public OpKernel {
 public:
  explicit MatmulKernel(const OpSetup &setup)
      : exec_(setup.exec), a_(setup.desc.inputs[0]), b_(setup.desc.inputs[1]), c_(setup.desc.outputs[0]),
        has_bias_(setup.desc.n_inputs == 3), fused_(setup.desc.attrs.fused),
        alpha_(setup.desc.attrs.alpha), beta_(setup.desc.attrs.beta) {
    if (has_bias_) bias_ = setup.desc.inputs[2];
    const int r = c_.ndim;
    batches_.ndim = r - 2;
    shape_.batches = 1;
    for (int d = 0; d < r - 2; ++d) {
      batches_.dims[d] = c_.dims[d];
      batches_.strides[0][d] = a_.strides[d];
      batches_.strides[1][d] = b_.strides[d];
      batches_.strides[2][d] = c_.strides[d];
      shape_.batches *= c_.dims[d];
    }
    shape_.m = c_.dims[r - 2];
    shape_.n = c_.dims[r - 1];
    shape_.k = a_.dims[r - 1];
    visit_float(c_.dtype, [&](auto type) {
      using C = compute_t<typename decltype(type)::type>;
      workspace_bytes_ = gemm::parallel_workspace_bytes<C>(exec_, shape_);
    });
  }

  void run(const nnrt_op_args &args) const override {
    visit_float(c_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const int r = c_.ndim;
      APacker<T, C> a{input_ptr<T>(args, 0), a_.strides[r - 2], a_.strides[r - 1], &batches_};
      BPacker<T, C> b{input_ptr<T>(args, 1), b_.strides[r - 2], b_.strides[r - 1], &batches_};
      CSink<T, C> c{output_ptr<T>(args, 0),
                    c_.strides[r - 2],
                    c_.strides[r - 1],
                    has_bias_ ? input_ptr<T>(args, 2) : nullptr,
                    has_bias_ ? bias_.strides[0] : 0,
                    fused_,
                    static_cast<C>(alpha_),
                    static_cast<C>(beta_),
                    &batches_};
      gemm::compute_parallel<C>(exec_, shape_, a, b, c, args.workspace);
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc a_, b_, c_, bias_{};
  bool has_bias_;
  int fused_;
  double alpha_, beta_;
  BatchOffsets batches_;
  gemm::Shape shape_;
};

}  // namespace

KernelPtr create_matmul(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &a = d.inputs[0], &b = d.inputs[1], &c = d.outputs[0];
  expect_dtype(c, "output c", kFloatDtypes);
  expect_same_dtype(a, "input a", c, "output c");
  expect_same_dtype(b, "input b", c, "output c");
  const int r = c.ndim;
  if (r < 2) fail(NNRT_ERR_SHAPE, "output c has rank %d (dims %s); expected rank >= 2", r, dims_string(c).c_str());
  const int64_t m = c.dims[r - 2], n = c.dims[r - 1];
  const int64_t k = a.ndim == r ? a.dims[r - 1] : 0;
  int64_t a_dims[NNRT_MAX_DIMS], b_dims[NNRT_MAX_DIMS];
  for (int i = 0; i < r - 2; ++i) a_dims[i] = b_dims[i] = c.dims[i];
  a_dims[r - 2] = m;
  a_dims[r - 1] = k;
  b_dims[r - 2] = k;
  b_dims[r - 1] = n;
  expect_rank(a, "input a", r);
  expect_dims(a, "input a ([..., M, K] with c's batch dims, stride 0 where broadcast)", a_dims, r);
  expect_dims(b, "input b ([..., K, N] with c's batch dims, stride 0 where broadcast)", b_dims, r);
  if (d.n_inputs == 3) {
    expect_same_dtype(d.inputs[2], "input bias", c, "output c");
    expect_dims(d.inputs[2], "input bias ([N])", {n});
  }
  expect_fused_activation(d.attrs);
  return std::make_unique<MatmulKernel>(setup);
}

}  // namespace nnrt::reference
