// Conversion of stored features to the model's float type: the inner loop of making a batch.
//
// Every element becomes `value * scale`, computed in f64 (exact for every stored type but i64
// beyond 2^53) and rounded once to the output type, to nearest even. The pair (stored type,
// output type) is resolved once per batch into a function whose loop the compiler can vectorise;
// byte features go through a 256-entry table of ready results.
#pragma once

#include <array>
#include <cstdint>

#include "data/feature_type.h"
#include "nnrt/nnrt.h"

namespace nnrt::data {

class FeatureConverter {
 public:
  FeatureConverter(FeatureType from, double scale);

  // Writes examples rows[0..n) of `base` (each `numel` elements of the stored type, example after
  // example) into dst as `to` (F32, F64, F16 or BF16), row after row. Indices are not checked.
  // Throws NNRT_ERR_DTYPE for a non-float `to`.
  void gather(const unsigned char *base, int64_t numel, const int64_t *rows, int64_t n, nnrt_dtype to, void *dst) const;

  FeatureType from() const { return from_; }
  double scale() const { return scale_; }

 private:
  FeatureType from_;
  double scale_;
  // For u8 and i8 features: the result for each byte value, per output type.
  struct ByteTables {
    std::array<float, 256> f32;
    std::array<double, 256> f64;
    std::array<uint16_t, 256> f16, bf16;
  };
  ByteTables tables_{};
};

// The index of the first NaN or infinite element among `count` elements of type t, or -1.
int64_t first_non_finite(FeatureType t, const unsigned char *data, int64_t count);

// Element i of a feature buffer as f64 (for messages and tests).
double feature_value(FeatureType t, const unsigned char *data, int64_t i);

}  // namespace nnrt::data
