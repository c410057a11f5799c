// Why a fit stopped: an enum inside the trainer, a string ("completed", "patience", ...) at the API
// (nnrt_trainer_result) and in checkpoints.
#pragma once

#include <optional>
#include <string>

namespace nnrt::train {

enum class StopReason {
  kNotStarted,    // no fit yet
  kCompleted,     // every epoch asked for ran
  kCallback,      // the progress callback returned nonzero
  kCancelled,     // nnrt_trainer_cancel
  kInvalidScore,  // a non-finite loss or validation score
  kPatience,      // early stopping: no improvement for `patience` epochs
  kMaxEpochs,     // early stopping: max_epochs reached
  kMaxTime,       // early stopping: max_minutes passed
};

inline constexpr StopReason kStopReasons[] = {
    StopReason::kNotStarted,   StopReason::kCompleted, StopReason::kCallback,  StopReason::kCancelled,
    StopReason::kInvalidScore, StopReason::kPatience,  StopReason::kMaxEpochs, StopReason::kMaxTime,
};

// The name nnrt.h documents for nnrt_trainer_result's "stop_reason".
inline const char *stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kNotStarted: return "not_started";
    case StopReason::kCompleted: return "completed";
    case StopReason::kCallback: return "callback";
    case StopReason::kCancelled: return "cancelled";
    case StopReason::kInvalidScore: return "invalid_score";
    case StopReason::kPatience: return "patience";
    case StopReason::kMaxEpochs: return "max_epochs";
    case StopReason::kMaxTime: return "max_time";
  }
  return "unknown";
}

// The reason a name stands for (a checkpoint's), or nothing for a name that is none of them.
inline std::optional<StopReason> stop_reason_from_name(const std::string &name) {
  for (StopReason r : kStopReasons)
    if (name == stop_reason_name(r)) return r;
  return std::nullopt;
}

}  // namespace nnrt::train
