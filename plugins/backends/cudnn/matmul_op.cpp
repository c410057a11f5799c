// MATMUL through cuBLASLt: the descriptors, layouts and algorithm are chosen once, at op creation
// (matmul_params.h says how), and each run is one cublasLtMatmul call, plus an activation kernel
// for fused activations cuBLASLt's epilogues do not compute exactly as nnrt defines them.
#include <cstring>
#include <mutex>

#include "kernels.h"
#include "matmul_params.h"
#include "ops.h"

namespace nnrt::cudnn {

namespace {

// The workspace cuBLASLt may use; the allocator serves it per run.
constexpr size_t kMatmulWorkspace = size_t(32) << 20;

template <class T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T &v, const char *what) {
  check_cublas(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof v), what);
}

template <class T>
void set_layout(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, const T &v) {
  check_cublas(cublasLtMatrixLayoutSetAttribute(l, attr, &v, sizeof v), "cublasLtMatrixLayoutSetAttribute");
}

class MatmulOp final : public Op {
 public:
  MatmulOp(const nnrt_backend_instance &inst, const nnrt_op_desc &d) : handle_(inst.cublaslt), desc_(d) {
    std::string why = translate_matmul(d, false, &p_);
    if (!why.empty()) throw Failure(NNRT_ERR_UNSUPPORTED, why);
    try {
      build(inst.deterministic);
    } catch (...) {
      release();
      throw;
    }
  }
  ~MatmulOp() override { release(); }

  size_t workspace_bytes() const override { return workspace_; }

  void run(const nnrt_op_args &args, cudaStream_t stream) const override {
    // The bias pointer lives in the shared matmul descriptor: calls with a bias take turns.
    std::unique_lock<std::mutex> lock(bias_mutex_, std::defer_lock);
    if (p_.bias) {
      lock.lock();
      const void *bias = args.inputs[2];
      check_cublas(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                   "set the bias pointer");
    }
    const float one_f = 1.0f, zero_f = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    const bool f64 = p_.scale_type == CUDA_R_64F;
    const void *alpha = f64 ? static_cast<const void *>(&one_d) : &one_f;
    const void *beta = f64 ? static_cast<const void *>(&zero_d) : &zero_f;
    // cuBLASLt's A is nnrt's b and its B nnrt's a (see matmul_params.h).
    check_cublas(cublasLtMatmul(handle_, op_, alpha, args.inputs[1], a_, args.inputs[0], b_, beta, args.outputs[0], d_,
                                args.outputs[0], d_, &algo_, args.workspace, args.workspace_bytes, stream),
                 "cublasLtMatmul");
    if (p_.post_activation) {
      check_cuda(gpu::unary(p_.post_activation, desc_.outputs[0].dtype, args.outputs[0], args.outputs[0],
                            desc_.attrs.alpha, desc_.attrs.beta, post_index_, post_count_, stream),
                 "fused activation kernel");
    }
  }

 private:
  void build(bool deterministic) {
    check_cublas(cublasLtMatmulDescCreate(&op_, p_.compute_type, p_.scale_type), "cublasLtMatmulDescCreate");
    cublasOperation_t ta = p_.a.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = p_.b.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    set_desc(op_, CUBLASLT_MATMUL_DESC_TRANSA, ta, "set transa");
    set_desc(op_, CUBLASLT_MATMUL_DESC_TRANSB, tb, "set transb");
    set_desc(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, p_.epilogue, "set the epilogue");
    if (p_.bias) set_desc(op_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, p_.data_type, "set the bias dtype");
    make_layout(p_.a, &a_);
    make_layout(p_.b, &b_);
    make_layout(p_.d, &d_);

    check_cublas(cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
    size_t max_ws = kMatmulWorkspace;
    check_cublas(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws,
                                                      sizeof max_ws),
                 "set the workspace limit");
    if (deterministic) {
      // Split-K with in-place (atomic) reductions may sum in a different order from run to run.
      uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE;
      check_cublas(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask,
                                                        sizeof mask),
                   "ask for deterministic reductions");
    }
    cublasLtMatmulHeuristicResult_t result;
    std::memset(&result, 0, sizeof result);
    int found = 0;
    check_cublas(cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, d_, d_, pref_, 1, &result, &found),
                 "cublasLtMatmulAlgoGetHeuristic");
    if (found < 1) throw Failure(NNRT_ERR_UNSUPPORTED, "cuBLASLt has no algorithm for this matmul");
    algo_ = result.algo;
    workspace_ = result.workspaceSize;

    if (p_.post_activation) {
      const nnrt_tensor_desc &c = desc_.outputs[0];
      const int64_t *strides[2] = {c.strides, c.strides};
      std::memset(&post_index_, 0, sizeof post_index_);
      post_count_ = kernels::make_strided_index<2>(c.ndim, c.dims, strides, &post_index_);
    }
  }

  void make_layout(const LtMatrix &m, cublasLtMatrixLayout_t *out) {
    check_cublas(cublasLtMatrixLayoutCreate(out, p_.data_type, m.rows, m.cols, m.ld), "cublasLtMatrixLayoutCreate");
    if (p_.batch > 1) {
      set_layout(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, p_.batch);
      set_layout(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, m.batch_stride);
    }
  }

  void release() {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (d_) cublasLtMatrixLayoutDestroy(d_);
    if (op_) cublasLtMatmulDescDestroy(op_);
    pref_ = nullptr;
    a_ = b_ = d_ = nullptr;
    op_ = nullptr;
  }

  cublasLtHandle_t handle_;
  nnrt_op_desc desc_;
  MatmulParams p_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_ = 0;
  mutable std::mutex bias_mutex_;
  gpu::Index2 post_index_{};
  int64_t post_count_ = 0;
};

}  // namespace

std::string matmul_refusal(const nnrt_op_desc &d) {
  MatmulParams p;
  return translate_matmul(d, false, &p);
}

std::unique_ptr<Op> create_matmul_op(const nnrt_backend_instance &inst, const nnrt_op_desc &d) {
  return std::make_unique<MatmulOp>(inst, d);
}

}  // namespace nnrt::cudnn
