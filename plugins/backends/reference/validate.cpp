#include "validate.h"

#include <stdarg.h>
#include <stdio.h>

#include "errors.h"
#include "unary_dispatch.h"

namespace nnrt::reference {
namespace {

// Offsets are computed in int64: a tensor whose extent reaches this is refused.
constexpr int64_t kMaxExtent = int64_t{1} << 62;

void validate_tensor(const nnrt_tensor_desc &t, const char *role, int index, bool is_output) {
  if (t.struct_size != sizeof(nnrt_tensor_desc))
    fail(NNRT_ERR_INVALID_ARGUMENT, "%s %d: struct_size is %u, expected %zu", role, index,
         t.struct_size, sizeof(nnrt_tensor_desc));
  if (dtype_size(t.dtype) == 0)
    fail(NNRT_ERR_DTYPE, "%s %d: dtype %d is not an nnrt_dtype", role, index, t.dtype);
  if (t.ndim < 0 || t.ndim > NNRT_MAX_DIMS)
    fail(NNRT_ERR_SHAPE, "%s %d: rank %d is outside 0..%d", role, index, t.ndim, NNRT_MAX_DIMS);
  int64_t count = 1, extent = 0;
  bool empty = false;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.dims[d] < 0)
      fail(NNRT_ERR_SHAPE, "%s %d: dims %s has a negative dimension", role, index,
           dims_string(t).c_str());
    if (t.dims[d] == 0) empty = true;
  }
  if (empty) return;  // nothing is ever addressed
  for (int d = 0; d < t.ndim; ++d) {
    int64_t n = t.dims[d], s = t.strides[d] < 0 ? -t.strides[d] : t.strides[d];
    if (n > kMaxExtent / count || (n > 1 && s > (kMaxExtent - extent) / (n - 1)))
      fail(NNRT_ERR_SHAPE, "%s %d: %s is too large to address", role, index, tensor_string(t).c_str());
    count *= n;
    extent += s * (n - 1);
    if (is_output && n > 1 && t.strides[d] == 0)
      fail(NNRT_ERR_INVALID_ARGUMENT,
           "%s %d: %s has stride 0 along dimension %d of size %lld; an output must not repeat "
           "elements",
           role, index, tensor_string(t).c_str(), d, static_cast<long long>(n));
  }
}

std::string plural(int n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string count_range(int lo, int hi, const char *word) {
  if (lo == hi) return plural(lo, word);
  return std::to_string(lo) + " to " + plural(hi, word);
}

}  // namespace

void validate_tensors(const nnrt_op_desc &desc) {
  if (desc.kind <= 0 || desc.kind >= NNRT_OP_KIND_COUNT)
    fail(NNRT_ERR_UNSUPPORTED, "op kind %d is not one this backend knows (1..%d)", desc.kind,
         NNRT_OP_KIND_COUNT - 1);
  if (desc.n_inputs < 0 || desc.n_inputs > NNRT_OP_MAX_INPUTS || desc.n_outputs < 0 ||
      desc.n_outputs > NNRT_OP_MAX_OUTPUTS)
    fail(NNRT_ERR_INVALID_ARGUMENT, "n_inputs %d and n_outputs %d must be within 0..%d and 0..%d",
         desc.n_inputs, desc.n_outputs, NNRT_OP_MAX_INPUTS, NNRT_OP_MAX_OUTPUTS);
  for (int i = 0; i < desc.n_inputs; ++i) validate_tensor(desc.inputs[i], "input", i, false);
  for (int i = 0; i < desc.n_outputs; ++i) validate_tensor(desc.outputs[i], "output", i, true);
}

int64_t element_count(const nnrt_tensor_desc &t) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.dims[d];
  return n;
}

