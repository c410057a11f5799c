#include "train/loss_scaler.h"

#include <algorithm>
#include <cmath>

namespace nnrt::train {

namespace {
constexpr double kMaxScale = 16777216.0;  // 2^24
}

LossScaler::LossScaler(const Precision &precision, nnrt_dtype compute)
    : active_(compute != NNRT_DTYPE_F32),
      grows_(precision.compute == NNRT_DTYPE_F16),
      growth_interval_(precision.growth_interval),
      scale_(precision.initial_scale) {}

bool LossScaler::accept(double sum_of_squares) {
  if (!std::isfinite(sum_of_squares)) {
    // Overflow in half precision: skip this step and try again with a smaller scale.
    scale_ = std::max(1.0, scale_ / 2);
    good_steps_ = 0;
    ++skipped_steps_;
    return false;
  }
  if (++good_steps_ >= growth_interval_ && grows_) {
    scale_ = std::min(scale_ * 2, kMaxScale);
    good_steps_ = 0;
  }
  return true;
}

void LossScaler::set_state(const State &s) {
  scale_ = s.scale;
  good_steps_ = s.good_steps;
  skipped_steps_ = s.skipped_steps;
}

}  // namespace nnrt::train
