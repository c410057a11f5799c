// What QUANTIZE, MATMUL_INT8 and CONV2D_INT8 share: the checks of their quantization attributes,
// and the step that turns an exact integer sum back into float.
#pragma once

#include <stdint.h>

#include "activation.h"
#include "validate.h"

namespace nnrt::reference {

// attrs.scale finite and > 0; attrs.zero_point within the range of `dtype` (U8 or I8).
void expect_quantization(const nnrt_op_attrs &attrs, int32_t dtype, const char *name);

// An integer product's inputs: a or x U8 or I8; weights I8; scales (and the optional bias) F32
// vectors of `units`; the output F32. Also checks that a sum over `depth` products fits in 32 bits.
void expect_int8_operands(const nnrt_op_desc &desc, const char *x_name, const char *w_name, int64_t units,
                          int64_t depth);

// One output row of an integer product: c[j] = fused(scale * scales[j] * acc[j] + bias[j]), in
// float as the header says (the product of the two scales first, in double, rounded once to f32).
struct Int8Epilogue {
  double scale = 1;
  int fused = 0;
  float alpha = 0, beta = 0;
  const float *scales = nullptr;
  int64_t scales_stride = 1;
  const float *bias = nullptr;  // or NULL
  int64_t bias_stride = 1;

  void apply(const int32_t *acc, int64_t j0, int64_t n, float *row) const {
    for (int64_t j = 0; j < n; ++j) {
      const float s = static_cast<float>(scale * scales[(j0 + j) * scales_stride]);
      row[j] = s * static_cast<float>(acc[j]) + (bias ? bias[(j0 + j) * bias_stride] : 0.0f);
    }
    apply_activation(fused, row, n, alpha, beta);
  }
};

// The epilogue of one run: the attributes' scale and activation, input 2's scales and input 3's
// bias when there is one.
Int8Epilogue int8_epilogue(const nnrt_op_desc &desc, const nnrt_op_args &args);

}  // namespace nnrt::reference
