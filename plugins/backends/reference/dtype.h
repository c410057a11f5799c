// Element types as C++ types, loads and stores in the compute type, dtype dispatch, and the
// conversion rules of NNRT_OP_COPY.
//
// f16 and bf16 live in memory as 16-bit patterns (F16, BF16) and compute in f32; they are rounded
// once, to nearest even, when stored. f64 computes in double. BOOL is a byte, 0 or 1 (Bool).
#pragma once

#include "nnrt/kernels/dtype_info.h"

#include <stdint.h>

#include <type_traits>

#include "errors.h"
#include "nnrt/kernels/convert.h"
#include "nnrt/kernels/half.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::reference {

struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};
struct Bool {
  uint8_t value;
};

// The type arithmetic on T happens in.
template <class T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<F16> {
  using type = float;
};
template <>
struct ComputeOf<BF16> {
  using type = float;
};
template <class T>
using compute_t = typename ComputeOf<T>::type;

template <class T>
constexpr bool is_half_v = std::is_same_v<T, F16> || std::is_same_v<T, BF16>;
template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;

inline float load(const F16 *p) { return kernels::f16_to_f32(p->bits); }
inline float load(const BF16 *p) { return kernels::bf16_to_f32(p->bits); }
template <class T>
inline T load(const T *p) {
  return *p;
}

inline void store(F16 *p, float v) { p->bits = kernels::f32_to_f16(v); }
inline void store(BF16 *p, float v) { p->bits = kernels::f32_to_bf16(v); }
template <class T>
inline void store(T *p, T v) {
  *p = v;
}

// Dispatch: fn(Type<T>{}) for the C++ type of a dtype. The visit_* variants accept a subset and
// are only called on dtypes that op_create has checked.
template <class T>
struct Type {
  using type = T;
};

[[noreturn]] inline void unexpected_dtype(int32_t dtype) {
  fail(NNRT_ERR_INTERNAL, "reference backend: dtype %d reached a kernel that does not handle it", dtype);
}

template <class Fn>
decltype(auto) visit_float(int32_t dtype, Fn &&fn) {
  switch (dtype) {
    case NNRT_DTYPE_F32: return fn(Type<float>{});
    case NNRT_DTYPE_F64: return fn(Type<double>{});
    case NNRT_DTYPE_F16: return fn(Type<F16>{});
    case NNRT_DTYPE_BF16: return fn(Type<BF16>{});
  }
  unexpected_dtype(dtype);
}

// Floats and the integer types arithmetic is defined on (I32, I64, U8).
template <class Fn>
decltype(auto) visit_numeric(int32_t dtype, Fn &&fn) {
  switch (dtype) {
    case NNRT_DTYPE_I32: return fn(Type<int32_t>{});
    case NNRT_DTYPE_I64: return fn(Type<int64_t>{});
    case NNRT_DTYPE_U8: return fn(Type<uint8_t>{});
  }
  return visit_float(dtype, fn);
}

// Every dtype: the numeric ones, BOOL, and I8 (a storage type: copied and gathered, not computed on).
template <class Fn>
decltype(auto) visit_all(int32_t dtype, Fn &&fn) {
  if (dtype == NNRT_DTYPE_BOOL) return fn(Type<Bool>{});
  if (dtype == NNRT_DTYPE_I8) return fn(Type<int8_t>{});
  return visit_numeric(dtype, fn);
}

// Index dtypes (GATHER, SCATTER_ADD, class targets of LOSS).
template <class Fn>
decltype(auto) visit_index(int32_t dtype, Fn &&fn) {
  switch (dtype) {
    case NNRT_DTYPE_I32: return fn(Type<int32_t>{});
    case NNRT_DTYPE_I64: return fn(Type<int64_t>{});
  }
  unexpected_dtype(dtype);
}

