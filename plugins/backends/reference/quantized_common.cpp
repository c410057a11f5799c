#include "quantized_common.h"

#include <cmath>

namespace nnrt::reference {

void expect_quantization(const nnrt_op_attrs &attrs, int32_t dtype, const char *name) {
  expect_attr(std::isfinite(attrs.scale) && attrs.scale > 0, "attrs.scale of %s must be finite and > 0; got %g", name,
              attrs.scale);
  const int lo = dtype == NNRT_DTYPE_U8 ? 0 : -128, hi = dtype == NNRT_DTYPE_U8 ? 255 : 127;
  expect_attr(attrs.zero_point >= lo && attrs.zero_point <= hi, "attrs.zero_point of %s (%s) must be in [%d, %d]; got %d",
              name, dtype_name(dtype), lo, hi, attrs.zero_point);
}

void expect_int8_operands(const nnrt_op_desc &d, const char *x_name, const char *w_name, int64_t units, int64_t depth) {
  expect_dtype(d.inputs[0], x_name, kQuantizedDtypes);
  expect_dtype(d.inputs[1], w_name, dtype_bit(NNRT_DTYPE_I8));
  expect_dtype(d.inputs[2], "input scales", dtype_bit(NNRT_DTYPE_F32));
  expect_dims(d.inputs[2], "input scales", {units});
  if (d.n_inputs == 4) {
    expect_dtype(d.inputs[3], "input bias", dtype_bit(NNRT_DTYPE_F32));
    expect_dims(d.inputs[3], "input bias", {units});
  }
  expect_dtype(d.outputs[0], "output", dtype_bit(NNRT_DTYPE_F32));
  expect_quantization(d.attrs, d.inputs[0].dtype, x_name);
  // |x - zero point| <= 255 and |w| <= 128: a sum of `depth` products stays within int32.
  expect_attr(depth <= INT32_MAX / (255 * 128), "a sum over %lld products of 8-bit values may overflow 32 bits (at most %d)",
              static_cast<long long>(depth), INT32_MAX / (255 * 128));
  expect_fused_activation(d.attrs);
}

Int8Epilogue int8_epilogue(const nnrt_op_desc &d, const nnrt_op_args &args) {
  const bool has_bias = d.n_inputs == 4;
  return Int8Epilogue{d.attrs.scale,
                      d.attrs.fused,
                      static_cast<float>(d.attrs.alpha),
                      static_cast<float>(d.attrs.beta),
                      static_cast<const float *>(args.inputs[2]),
                      d.inputs[2].strides[0],
                      has_bias ? static_cast<const float *>(args.inputs[3]) : nullptr,
                      has_bias ? d.inputs[3].strides[0] : 0};
}

}  // namespace nnrt::reference
