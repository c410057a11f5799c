// Test harness for the reference backend: tensors with any strides held in host memory, and a
// runner that creates, runs and destroys one op through the backend's nnrt_backend_v1 table (on
// the test host of tests/support, with a pool of the asked thread count).
#pragma once

#include "nnrt/kernels/dtype_info.h"

#include <stdint.h>

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "nnrt/nnrt_backend.h"

namespace nnrt::reftest {

using kernels::dtype_size;
bool is_float_dtype(int32_t dtype);
extern const int32_t kFloatDtypes[4];
extern const int32_t kAllDtypes[8];
const char *dtype_label(int32_t dtype);

// A tensor: dims and strides (in elements) over shared storage. Copies share the storage, so a
// view (transposed, broadcast) and its origin see the same bytes.
struct Tensor {
  int32_t dtype = NNRT_DTYPE_F32;
  std::vector<int64_t> dims, strides;
  int64_t offset = 0;  // element offset of logical element 0 in the storage
  std::shared_ptr<std::vector<unsigned char>> storage;

  // Contiguous, zero-filled.
  static Tensor zeros(int32_t dtype, std::vector<int64_t> dims);
  // Contiguous, from row-major values (converted to dtype: floats round to nearest even, integers
  // truncate).
  static Tensor of(int32_t dtype, std::vector<int64_t> dims, const std::vector<double> &values);
  // Uniform values in [low, high) from a seeded generator, rounded to the dtype.
  static Tensor random(int32_t dtype, std::vector<int64_t> dims, uint32_t seed, double low = -1, double high = 1);

  int ndim() const { return static_cast<int>(dims.size()); }
  int64_t numel() const;
  int64_t element_offset(int64_t linear) const;  // of logical row-major element `linear`
  double at(int64_t linear) const;
  void set(int64_t linear, double v);
  std::vector<double> values() const;
  void *data() const;
  nnrt_tensor_desc desc() const;

  // The same logical values in a new layout: physical dims in `order` (outermost first), every
  // stride spread by `spread` (>= 1; the gaps hold NaN-like garbage).
  Tensor relayout(const std::vector<int> &order, int64_t spread = 1) const;
  // The same values with every stride negated (each dim stored backwards).
  Tensor flipped() const;
  // A view with these dims where this tensor's dims are 1 and dims differ: stride 0 (broadcast).
  Tensor broadcast_to(const std::vector<int64_t> &to) const;
  // A view with dims d0 and d1 swapped (a transposed operand).
  Tensor transposed(int d0, int d1) const;
  // A copy of the values into a fresh contiguous tensor of another dtype.
  Tensor cast(int32_t to) const;
  // A bit-exact copy of the storage (for comparing results of two runs).
  std::vector<unsigned char> bytes() const;
};

struct RunOptions {
  double scalars[NNRT_OP_MAX_SCALARS] = {};
  uint64_t counter = 0;
  int threads = 1;
};

// A zero-filled attrs with alg set.
nnrt_op_attrs attrs_with(int32_t alg);

// Creates the op (checking that supports() agrees with op_create), runs it, destroys it. Returns
// the first failing status; last_error() then holds the backend's message.
nnrt_status run_op(int32_t kind, const nnrt_op_attrs &attrs, std::initializer_list<const Tensor *> inputs,
                   std::initializer_list<Tensor *> outputs, const RunOptions &options = {});
// Only op_create (for descriptor checks).
nnrt_status create_op(const nnrt_op_desc &desc, int threads = 1);
nnrt_op_desc make_desc(int32_t kind, const nnrt_op_attrs &attrs, std::initializer_list<const Tensor *> inputs,
                       std::initializer_list<const Tensor *> outputs);
std::string last_error();

const nnrt_backend_v1 *table();
nnrt_backend_instance *instance(int threads);

// Central differences of sum(weights * f(x)) with respect to each x[i].
std::vector<double> numeric_gradient(const std::function<std::vector<double>(const std::vector<double> &)> &f,
                                     std::vector<double> x, const std::vector<double> &weights, double h = 1e-6);

// max |a - b| / (|b| + floor) over the elements, for gtest messages.
double max_relative_error(const std::vector<double> &a, const std::vector<double> &b, double floor = 1.0);

}  // namespace nnrt::reftest
