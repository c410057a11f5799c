// Host-side tensors of the conformance suite: strided layouts, buffers, deterministic fills,
// element access as double, and the comparison of a backend's output with the reference's.
#pragma once

#include "nnrt/kernels/dtype_info.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nnrt/nnrt_backend.h"

namespace nnrt::conformance {

using Dims = std::vector<int64_t>;

// How a tensor's elements sit in memory.
enum class Layout {
  contiguous,   // row-major
  padded,       // row-major with gaps after every row and plane
  transposed,   // the last two dims swapped in memory (a transposed view)
  channels_last // 4-D NCHW dims stored as NHWC
};
const char *layout_name(Layout l);

using kernels::dtype_name;
using kernels::dtype_size;
bool is_float_dtype(int32_t dtype);

// A tensor descriptor with the given dims and layout; dims whose bit is set in broadcast_mask get
// stride 0 (a broadcast view).
nnrt_tensor_desc make_tensor(int32_t dtype, const Dims &dims, Layout layout = Layout::contiguous,
                             uint32_t broadcast_mask = 0);
std::string shape_string(const nnrt_tensor_desc &t);  // "3x1x5"; "scalar" for rank 0
int64_t element_count(const nnrt_tensor_desc &t);
// Elements between the first and the last one the tensor addresses, inclusive.
int64_t span_elements(const nnrt_tensor_desc &t);

// Calls f(offset_in_elements) for every element in row-major order of the logical index.
template <class F>
void for_each_offset(const nnrt_tensor_desc &t, F &&f) {
  if (element_count(t) == 0) return;
  int64_t idx[NNRT_MAX_DIMS] = {0};
  for (;;) {
    int64_t off = 0;
    for (int d = 0; d < t.ndim; ++d) off += idx[d] * t.strides[d];
    f(off);
    int d = t.ndim - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < t.dims[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// What goes into a tensor before a run.
struct Fill {
  enum Kind {
    uniform,    // uniform in [lo, hi]
    ties,       // integers in [lo, hi] times 0.5: many equal values (max pooling, argmax)
    integers,   // integers in [lo, hi]: class indices, gather indices, integer dtypes
    special,    // uniform in [lo, hi] with NaN, +-inf and out-of-range values sprinkled in
    nonfinite,  // as special, but with no large finite values (+-3e9, 1e30, 255.5): a sum over it
                // is NaN, an infinity or well conditioned, never a cancellation whose rounding
                // (and so its sign, or whether it is exactly 0) depends on the order of the sum
    relu_out,   // max(0, uniform[lo, hi]): exact zeros, as a relu's output has
    max_edges,  // floats: ties as above, almost half -inf and a tenth NaN, so that max pooling sees
                // windows wholly of -inf, windows with several NaN and tied maxima (others: ties)
    poison,     // every byte 0xff: an output the op must overwrite (NaN in floats, -1 in ints)
    outlier     // uniform in [lo, hi], but element 0 is `value`
  };
  Kind kind = uniform;
  double lo = -1, hi = 1;
  double value = 0;  // outlier's
  static Fill U(double lo, double hi) { return {uniform, lo, hi}; }
  static Fill Ties(double lo, double hi) { return {ties, lo, hi}; }
  static Fill Ints(double lo, double hi) { return {integers, lo, hi}; }
  static Fill Special(double lo, double hi) { return {special, lo, hi}; }
  static Fill NonFinite(double lo, double hi) { return {nonfinite, lo, hi}; }
  static Fill ReluOut(double lo, double hi) { return {relu_out, lo, hi}; }
  static Fill MaxEdges(double lo, double hi) { return {max_edges, lo, hi}; }
  static Fill Poison() { return {poison, 0, 0}; }
  static Fill Outlier(double lo, double hi, double value) { return {outlier, lo, hi, value}; }
};

// A buffer covering every element a tensor addresses, 256-byte aligned (as nnrt's allocator).
class HostTensor {
 public:
  HostTensor() = default;
  explicit HostTensor(const nnrt_tensor_desc &t);
  const nnrt_tensor_desc &desc() const { return desc_; }
  void *data() { return bytes_.get(); }
  const void *data() const { return bytes_.get(); }
  size_t nbytes() const { return nbytes_; }

  void fill(const Fill &f, std::mt19937_64 &rng);
  void copy_from(const HostTensor &other);  // same desc
  double get(int64_t offset) const;          // element at an offset, as double
  void set(int64_t offset, double v);        // rounds / converts to the dtype as nnrt does

 private:
  struct Free {
    void operator()(uint8_t *p) const;
  };
  nnrt_tensor_desc desc_{};
  std::unique_ptr<uint8_t, Free> bytes_;
  size_t nbytes_ = 0;
};

// Per-dtype tolerances: |got - want| <= rel * |want| + rel * scale. `scale` is the magnitude the
// result was computed from (sqrt of a sum's length times its terms' size), set by each case.
double relative_tolerance(int32_t dtype);

struct Mismatch {
  int64_t index = 0;  // logical, row-major
  double want = 0, got = 0;
};

struct Comparison {
  bool ok = true;
  int64_t mismatches = 0;
  double worst_error = 0;  // in units of the tolerance
  std::vector<Mismatch> first;  // a few, for the report
  bool canary_damaged = false;  // the backend wrote between the elements of a strided output
  std::string describe(const std::string &what) const;
};

// Compares `got` with `want` (same desc) element by element: NaN matches NaN, infinities match
// infinities of the same sign, and finite values match when |got - want| <= rel * (|want| + scale
// + |magnitude|), rel from above (0 for bit-exact results) and magnitude (want's desc, or null)
// each element's own. When check_canary, bytes of `got` outside the tensor's elements must still
// be poison.
Comparison compare(const HostTensor &want, const HostTensor &got, double rel, double scale, bool check_canary,
                   const HostTensor *magnitude = nullptr);

}  // namespace nnrt::conformance
