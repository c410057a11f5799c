// The device's load in the nnrt command's progress lines: what is printed from which members, and
// nothing when the library gave none (a CPU backend, no NVML, an nnrt_progress from before them).
// The live bar on a terminal (a pseudo-terminal here): its line is ended when training stops
// mid-epoch, so that an error printed next starts on a line of its own.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

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

// What a view prints on a terminal while `draw` runs (stdout is a pseudo-terminal meanwhile).
template <typename Draw>
std::string on_a_terminal(Draw draw) {
  int master = -1, terminal = -1;
  if (openpty(&master, &terminal, nullptr, nullptr, nullptr) != 0) return "openpty failed";
  std::fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  dup2(terminal, STDOUT_FILENO);
  const char *term = std::getenv("TERM");
  std::string old_term = term ? term : "";
  setenv("TERM", "xterm", 1);
  draw();
  std::fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  close(terminal);
  if (term) setenv("TERM", old_term.c_str(), 1);
  else unsetenv("TERM");
  std::string out;
  char buf[4096];
  pollfd ready{master, POLLIN, 0};
  while (poll(&ready, 1, 100) > 0) {
    ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(master);
  return out;
}

nnrt_progress batch(int64_t b, int64_t of) {
  nnrt_progress p = unknown_load();
  p.batch = b;
  p.batches_per_epoch = of;
  p.loss = 0.5;
  return p;
}

TEST(ProgressView, EndsTheBarsLineWhenTrainingStopsMidEpoch) {
  std::string out = on_a_terminal([] {
    ProgressView view(2, false);
    view.update(batch(9, 10));  // the last batch: drawn whatever the time
  });  // gone mid-epoch, as when fit throws
  ASSERT_NE(out.find("epoch 1/2 ["), std::string::npos) << out;
  EXPECT_EQ(out.back(), '\n') << out;
}

TEST(ProgressView, EndLineEndsItOnce) {
  std::string out = on_a_terminal([] {
    ProgressView view(2, false);
    view.update(batch(9, 10));
    view.end_line();
    view.end_line();
  });
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out.back(), '\n') << out;
  EXPECT_NE(out.substr(out.size() - 4), "\r\n\r\n") << "two line ends: " << out;
}

TEST(ProgressView, NoBlankLineAfterAnEpochsEnd) {
  std::string out = on_a_terminal([] {
    ProgressView view(2, false);
    nnrt_progress p = batch(9, 10);
    view.update(p);
    p.epoch_end = 1;
    p.validation_score = 0.9;
    view.update(p);
  });
  ASSERT_NE(out.find("validation 0.9000"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - 2), "\r\n") << out;
  EXPECT_NE(out.substr(out.size() - 4), "\r\n\r\n") << "a blank line after the epoch's: " << out;
}

}  // namespace
}  // namespace nnrt_cli
