// Host-side tensors of the conformance suite (see tensors.h).
#include "tensors.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <sstream>

#include "nnrt/kernels/convert.h"
#include "nnrt/kernels/half.h"

namespace nnrt::conformance {

const char *layout_name(Layout l) {
  switch (l) {
    case Layout::contiguous: return "contiguous";
    case Layout::padded: return "padded";
    case Layout::transposed: return "transposed";
    case Layout::channels_last: return "nhwc";
  }
  return "?";
}



bool is_float_dtype(int32_t dtype) {
  return dtype == NNRT_DTYPE_F32 || dtype == NNRT_DTYPE_F64 || dtype == NNRT_DTYPE_F16 || dtype == NNRT_DTYPE_BF16;
}

// ---- layouts -----------------------------------------------------------------------------------

namespace {
// Row-major strides of `dims` listed in memory order `order` (outermost first), with `gap` extra
// elements after each row and each plane when padding.
Dims strides_in_order(const Dims &dims, const std::vector<int> &order, int64_t gap) {
  Dims strides(dims.size(), 0);
  int64_t s = 1;
  for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
    strides[order[i]] = s;
    s = s * dims[order[i]] + gap;
  }
  return strides;
}
}  // namespace

nnrt_tensor_desc make_tensor(int32_t dtype, const Dims &dims, Layout layout, uint32_t broadcast_mask) {
  nnrt_tensor_desc t;
  std::memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  t.dtype = dtype;
  t.ndim = static_cast<int32_t>(dims.size());
  const int n = t.ndim;
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  int64_t gap = 0;
  switch (layout) {
    case Layout::contiguous: break;
    case Layout::padded: gap = 3; break;
    case Layout::transposed:
      if (n >= 2) std::swap(order[n - 1], order[n - 2]);
      break;
    case Layout::channels_last:
      if (n == 4) order = {0, 2, 3, 1};
      break;
  }
  Dims strides = strides_in_order(dims, order, gap);
  for (int i = 0; i < n; ++i) {
    t.dims[i] = dims[i];
    t.strides[i] = ((broadcast_mask >> i) & 1u) ? 0 : strides[i];
  }
  return t;
}

std::string shape_string(const nnrt_tensor_desc &t) {
  if (t.ndim == 0) return "scalar";
  std::string s;
  for (int i = 0; i < t.ndim; ++i) {
    if (i) s += "x";
    s += std::to_string(t.dims[i]);
  }
  return s;
}

int64_t element_count(const nnrt_tensor_desc &t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.dims[i];
  return n;
}

int64_t span_elements(const nnrt_tensor_desc &t) {
  if (element_count(t) == 0) return 0;
  int64_t last = 0;
  for (int i = 0; i < t.ndim; ++i) last += (t.dims[i] - 1) * t.strides[i];
  return last + 1;
}

// ---- buffers -----------------------------------------------------------------------------------

void HostTensor::Free::operator()(uint8_t *p) const { std::free(p); }

HostTensor::HostTensor(const nnrt_tensor_desc &t) : desc_(t) {
  nbytes_ = static_cast<size_t>(span_elements(t)) * dtype_size(t.dtype);
  size_t alloc = (nbytes_ + 255) / 256 * 256;
  if (alloc == 0) alloc = 256;
  bytes_.reset(static_cast<uint8_t *>(std::aligned_alloc(256, alloc)));
  if (!bytes_) throw std::bad_alloc();
  std::memset(bytes_.get(), 0xff, alloc);
}

void HostTensor::copy_from(const HostTensor &other) { std::memcpy(data(), other.data(), nbytes_); }

