// Scans for NaN and infinities (see onednn_special_values.h).
#include "onednn_special_values.h"

#include "nnrt/kernels/half.h"

namespace nnrt::onednn {
namespace {

int64_t span_elements(const nnrt_tensor_desc &t) {
  int64_t last = 0;
  for (int i = 0; i < t.ndim; ++i) last += (t.dims[i] - 1) * t.strides[i];
  return last + 1;
}

// Classifies raw bit patterns: exponent all ones is infinity (mantissa 0) or NaN. A first,
// branch-free pass (which the compiler vectorizes) answers the common question "any at all?";
// only inputs that have some are classified.
template <class Bits, Bits kExponent, Bits kMantissa, Bits kSign>
uint32_t scan(const Bits *p, int64_t n) {
  unsigned any = 0;
#pragma omp parallel for reduction(| : any) schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) any |= (p[i] & kExponent) == kExponent;
  if (!any) return 0;
  uint32_t found = 0;
  for (int64_t i = 0; i < n; ++i) {
    const Bits b = p[i];
    if ((b & kExponent) == kExponent)
      found |= (b & kMantissa) ? kNaN : ((b & kSign) ? kNegInf : kPosInf);
  }
  return found;
}

}  // namespace

uint32_t find_special_values(const void *data, const nnrt_tensor_desc &t) {
  const int64_t n = span_elements(t);
  if (t.dtype == NNRT_DTYPE_BF16)
    return scan<uint16_t, 0x7f80u, 0x007fu, 0x8000u>(static_cast<const uint16_t *>(data), n);
  return scan<uint32_t, 0x7f800000u, 0x007fffffu, 0x80000000u>(static_cast<const uint32_t *>(data), n);
}

float load_float(const void *base, int32_t dtype, int64_t offset) {
  if (dtype == NNRT_DTYPE_BF16) return kernels::bf16_to_f32(static_cast<const uint16_t *>(base)[offset]);
  return static_cast<const float *>(base)[offset];
}

void store_float(void *base, int32_t dtype, int64_t offset, float v) {
  if (dtype == NNRT_DTYPE_BF16)
    static_cast<uint16_t *>(base)[offset] = kernels::f32_to_bf16(v);
  else
    static_cast<float *>(base)[offset] = v;
}

}  // namespace nnrt::onednn
