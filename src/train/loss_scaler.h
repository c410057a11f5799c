// Dynamic loss scaling for mixed precision (as PyTorch's GradScaler): the loss gradient is
// multiplied by a scale so that small gradients survive half precision; a step whose scaled
// gradients overflow is skipped and the scale halved, and after `growth_interval` good steps in
// f16 the scale doubles again.
#pragma once

#include <cstdint>

#include "nnrt/nnrt.h"
#include "train/trainer_options.h"

namespace nnrt::train {

class LossScaler {
 public:
  // `compute`: the dtype the layers compute in; anything but F32 turns scaling on.
  LossScaler(const Precision &precision, nnrt_dtype compute);

  // Whether the trainer computes in half precision, so that gradients are scaled and checked.
  bool active() const { return active_; }
  // The factor the loss gradient is multiplied by: the current scale, or 1 when not active.
  double scale() const { return active_ ? scale_ : 1.0; }

  // Judges a step from the sum of squares of its scaled gradients (active only). Returns false on
  // overflow (not finite): the step must be skipped, and the scale is halved (not below 1);
  // otherwise counts a good step and, in f16, doubles the scale every `growth_interval` of them
  // (up to 2^24).
  bool accept(double sum_of_squares);

  // Steps skipped for overflow; the optimizer never saw them.
  int64_t skipped_steps() const { return skipped_steps_; }

  // What a checkpoint keeps, to continue with the same scale.
  struct State {
    double scale = 1;
    int64_t good_steps = 0, skipped_steps = 0;
  };
  State state() const { return {scale_, good_steps_, skipped_steps_}; }
  void set_state(const State &s);

 private:
  bool active_;
  bool grows_;  // f16 only: bf16 has f32's exponent range and needs no growing scale
  int64_t growth_interval_;
  double scale_;
  int64_t good_steps_ = 0, skipped_steps_ = 0;
};

}  // namespace nnrt::train