double HostTensor::get(int64_t offset) const {
  const uint8_t *p = bytes_.get() + offset * static_cast<int64_t>(dtype_size(desc_.dtype));
  switch (desc_.dtype) {
    case NNRT_DTYPE_F32: { float v; std::memcpy(&v, p, 4); return v; }
    case NNRT_DTYPE_F64: { double v; std::memcpy(&v, p, 8); return v; }
    case NNRT_DTYPE_F16: { uint16_t v; std::memcpy(&v, p, 2); return kernels::f16_to_f32(v); }
    case NNRT_DTYPE_BF16: { uint16_t v; std::memcpy(&v, p, 2); return kernels::bf16_to_f32(v); }
    case NNRT_DTYPE_I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case NNRT_DTYPE_I64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case NNRT_DTYPE_U8:
    case NNRT_DTYPE_BOOL: return *p;
    case NNRT_DTYPE_I8: return static_cast<int8_t>(*p);
    default: return 0;
  }
}

void HostTensor::set(int64_t offset, double v) {
  uint8_t *p = bytes_.get() + offset * static_cast<int64_t>(dtype_size(desc_.dtype));
  switch (desc_.dtype) {
    case NNRT_DTYPE_F32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
    case NNRT_DTYPE_F64: std::memcpy(p, &v, 8); break;
    case NNRT_DTYPE_F16: { uint16_t h = kernels::f64_to_f16(v); std::memcpy(p, &h, 2); break; }
    case NNRT_DTYPE_BF16: { uint16_t h = kernels::f64_to_bf16(v); std::memcpy(p, &h, 2); break; }
    case NNRT_DTYPE_I32: { int32_t i = kernels::f64_to_i32_saturate(v); std::memcpy(p, &i, 4); break; }
    case NNRT_DTYPE_I64: { int64_t i = kernels::f64_to_i64_saturate(v); std::memcpy(p, &i, 8); break; }
    case NNRT_DTYPE_U8: *p = kernels::f64_to_u8_saturate(v); break;
    case NNRT_DTYPE_I8: *p = static_cast<uint8_t>(kernels::f64_to_i8_saturate(v)); break;
    case NNRT_DTYPE_BOOL: *p = v != 0 ? 1 : 0; break;
    default: break;
  }
}

