// Dataset::from_arrays: arrays on any device, copied to the host and checked (nnrt.h,
// nnrt_dataset_from_arrays).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.h"
#include "core/error.h"
#include "data/dataset.h"
#include "data/feature_convert.h"

namespace nnrt::data {

namespace {

// The per-example shape of an array [N, ...].
Shape trailing_dims(const Shape &s) {
  Shape out;
  for (int32_t i = 1; i < s.rank; ++i) out.dims[out.rank++] = s.dims[i];
  return out;
}

FeatureType feature_type_of(nnrt_dtype dtype) {
  switch (dtype) {
    case NNRT_DTYPE_F32: return FeatureType::F32;
    case NNRT_DTYPE_F64: return FeatureType::F64;
    case NNRT_DTYPE_F16: return FeatureType::F16;
    case NNRT_DTYPE_BF16: return FeatureType::BF16;
    case NNRT_DTYPE_I32: return FeatureType::I32;
    case NNRT_DTYPE_I64: return FeatureType::I64;
    case NNRT_DTYPE_U8: return FeatureType::U8;
    default: break;
  }
  fail(NNRT_ERR_DTYPE, "features: expected a numeric dtype (f32, f64, f16, bf16, i32, i64, u8), got ",
       dtype_name(dtype));
}

std::vector<unsigned char> host_bytes(const Array &a) {
  std::vector<unsigned char> bytes(a.nbytes());
  a.copy_to_host(bytes.data(), bytes.size());
  return bytes;
}

// Class indices of any integer dtype, as I64; refuses negative ones naming the example.
std::vector<int64_t> class_indices(const Array &labels) {
  std::vector<unsigned char> bytes = host_bytes(labels);
  FeatureType t = feature_type_of(labels.dtype());
  std::vector<int64_t> out(static_cast<size_t>(labels.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t v;
    if (t == FeatureType::I64) {
      std::memcpy(&v, bytes.data() + i * 8, 8);
    } else {
      v = static_cast<int64_t>(feature_value(t, bytes.data(), static_cast<int64_t>(i)));
    }
    if (v < 0) fail(NNRT_ERR_INVALID_ARGUMENT, "labels: example ", i, " has class index ", v, "; expected >= 0");
    out[i] = v;
  }
  return out;
}

// Float targets as F32; refuses NaN, infinities and f64 values beyond the f32 range.
std::vector<float> float_targets(const Array &labels, int64_t per_example) {
  std::vector<unsigned char> bytes = host_bytes(labels);
  FeatureType t = feature_type_of(labels.dtype());
  std::vector<float> out(static_cast<size_t>(labels.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    double v = feature_value(t, bytes.data(), static_cast<int64_t>(i));
    out[i] = static_cast<float>(v);
    if (!std::isfinite(out[i])) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "labels: example ", static_cast<int64_t>(i) / per_example, " (element ",
           static_cast<int64_t>(i) % per_example, ") is ", v, "; expected a finite f32 target");
    }
  }
  return out;
}

}  // namespace

std::shared_ptr<Dataset> Dataset::from_arrays(const Array &features, const Array &labels) {
  if (features.rank() < 1 || labels.rank() < 1) {
    fail(NNRT_ERR_SHAPE, "features ", to_string(features.shape()), " and labels ", to_string(labels.shape()),
         ": expected arrays [N, ...] whose dimension 0 counts the examples, not scalars");
  }
  if (features.dim(0) != labels.dim(0)) {
    fail(NNRT_ERR_SHAPE, "features ", to_string(features.shape()), " and labels ", to_string(labels.shape()),
         " hold different numbers of examples (", features.dim(0), " and ", labels.dim(0), ")");
  }
  if (features.dim(0) < 1) {
    fail(NNRT_ERR_SHAPE, "features ", to_string(features.shape()), " hold no examples; expected N >= 1");
  }
  if (labels.dtype() == NNRT_DTYPE_BOOL) {
    fail(NNRT_ERR_DTYPE, "labels: expected class indices (i32, i64, u8) or float targets, got bool");
  }

  DatasetParts parts;
  parts.size = features.dim(0);
  parts.feature_type = feature_type_of(features.dtype());
  parts.example_shape = trailing_dims(features.shape());
  parts.features = host_bytes(features);
  int64_t per_example = std::max<int64_t>(1, trailing_dims(features.shape()).numel());
  int64_t bad = first_non_finite(parts.feature_type, parts.features.data(), features.numel());
  if (bad >= 0) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "features: example ", bad / per_example, " (element ", bad % per_example, ") is ",
         feature_value(parts.feature_type, parts.features.data(), bad), "; expected finite values");
  }

  if (dtype_is_integer(labels.dtype())) {
    if (labels.rank() != 1) {
      fail(NNRT_ERR_SHAPE, "labels ", to_string(labels.shape()), " of ", dtype_name(labels.dtype()),
           ": class indices must be [N]; float labels make targets of any shape");
    }
    parts.classes = class_indices(labels);
  } else {
    parts.class_labels = false;
    parts.target_shape = trailing_dims(labels.shape());
    parts.targets = float_targets(labels, std::max<int64_t>(1, parts.target_shape.numel()));
  }
  return from_parts(std::move(parts));
}

}  // namespace nnrt::data
