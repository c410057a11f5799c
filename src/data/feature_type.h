// The element types a dataset keeps its features in.
//
// A dataset stores features as they came (IDX images as bytes, IDX i16 as i16), which is a wider set
// than the nnrt_dtype list: IDX files also have i8 and i16. Conversion to the model's float type
// happens batch by batch (dataset.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "nnrt/nnrt.h"

namespace nnrt::data {

enum class FeatureType : uint8_t { U8, I8, I16, I32, I64, F16, BF16, F32, F64 };

inline size_t feature_type_size(FeatureType t) {
  switch (t) {
    case FeatureType::U8:
    case FeatureType::I8: return 1;
    case FeatureType::I16:
    case FeatureType::F16:
    case FeatureType::BF16: return 2;
    case FeatureType::I32:
    case FeatureType::F32: return 4;
    case FeatureType::I64:
    case FeatureType::F64: return 8;
  }
  return 0;
}

inline const char *feature_type_name(FeatureType t) {
  switch (t) {
    case FeatureType::U8: return "u8";
    case FeatureType::I8: return "i8";
    case FeatureType::I16: return "i16";
    case FeatureType::I32: return "i32";
    case FeatureType::I64: return "i64";
    case FeatureType::F16: return "f16";
    case FeatureType::BF16: return "bf16";
    case FeatureType::F32: return "f32";
    case FeatureType::F64: return "f64";
  }
  return "invalid";
}

inline bool feature_type_is_float(FeatureType t) {
  return t == FeatureType::F16 || t == FeatureType::BF16 || t == FeatureType::F32 || t == FeatureType::F64;
}

}  // namespace nnrt::data