void HostTensor::fill(const Fill &f, std::mt19937_64 &rng) {
  if (f.kind == Fill::poison) {
    std::memset(data(), 0xff, nbytes_);
    return;
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const bool is_float = is_float_dtype(desc_.dtype);
  auto integer_in = [&](double lo, double hi) {
    return std::floor(lo + (hi - lo + 1) * unit(rng) - 1e-9 * unit(rng));
  };
  // Every element of the span gets a value, gaps included, so that stride-0 and padded inputs
  // hold defined data everywhere.
  const int64_t n = span_elements(desc_);
  std::vector<int64_t> order;  // of the special values
  for (int64_t i = 0; i < n; ++i) {
    double v;
    if (desc_.dtype == NNRT_DTYPE_BOOL) {
      v = unit(rng) < 0.5 ? 0 : 1;
    } else {
      switch (f.kind) {
        case Fill::ties: v = 0.5 * integer_in(f.lo, f.hi); break;
        case Fill::integers: v = integer_in(f.lo, f.hi); break;
        case Fill::relu_out: v = std::max(0.0, f.lo + (f.hi - f.lo) * unit(rng)); break;
        case Fill::max_edges: {
          const double u = is_float ? unit(rng) : 1.0;
          if (u < 0.45)
            v = -std::numeric_limits<double>::infinity();
          else if (u < 0.55)
            v = std::numeric_limits<double>::quiet_NaN();
          else
            v = 0.5 * integer_in(f.lo, f.hi);
          break;
        }
        case Fill::special:
        case Fill::nonfinite: {
          // Every special value at least once (the first elements, in shuffled order), then
          // more of them at random.
          static const double kAll[] = {std::numeric_limits<double>::quiet_NaN(),
                                        std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(),
                                        3.0e9, -3.0e9, 1.0e30, -0.0, 0.0, 255.5, -1.5, 2.5};
          static const double kNonFinite[] = {std::numeric_limits<double>::quiet_NaN(),
                                              std::numeric_limits<double>::infinity(),
                                              -std::numeric_limits<double>::infinity(), -0.0, 0.0, -1.5, 2.5};
          const bool all = f.kind == Fill::special;
          const double *kSpecial = all ? kAll : kNonFinite;
          const int64_t kCount = all ? std::size(kAll) : std::size(kNonFinite);
          if (i == 0) {
            order.resize(kCount);
            for (int64_t k = 0; k < kCount; ++k) order[static_cast<size_t>(k)] = k;
            std::shuffle(order.begin(), order.end(), rng);
          }
          if (i < kCount)
            v = kSpecial[order[static_cast<size_t>(i)]];
          else if (unit(rng) < 0.1)
            v = kSpecial[static_cast<size_t>(unit(rng) * kCount) % kCount];
          else
            v = f.lo + (f.hi - f.lo) * unit(rng);
          if (!is_float && std::isnan(v)) v = 0;
          break;
        }
        case Fill::outlier: v = i == 0 ? f.value : f.lo + (f.hi - f.lo) * unit(rng); break;
        default: v = f.lo + (f.hi - f.lo) * unit(rng); break;
      }
      if (!is_float && f.kind != Fill::special && f.kind != Fill::nonfinite) v = std::round(v);
    }
    set(i, v);
  }
}

// ---- comparison --------------------------------------------------------------------------------

double relative_tolerance(int32_t dtype) {
  switch (dtype) {
    case NNRT_DTYPE_F64: return 1e-10;
    case NNRT_DTYPE_F32: return 1e-5;
    case NNRT_DTYPE_F16: return 2e-3;
    case NNRT_DTYPE_BF16: return 2e-2;
    default: return 0;  // integers and bool: exact
  }
}

std::string Comparison::describe(const std::string &what) const {
  std::ostringstream s;
  if (canary_damaged) s << what << ": wrote outside the elements of a strided output; ";
  if (mismatches > 0) {
    s << what << ": " << mismatches << " elements differ (worst " << worst_error << "x the tolerance)";
    for (const Mismatch &m : first) s << "; [" << m.index << "] want " << m.want << " got " << m.got;
  }
  return s.str();
}

Comparison compare(const HostTensor &want, const HostTensor &got, double rel, double scale, bool check_canary,
                   const HostTensor *magnitude) {
  Comparison c;
  const nnrt_tensor_desc &t = want.desc();
  int64_t index = 0;
  for_each_offset(t, [&](int64_t off) {
    const double w = want.get(off), g = got.get(off);
    bool same;
    double err_units = 0;
    if (std::isnan(w) || std::isnan(g)) {
      same = std::isnan(w) && std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g)) {
      same = w == g;
    } else {
      // A magnitude is the size of the terms behind a finite result; a NaN or infinite one (a unary
      // gradient whose dy is NaN where f' is 0) adds nothing, or the tolerance would be NaN and fail
      // equal results.
      const double m = magnitude ? std::fabs(magnitude->get(off)) : 0.0;
      const double tol = rel * (std::fabs(w) + scale + (std::isfinite(m) ? m : 0.0));
      const double err = std::fabs(g - w);
      same = err <= tol;
      err_units = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0);
    }
    if (!same) {
      ++c.mismatches;
      if (c.first.size() < 4) c.first.push_back({index, w, g});
      if (!(err_units <= c.worst_error)) c.worst_error = err_units;
    }
    ++index;
  });
  if (check_canary) {
    std::vector<bool> covered(static_cast<size_t>(span_elements(t)), false);
    for_each_offset(t, [&](int64_t off) { covered[static_cast<size_t>(off)] = true; });
    const size_t es = dtype_size(t.dtype);
    const auto *bytes = static_cast<const uint8_t *>(got.data());
    for (size_t e = 0; e < covered.size() && !c.canary_damaged; ++e)
      if (!covered[e])
        for (size_t b = 0; b < es; ++b)
          if (bytes[e * es + b] != 0xff) c.canary_damaged = true;
  }
  c.ok = c.mismatches == 0 && !c.canary_damaged;
  return c;
}

}  // namespace nnrt::conformance
