#include "progress.h"

#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

namespace nnrt_cli {

namespace {

volatile std::sig_atomic_t sigint_seen = 0;

void on_sigint(int) {
  if (sigint_seen) std::_Exit(130);
  sigint_seen = 1;
}

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

}  // namespace

std::string device_load_text(const nnrt_progress &p) {
  if (p.struct_size < offsetof(nnrt_progress, device_memory_total_bytes) + sizeof p.device_memory_total_bytes) {
    return "";
  }
  std::string s;
  char buf[64];
  if (p.device_utilization_percent >= 0) {
    std::snprintf(buf, sizeof buf, " %d%%", p.device_utilization_percent);
    s += buf;
  }
  if (p.device_memory_used_bytes >= 0 && p.device_memory_total_bytes > 0) {
    std::snprintf(buf, sizeof buf, " %.1f/%.1f GiB", p.device_memory_used_bytes / 1073741824.0,
                  p.device_memory_total_bytes / 1073741824.0);
    s += buf;
  }
  if (p.device_temperature_celsius >= 0) {
    std::snprintf(buf, sizeof buf, " %d C", p.device_temperature_celsius);
    s += buf;
  }
  return s.empty() ? s : "  GPU" + s;
}

ProgressView::ProgressView(int32_t epochs, bool quiet)
    : epochs_(epochs), quiet_(quiet), start_(std::chrono::steady_clock::now()), last_draw_(start_) {
  const char *term = std::getenv("TERM");
  live_ = !quiet && isatty(STDOUT_FILENO) && !(term && std::strcmp(term, "dumb") == 0);
}

ProgressView::~ProgressView() { end_line(); }

void ProgressView::end_line() {
  if (!bar_open_) return;
  std::printf("\n");
  std::fflush(stdout);
  bar_open_ = false;
}

void ProgressView::catch_interrupt() { std::signal(SIGINT, on_sigint); }

bool ProgressView::interrupted() { return sigint_seen != 0; }

int ProgressView::update(const nnrt_progress &p) {
  if (!p.epoch_end) {
    // Keep every stride-th loss; double the stride when the curve gets long.
    if (seen_++ % stride_ == 0) {
      double at = p.epoch + (p.batches_per_epoch ? static_cast<double>(p.batch + 1) / p.batches_per_epoch : 0);
      curve_.emplace_back(at, p.loss);
      if (curve_.size() > 600) {
        std::vector<std::pair<double, double>> thinned;
        for (size_t i = 0; i < curve_.size(); i += 2) thinned.push_back(curve_[i]);
        curve_.swap(thinned);
        stride_ *= 2;
      }
    }
  }
  if (!quiet_) {
    if (live_) draw_bar(p);
    else print_line(p);
  }
  return sigint_seen ? 1 : 0;
}

void ProgressView::draw_bar(const nnrt_progress &p) {
  auto now = std::chrono::steady_clock::now();
  if (p.epoch_end) {
    std::printf("\r\033[Kepoch %d/%d  %s  %s", p.epoch + 1, epochs_, loss_text(p.loss).c_str(),
                rate_text(p.examples_per_second).c_str());
    if (!std::isnan(p.validation_score)) std::printf("  validation %.4f", p.validation_score);
    std::printf("%s\n", device_load_text(p).c_str());
    std::fflush(stdout);
    bar_open_ = false;
    return;
  }
  // Redraw at most 20 times a second: the terminal is slower than a minibatch.
  if (p.batch + 1 < p.batches_per_epoch && now - last_draw_ < std::chrono::milliseconds(50)) return;
  last_draw_ = now;
  const int width = 28;
  double frac = p.batches_per_epoch ? static_cast<double>(p.batch + 1) / p.batches_per_epoch : 0;
  int filled = static_cast<int>(frac * width);
  char bar[width + 1];
  for (int i = 0; i < width; ++i) bar[i] = i < filled ? '=' : (i == filled ? '>' : ' ');
  bar[width] = 0;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double done = p.epoch + frac;
  double eta = done > 0 ? elapsed / done * (epochs_ - done) : NAN;
  std::printf("\r\033[Kepoch %d/%d [%s] %lld/%lld  %s  %s  ETA %s%s", p.epoch + 1, epochs_, bar,
              static_cast<long long>(p.batch + 1), static_cast<long long>(p.batches_per_epoch), loss_text(p.loss).c_str(),
              rate_text(p.examples_per_second).c_str(),
              clock_text(eta).c_str(), device_load_text(p).c_str());
  std::fflush(stdout);
  bar_open_ = true;
}

void ProgressView::print_line(const nnrt_progress &p) {
  if (p.epoch_end) {
    std::printf("epoch %d/%d done: %s", p.epoch + 1, epochs_, rate_text(p.examples_per_second).c_str());
    if (!std::isnan(p.validation_score)) std::printf(", validation %.4f", p.validation_score);
    std::printf("%s\n", device_load_text(p).c_str());
    std::fflush(stdout);
    return;
  }
  // About ten lines per epoch.
  int64_t every = p.batches_per_epoch > 10 ? p.batches_per_epoch / 10 : 1;
  if ((p.batch + 1) % every != 0 && p.batch + 1 != p.batches_per_epoch) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double done = p.epoch + (p.batches_per_epoch ? static_cast<double>(p.batch + 1) / p.batches_per_epoch : 0);
  std::printf("epoch %d/%d batch %lld/%lld %s %s ETA %s%s\n", p.epoch + 1, epochs_,
              static_cast<long long>(p.batch + 1), static_cast<long long>(p.batches_per_epoch), loss_text(p.loss).c_str(),
              rate_text(p.examples_per_second).c_str(),
              clock_text(done > 0 ? elapsed / done * (epochs_ - done) : NAN).c_str(), device_load_text(p).c_str());
  std::fflush(stdout);
}

std::string ProgressView::loss_text(double loss) const {
  char buf[64];
  if (tokens_) std::snprintf(buf, sizeof buf, "loss %.4f ppl %.2f", loss, std::exp(loss));
  else std::snprintf(buf, sizeof buf, "loss %.4f", loss);
  return buf;
}

std::string ProgressView::rate_text(double examples_per_second) const {
  char buf[64];
  if (tokens_) std::snprintf(buf, sizeof buf, "%.0f tokens/s", examples_per_second * static_cast<double>(tokens_));
  else std::snprintf(buf, sizeof buf, "%.0f images/s", examples_per_second);
  return buf;
}

}  // namespace nnrt_cli
