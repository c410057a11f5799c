// NNRT_OP_COPY through oneDNN's reorder: strided to strided, with dtype conversion.
//
// Only the conversions whose oneDNN result is exactly nnrt's are taken:
//   - same dtype: a bit copy of bytes, so F64, I64 and BOOL too, which oneDNN has no type for;
//   - between F32, BF16 and F16 (oneDNN rounds to nearest even once, as nnrt does);
//   - U8 and BOOL to any float or I32, I32 to F32 (exact, or one rounding to nearest even) and
//     I32 to U8 (both saturate).
// Refused: floats to integers (oneDNN rounds to nearest and saturates NaN to INT_MAX, nnrt
// truncates and gives 0 for NaN), anything to BOOL (x != 0 is not a reorder), I32 to BF16/F16
// (rounded twice, through f32) and everything with F64 or I64, for which oneDNN has no type.
#include "onednn_common.h"

namespace nnrt::onednn {
namespace {


bool exact_conversion(int32_t from, int32_t to) {
  auto is_narrow_float = [](int32_t t) { return t == NNRT_DTYPE_F32 || t == NNRT_DTYPE_BF16 || t == NNRT_DTYPE_F16; };
  if (is_narrow_float(from) && is_narrow_float(to)) return true;
  if (from == NNRT_DTYPE_U8 || from == NNRT_DTYPE_BOOL) return is_narrow_float(to) || to == NNRT_DTYPE_I32;
  if (from == NNRT_DTYPE_I32) return to == NNRT_DTYPE_F32 || to == NNRT_DTYPE_U8;  // u8: both saturate
  return false;
}

// The descriptor of a same-dtype copy: the tensor seen as bytes, with an extra innermost dim for
// the bytes of one element. u8 to u8 is exact on every oneDNN reorder path; wider integer types
// might pass through float on a reference path, and bf16 through a denormal-flushing conversion.
md bitwise_desc(const nnrt_tensor_desc &t) {
  const auto k = static_cast<dnnl::memory::dim>(kernels::dtype_size(t.dtype));
  if (k == 1) return memory_desc(t, dt::u8);
  dims ds = dims_of(t), st;
  for (int i = 0; i < t.ndim; ++i) st.push_back(t.dims[i] == 1 ? 0 : t.strides[i] * k);
  if (t.ndim == 0) st = {k};
  ds.push_back(k);
  st.push_back(1);
  // size-1 dims: give them the dense stride, as memory_desc() does
  for (int d = static_cast<int>(ds.size()) - 2; d >= 0; --d)
    if (ds[d] == 1) st[d] = st[d + 1] * ds[d + 1];
  return md(ds, dt::u8, st);
}

// For BOOL sources: a byte that is 0 or 1, read as u8.
md source_desc(const nnrt_tensor_desc &t) {
  return memory_desc(t, t.dtype == NNRT_DTYPE_BOOL ? dt::u8 : dnnl_type(t.dtype));
}

class CopyOp : public Op {
 public:
  CopyOp(const md &src, const md &dst, bool plan_only) : src_(src), dst_(dst) {
    dnnl::reorder::primitive_desc pd(cpu_engine(), src, cpu_engine(), dst, base_attr());
    layout.need_scratchpad(pd);
    if (!plan_only) {
      log_impl("copy", pd);
      reorder_ = dnnl::reorder(pd);
    }
  }

  void run(const Run &r) const override {
    r.execute(reorder_, {{DNNL_ARG_FROM, r.input(src_, 0)}, {DNNL_ARG_TO, r.output(dst_, 0)}});
  }

 private:
  md src_, dst_;
  dnnl::reorder reorder_;
};

}  // namespace

std::unique_ptr<Op> make_copy(const Build &b) {
  const nnrt_op_desc &d = b.desc;
  check_common(d, 1, 1, 1, 1);
  const nnrt_tensor_desc &x = d.inputs[0], &y = d.outputs[0];
  require(x.ndim == y.ndim, "copy: input and output ranks differ");
  for (int i = 0; i < x.ndim; ++i) require(x.dims[i] == y.dims[i], "copy: input and output dims differ");
  require(kernels::dtype_size(x.dtype) > 0 && kernels::dtype_size(y.dtype) > 0, "copy: unknown dtype");

  std::unique_ptr<Op> op;
  if (x.dtype == y.dtype) {
    op = std::make_unique<CopyOp>(bitwise_desc(x), bitwise_desc(y), b.plan_only);
  } else {
    if (!exact_conversion(x.dtype, y.dtype))
      refuse(std::string("copy: oneDNN does not convert these dtypes exactly as nnrt does [") +
             dtype_name(x.dtype) + " -> " + dtype_name(y.dtype) + "]");
    op = std::make_unique<CopyOp>(source_desc(x), memory_desc(y), b.plan_only);
  }
  return b.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
