#include "train/device_load.h"

namespace nnrt::train {

void DeviceLoad::fill(nnrt_progress &p) {
  p.device_utilization_percent = p.device_temperature_celsius = -1;
  p.device_memory_used_bytes = p.device_memory_total_bytes = -1;
  if (!offered_) return;
  auto now = std::chrono::steady_clock::now();
  if (!sampled_ || now - when_ >= std::chrono::seconds(1)) {
    nnrt_device_status s{};
    if (!device_.load(&s)) {
      offered_ = sampled_;  // a backend that never answered is not asked again
      if (!sampled_) return;
    } else {
      status_ = s;
    }
    sampled_ = true;
    when_ = now;
  }
  p.device_utilization_percent = status_.utilization_percent;
  p.device_temperature_celsius = status_.temperature_celsius;
  p.device_memory_used_bytes = status_.memory_used_bytes;
  p.device_memory_total_bytes = status_.memory_total_bytes;
}

}  // namespace nnrt::train
