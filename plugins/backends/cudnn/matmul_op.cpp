// MATMUL through cuBLASLt: the descriptors, layouts and algorithm are chosen once, at op creation
// (matmul_params.h says how), and each run is one cublasLtMatmul call, plus an activation kernel
// for fused activations cuBLASLt's epilogues do not compute exactly as nnrt defines them.
//
// The algorithm chosen at creation may assume 256-byte aligned operands (cuBLASLt's default). A
// run whose operands are less aligned (views that start inside an allocation) takes another
// algorithm, asked for with those alignments the first time they are seen and kept, within the
// same workspace; a less aligned bias is copied to an aligned place in the workspace first.
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "kernels.h"
#include "matmul_params.h"
#include "nnrt/kernels/dtype_info.h"
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
  MatmulOp(const nnrt_backend_instance &inst, const nnrt_op_desc &d)
      : handle_(inst.cublaslt), desc_(d), deterministic_(inst.deterministic) {
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

  size_t workspace_bytes() const override { return p_.bias ? bias_offset_ + bias_bytes_ : workspace_; }

  void run(const nnrt_op_args &args, cudaStream_t stream) const override {
    // The bias pointer lives in the shared matmul descriptor: calls with a bias take turns.
    std::unique_lock<std::mutex> lock(bias_mutex_, std::defer_lock);
    if (p_.bias) {
      lock.lock();
      const void *bias = args.inputs[2];
      if (pointer_alignment(bias) < kLtBiasAlignment) {
        void *aligned_bias = static_cast<char *>(args.workspace) + bias_offset_;
        check_cuda(cudaMemcpyAsync(aligned_bias, bias, bias_bytes_, cudaMemcpyDeviceToDevice, stream),
                   "copy the bias to an aligned place");
        bias = aligned_bias;
      }
      check_cublas(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                   "set the bias pointer");
    }
    const float one_f = 1.0f, zero_f = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    const bool f64 = p_.scale_type == CUDA_R_64F;
    const void *alpha = f64 ? static_cast<const void *>(&one_d) : &one_f;
    const void *beta = f64 ? static_cast<const void *>(&zero_d) : &zero_f;
    const LtAlignment alignment = lt_alignment(args.inputs[0], args.inputs[1], args.outputs[0]);
    const cublasLtMatmulAlgo_t algo = alignment.is_default() ? algo_ : algo_for(alignment);
    // cuBLASLt's A is nnrt's b and its B nnrt's a (see matmul_params.h).
    check_cublas(cublasLtMatmul(handle_, op_, alpha, args.inputs[1], a_, args.inputs[0], b_, beta, args.outputs[0], d_,
                                args.outputs[0], d_, &algo, args.workspace, workspace_, stream),
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
    if (p_.bias) {
      bias_offset_ = (workspace_ + kLtDefaultAlignment - 1) / kLtDefaultAlignment * kLtDefaultAlignment;
      bias_bytes_ = static_cast<size_t>(desc_.inputs[2].dims[0]) * kernels::dtype_size(desc_.inputs[2].dtype);
    }

    if (p_.post_activation) {
      const nnrt_tensor_desc &c = desc_.outputs[0];
      const int64_t *strides[2] = {c.strides, c.strides};
      std::memset(&post_index_, 0, sizeof post_index_);
      post_count_ = kernels::make_strided_index<2>(c.ndim, c.dims, strides, &post_index_);
    }
  }

  // The algorithm for operands of these alignments: asked of cuBLASLt's heuristics the first time,
  // within the workspace the op already has, then kept.
  cublasLtMatmulAlgo_t algo_for(const LtAlignment &alignment) const {
    std::lock_guard<std::mutex> lock(plans_mutex_);
    for (const auto &[known, algo] : aligned_algos_)
      if (known == alignment) return algo;
    cublasLtMatmulPreference_t pref = nullptr;
    check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    cublasLtMatmulHeuristicResult_t result;
    std::memset(&result, 0, sizeof result);
    int found = 0;
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    const uint32_t alignments[4] = {alignment.a, alignment.b, alignment.d, alignment.d};
    const cublasLtMatmulPreferenceAttributes_t attributes[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    size_t max_ws = workspace_;
    s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof max_ws);
    for (int i = 0; i < 4 && s == CUBLAS_STATUS_SUCCESS; ++i)
      s = cublasLtMatmulPreferenceSetAttribute(pref, attributes[i], &alignments[i], sizeof alignments[i]);
    if (s == CUBLAS_STATUS_SUCCESS && deterministic_) {
      uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE;
      s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask);
    }
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, d_, d_, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    check_cublas(s, "cublasLtMatmulAlgoGetHeuristic (operands less aligned than 256 bytes)");
    if (found < 1)
      throw Failure(NNRT_ERR_UNSUPPORTED, "cuBLASLt has no algorithm for this matmul with operands aligned to " +
                                              std::to_string(alignment.a) + ", " + std::to_string(alignment.b) +
                                              " and " + std::to_string(alignment.d) + " bytes");
    aligned_algos_.emplace_back(alignment, result.algo);
    return result.algo;
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
  size_t bias_offset_ = 0, bias_bytes_ = 0;  // the aligned copy of a less aligned bias, in the workspace
  bool deterministic_;
  mutable std::mutex bias_mutex_;
  mutable std::mutex plans_mutex_;
  mutable std::vector<std::pair<LtAlignment, cublasLtMatmulAlgo_t>> aligned_algos_;
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
