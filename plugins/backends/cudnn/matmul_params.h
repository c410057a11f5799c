// How a MATMUL descriptor becomes one cuBLASLt call: pure translation, unit-tested without a GPU.
//
// nnrt's tensors are row-major and cuBLASLt's matrices column-major, so c = a b is computed as
// c^T = b^T a^T: cuBLASLt's A is our b, its B our a, and its D (N x M, column-major) is c (M x N,
// row-major). An operand whose last dim is contiguous is read as is; one whose second-to-last dim
// is contiguous (a transposed view) is read with the transpose op. Batch dims must merge into one
// uniformly strided batch (stride 0 broadcasts). The fused bias and RELU go into cuBLASLt's
// epilogue; other activations (GELU too: cuBLASLt's is the tanh approximation, nnrt's uses erf)
// run as an elementwise kernel on the result.
#pragma once

#include <cublasLt.h>

#include <string>

#include "nnrt/nnrt_backend.h"

namespace nnrt::cudnn {

struct LtMatrix {
  bool transpose = false;  // the op applied to this operand (A and B only)
  uint64_t rows = 0, cols = 0;  // of the stored column-major matrix
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

struct MatmulParams {
  cudaDataType_t data_type = CUDA_R_32F;
  cublasComputeType_t compute_type = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;
  LtMatrix a, b, d;  // cuBLASLt's A (our b), B (our a), D (our c)
  int64_t m = 0, n = 0, k = 0;  // of nnrt's c = a b
  int32_t batch = 1;
  bool bias = false;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  int32_t post_activation = 0;  // nnrt_unary_alg run on c afterwards, 0 for none
};

// The pointer alignments cuBLASLt's algorithms may rely on. Its heuristics assume 256 bytes for
// A, B, C and D unless told less, and an algorithm chosen so faults (cudaErrorMisalignedAddress,
// which loses the context) on a view that starts inside an allocation: an LSTM gate's slice, an
// API slice. Each operand's alignment is the largest power of two, up to 256, dividing its address.
constexpr uint32_t kLtDefaultAlignment = 256;
struct LtAlignment {
  uint32_t a = kLtDefaultAlignment, b = kLtDefaultAlignment, d = kLtDefaultAlignment;  // cuBLASLt's A, B, C=D
  bool operator==(const LtAlignment &o) const { return a == o.a && b == o.b && d == o.d; }
  bool is_default() const { return a == kLtDefaultAlignment && b == kLtDefaultAlignment && d == kLtDefaultAlignment; }
};
uint32_t pointer_alignment(const void *p);
// cuBLASLt's A is nnrt's b, its B nnrt's a, its D nnrt's c.
LtAlignment lt_alignment(const void *a, const void *b, const void *c);
// A fused bias is read with vector loads and has no alignment preference: one less aligned than
// this is copied to an aligned place in the workspace first.
constexpr uint32_t kLtBiasAlignment = 16;

// Fills *p; returns "" or why this descriptor does not map onto one cuBLASLt call. tf32 lets f32
// matmuls use TF32 tensor cores (off by default: results then match the CPU backends to f32 rounding).
std::string translate_matmul(const nnrt_op_desc &desc, bool tf32, MatmulParams *p);

}  // namespace nnrt::cudnn
