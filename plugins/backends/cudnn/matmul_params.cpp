#include "matmul_params.h"

#include <cstdint>

namespace nnrt::cudnn {

namespace {

bool float_type(int32_t dtype, bool tf32, MatmulParams *p) {
  switch (dtype) {
    case NNRT_DTYPE_F32:
      p->data_type = CUDA_R_32F;
      p->compute_type = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      p->scale_type = CUDA_R_32F;
      return true;
    case NNRT_DTYPE_F16:
      p->data_type = CUDA_R_16F;  // tensor cores, f32 accumulation
      p->compute_type = CUBLAS_COMPUTE_32F;
      p->scale_type = CUDA_R_32F;
      return true;
    case NNRT_DTYPE_BF16:
      p->data_type = CUDA_R_16BF;
      p->compute_type = CUBLAS_COMPUTE_32F;
      p->scale_type = CUDA_R_32F;
      return true;
    case NNRT_DTYPE_F64:
      p->data_type = CUDA_R_64F;
      p->compute_type = CUBLAS_COMPUTE_64F;
      p->scale_type = CUDA_R_64F;
      return true;
    default: return false;
  }
}

// The column-major view of a row-major [R, C] matrix with strides (sr, sc): either its transpose
// stored with ld = sr (sc == 1), or itself stored with ld = sc and read transposed (sr == 1).
// `rows_t`, `cols_t` are the dims of the transposed (column-major) matrix cuBLASLt multiplies.
bool view(int64_t r, int64_t c, int64_t sr, int64_t sc, LtMatrix *out) {
  // A dim of size 1 has no meaningful stride: pick the one that makes the layout valid.
  if (c == 1) sc = 1;
  if (r == 1) sr = c;
  if (sc == 1 && sr >= (c > 1 ? c : 1)) {
    out->transpose = false;
    out->rows = static_cast<uint64_t>(c);
    out->cols = static_cast<uint64_t>(r);
    out->ld = sr;
    return true;
  }
  if (sr == 1 && sc >= (r > 1 ? r : 1)) {
    out->transpose = true;
    out->rows = static_cast<uint64_t>(r);
    out->cols = static_cast<uint64_t>(c);
    out->ld = sc;
    return true;
  }
  return false;
}

}  // namespace

std::string translate_matmul(const nnrt_op_desc &d, bool tf32, MatmulParams *p) {
  *p = MatmulParams{};
  if (d.n_inputs < 2 || d.n_inputs > 3 || d.n_outputs != 1) return "matmul takes a, b, [bias] and gives c";
  const nnrt_tensor_desc &a = d.inputs[0], &b = d.inputs[1], &c = d.outputs[0];
  if (a.ndim < 2 || a.ndim > NNRT_MAX_DIMS || b.ndim != a.ndim || c.ndim != a.ndim)
    return "matmul needs a, b and c of one rank >= 2";
  if (a.dtype != c.dtype || b.dtype != c.dtype || !float_type(c.dtype, tf32, p))
    return "matmul needs a, b and c of one float dtype";
  const int r = c.ndim;
  p->m = c.dims[r - 2];
  p->n = c.dims[r - 1];
  p->k = a.dims[r - 1];
  if (a.dims[r - 2] != p->m || b.dims[r - 2] != p->k || b.dims[r - 1] != p->n) return "matmul dims do not agree";
  if (p->m == 0 || p->n == 0 || p->k == 0) return "empty matmuls run on the reference backend";
  if (p->m > INT32_MAX || p->n > INT32_MAX || p->k > INT32_MAX) return "a matmul dim exceeds cuBLASLt's int32 range";

  // Batch dims: the same dims in all three, merged into one strided batch.
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  bool have = false;
  for (int i = 0; i < r - 2; ++i) {
    if (a.dims[i] != c.dims[i] || b.dims[i] != c.dims[i]) return "matmul batch dims do not agree";
    if (c.dims[i] == 1) continue;
    batch *= c.dims[i];
    if (have && !(stride_a == a.strides[i] * c.dims[i] && stride_b == b.strides[i] * c.dims[i] &&
                  stride_c == c.strides[i] * c.dims[i]))
      return "the batch dims do not merge into one strided batch";
    stride_a = a.strides[i];
    stride_b = b.strides[i];
    stride_c = c.strides[i];
    have = true;
  }
  if (batch > INT32_MAX) return "too many batches for cuBLASLt";
  if (batch > 1 && stride_c <= 0) return "the output's batch stride must be positive";
  p->batch = static_cast<int32_t>(batch);

  // cuBLASLt A = our b, B = our a, D = our c.
  if (!view(p->k, p->n, b.strides[r - 2], b.strides[r - 1], &p->a)) return "b is not a row- or column-major view";
  if (!view(p->m, p->k, a.strides[r - 2], a.strides[r - 1], &p->b)) return "a is not a row- or column-major view";
  if (!view(p->m, p->n, c.strides[r - 2], c.strides[r - 1], &p->d) || p->d.transpose)
    return "c must be row-major with a contiguous last dim";
  p->a.batch_stride = stride_b;
  p->b.batch_stride = stride_a;
  p->d.batch_stride = stride_c;

  if (d.n_inputs == 3) {
    const nnrt_tensor_desc &bias = d.inputs[2];
    if (bias.dtype != c.dtype || bias.ndim != 1 || bias.dims[0] != p->n || (p->n > 1 && bias.strides[0] != 1))
      return "the bias must be a contiguous [N] vector of c's dtype";
    p->bias = true;
  }
  const int32_t fused = d.attrs.fused;
  if (fused == NNRT_UNARY_RELU) {
    p->epilogue = p->bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  } else {
    p->epilogue = p->bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    if (fused < NNRT_UNARY_NONE || fused > NNRT_UNARY_LAST) return "unknown fused activation";
    p->post_activation = fused == NNRT_UNARY_IDENTITY ? 0 : fused;
  }
  return "";
}

uint32_t pointer_alignment(const void *p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  uint32_t alignment = 1;
  while (alignment < kLtDefaultAlignment && address % (alignment * 2) == 0) alignment *= 2;
  return alignment;
}

LtAlignment lt_alignment(const void *a, const void *b, const void *c) {
  return LtAlignment{pointer_alignment(b), pointer_alignment(a), pointer_alignment(c)};
}

}  // namespace nnrt::cudnn
