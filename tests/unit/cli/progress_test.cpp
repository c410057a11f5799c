// The device's load in the nnrt command's progress lines: what is printed from which members, and
// nothing when the library gave none (a CPU backend, no NVML, an nnrt_progress from before them).
#include <gtest/gtest.h>

#include <cstddef>

#include "progress.h"

namespace nnrt_cli {
namespace {

nnrt_progress unknown_load() {
  nnrt_progress p{};
  p.struct_size = sizeof p;
  p.device_utilization_percent = p.device_temperature_celsius = -1;
  p.device_memory_used_bytes = p.device_memory_total_bytes = -1;
  return p;
}

TEST(DeviceLoadText, EveryPart) {
  nnrt_progress p = unknown_load();
  p.device_utilization_percent = 37;
  p.device_temperature_celsius = 41;
  p.device_memory_used_bytes = 1288490189;  // 1.2 GiB
  p.device_memory_total_bytes = 85899345920;  // 80 GiB
  EXPECT_EQ(device_load_text(p), "  GPU 37% 1.2/80.0 GiB 41 C");
}

TEST(DeviceLoadText, OnlyThePartsGiven) {
  nnrt_progress p = unknown_load();
  p.device_temperature_celsius = 0;
  EXPECT_EQ(device_load_text(p), "  GPU 0 C");
  p = unknown_load();
  p.device_utilization_percent = 100;
  EXPECT_EQ(device_load_text(p), "  GPU 100%");
  p = unknown_load();
  p.device_memory_used_bytes = 0;  // memory without a total says nothing
  EXPECT_EQ(device_load_text(p), "");
}

TEST(DeviceLoadText, NothingWhenUnknown) { EXPECT_EQ(device_load_text(unknown_load()), ""); }

TEST(DeviceLoadText, NothingFromAnOlderLibrary) {
  nnrt_progress p{};
  p.device_utilization_percent = 37;  // past the end of what that library wrote: not read
  p.device_memory_total_bytes = 1;
  p.struct_size = offsetof(nnrt_progress, device_utilization_percent);
  EXPECT_EQ(device_load_text(p), "");
}

}  // namespace
}  // namespace nnrt_cli
