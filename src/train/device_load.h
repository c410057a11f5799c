// The training device's load in the progress (nnrt_progress.device_*): sampled from the backend at
// most once a second, because asking NVML costs more than a small network's step; -1 where the
// backend cannot tell (every CPU backend).
#pragma once

#include <chrono>

#include "backend/device.h"
#include "nnrt/nnrt.h"

namespace nnrt::train {

class DeviceLoad {
 public:
  explicit DeviceLoad(const backend::Device &device) : device_(device) {}

  // Writes the last sample (taken now when it is older than a second) into p.
  void fill(nnrt_progress &p);

 private:
  const backend::Device &device_;
  bool offered_ = true;  // false once the backend showed it has no device_status
  bool sampled_ = false;
  std::chrono::steady_clock::time_point when_;
  nnrt_device_status status_{};
};

}  // namespace nnrt::train