void expect_counts(const nnrt_op_desc &desc, int inputs_min, int inputs_max, const char *input_names,
                   int outputs_min, int outputs_max, const char *output_names) {
  if (desc.n_inputs < inputs_min || desc.n_inputs > inputs_max || desc.n_outputs < outputs_min ||
      desc.n_outputs > outputs_max)
    fail(NNRT_ERR_INVALID_ARGUMENT, "expected %s %s and %s %s; got %s and %s",
         count_range(inputs_min, inputs_max, "input").c_str(), input_names,
         count_range(outputs_min, outputs_max, "output").c_str(), output_names,
         plural(desc.n_inputs, "input").c_str(), plural(desc.n_outputs, "output").c_str());
}

std::string dtype_set_string(DtypeSet set) {
  std::string s;
  int total = 0, written = 0;
  for (int d = 1; d <= NNRT_DTYPE_BOOL; ++d) total += (set >> d) & 1;
  for (int d = 1; d <= NNRT_DTYPE_BOOL; ++d) {
    if (!((set >> d) & 1)) continue;
    if (written) s += written + 1 == total ? " or " : ", ";
    s += dtype_name(d);
    ++written;
  }
  return s;
}

void expect_dtype(const nnrt_tensor_desc &t, const char *name, DtypeSet allowed) {
  if (!(allowed & dtype_bit(t.dtype)))
    fail(NNRT_ERR_DTYPE, "%s has dtype %s; expected %s", name, dtype_name(t.dtype),
         dtype_set_string(allowed).c_str());
}

void expect_same_dtype(const nnrt_tensor_desc &t, const char *name, const nnrt_tensor_desc &ref,
                       const char *ref_name) {
  if (t.dtype != ref.dtype)
    fail(NNRT_ERR_DTYPE, "%s has dtype %s; expected %s, the dtype of %s", name, dtype_name(t.dtype),
         dtype_name(ref.dtype), ref_name);
}

void expect_rank(const nnrt_tensor_desc &t, const char *name, int rank) {
  if (t.ndim != rank)
    fail(NNRT_ERR_SHAPE, "%s has rank %d (dims %s); expected rank %d", name, t.ndim,
         dims_string(t).c_str(), rank);
}

void expect_dims(const nnrt_tensor_desc &t, const char *name, const int64_t *dims, int ndim) {
  bool same = t.ndim == ndim;
  for (int d = 0; same && d < ndim; ++d) same = t.dims[d] == dims[d];
  if (!same)
    fail(NNRT_ERR_SHAPE, "%s has dims %s; expected %s", name, dims_string(t).c_str(),
         dims_string(dims, ndim).c_str());
}

void expect_dims(const nnrt_tensor_desc &t, const char *name, std::initializer_list<int64_t> dims) {
  expect_dims(t, name, dims.begin(), static_cast<int>(dims.size()));
}

void expect_same_dims(const nnrt_tensor_desc &t, const char *name, const nnrt_tensor_desc &ref,
                      const char *ref_name) {
  bool same = t.ndim == ref.ndim;
  for (int d = 0; same && d < t.ndim; ++d) same = t.dims[d] == ref.dims[d];
  if (!same)
    fail(NNRT_ERR_SHAPE, "%s has dims %s; expected %s, the dims of %s", name, dims_string(t).c_str(),
         dims_string(ref).c_str(), ref_name);
}

void expect_attr(bool ok, const char *format, ...) {
  if (ok) return;
  char buffer[512];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  throw OpError(NNRT_ERR_INVALID_ARGUMENT, buffer);
}

// The fused activation of MATMUL and CONV2D: 0 or an nnrt_unary_alg.
void expect_fused_activation(const nnrt_op_attrs &attrs) {
  if (attrs.fused != NNRT_UNARY_NONE && !is_unary_alg(attrs.fused))
    fail(NNRT_ERR_UNSUPPORTED, "fused %d is neither 0 nor an nnrt_unary_alg (%d .. %d)", attrs.fused,
         NNRT_UNARY_IDENTITY, NNRT_UNARY_LAST);
  if (attrs.fused == NNRT_UNARY_CLIP)
    expect_attr(attrs.alpha <= attrs.beta, "fused CLIP needs alpha <= beta; got alpha %g, beta %g",
                attrs.alpha, attrs.beta);
}

}  // namespace nnrt::reference