// Sets of dtypes for validation.
using DtypeSet = uint32_t;
constexpr DtypeSet dtype_bit(int32_t dtype) { return 1u << dtype; }
constexpr DtypeSet kFloatDtypes = dtype_bit(NNRT_DTYPE_F32) | dtype_bit(NNRT_DTYPE_F64) |
                                  dtype_bit(NNRT_DTYPE_F16) | dtype_bit(NNRT_DTYPE_BF16);
constexpr DtypeSet kIntegerDtypes =
    dtype_bit(NNRT_DTYPE_I32) | dtype_bit(NNRT_DTYPE_I64) | dtype_bit(NNRT_DTYPE_U8);
constexpr DtypeSet kNumericDtypes = kFloatDtypes | kIntegerDtypes;
constexpr DtypeSet kAllDtypes = kNumericDtypes | dtype_bit(NNRT_DTYPE_BOOL) | dtype_bit(NNRT_DTYPE_I8);
constexpr DtypeSet kQuantizedDtypes = dtype_bit(NNRT_DTYPE_U8) | dtype_bit(NNRT_DTYPE_I8);
constexpr DtypeSet kIndexDtypes = dtype_bit(NNRT_DTYPE_I32) | dtype_bit(NNRT_DTYPE_I64);

using kernels::dtype_size;

// ---- Conversions (NNRT_OP_COPY and FILL) ----------------------------------------------------
// Every float widens exactly to double and every integer to int64; from there one correctly
// rounded (or saturating) step reaches the destination.

template <class T>
double widen_to_double(T v) {
  if constexpr (is_half_v<T>) return static_cast<double>(load(&v));
  else return static_cast<double>(v);
}

template <class T>
int64_t widen_to_int64(T v) {
  if constexpr (std::is_same_v<T, Bool>) return v.value != 0;
  else return static_cast<int64_t>(v);
}

template <class To>
To from_double(double d) {
  if constexpr (std::is_same_v<To, float>) return static_cast<float>(d);
  else if constexpr (std::is_same_v<To, double>) return d;
  else if constexpr (std::is_same_v<To, F16>) return F16{kernels::f64_to_f16(d)};
  else if constexpr (std::is_same_v<To, BF16>) return BF16{kernels::f64_to_bf16(d)};
  else if constexpr (std::is_same_v<To, int32_t>) return kernels::f64_to_i32_saturate(d);
  else if constexpr (std::is_same_v<To, int64_t>) return kernels::f64_to_i64_saturate(d);
  else if constexpr (std::is_same_v<To, uint8_t>) return kernels::f64_to_u8_saturate(d);
  else if constexpr (std::is_same_v<To, int8_t>) return kernels::f64_to_i8_saturate(d);
  else return Bool{static_cast<uint8_t>(d != 0.0)};  // NaN != 0: true, as numpy says
}

template <class To>
To from_int64(int64_t i) {
  if constexpr (std::is_same_v<To, float>) return static_cast<float>(i);  // correctly rounded
  else if constexpr (std::is_same_v<To, double>) return static_cast<double>(i);
  else if constexpr (is_half_v<To>) return from_double<To>(kernels::i64_to_f64_round_odd(i));
  else if constexpr (std::is_same_v<To, int32_t>) return kernels::i64_to_i32_saturate(i);
  else if constexpr (std::is_same_v<To, int64_t>) return i;
  else if constexpr (std::is_same_v<To, uint8_t>) return kernels::i64_to_u8_saturate(i);
  else if constexpr (std::is_same_v<To, int8_t>) return kernels::i64_to_i8_saturate(i);
  else return Bool{static_cast<uint8_t>(i != 0)};
}

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, F16>) {
    return F16{kernels::f32_to_f16(v)};
  } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, BF16>) {
    return BF16{kernels::f32_to_bf16(v)};
  } else if constexpr (is_half_v<From> && is_half_v<To>) {
    float f = load(&v);
    To out;
    store(&out, f);
    return out;
  } else if constexpr (is_float_v<From>) {
    return from_double<To>(widen_to_double(v));
  } else {
    return from_int64<To>(widen_to_int64(v));
  }
}

}  // namespace nnrt::reference
