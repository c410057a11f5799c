// Training progress on the terminal: a live bar (epoch, batch, loss, images/s, ETA) when stdout is a
// terminal, plain lines otherwise (logs, CI, pipes). A language model's shows tokens/s and the
// perplexity beside the loss.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "nnrt/nnrt.h"

namespace nnrt_cli {

// "  GPU 37% 1.2/80.0 GiB 41 C": the device's load in a progress report, with only the parts the
// backend gave; "" when it gave none (a CPU backend, a GPU without NVML, an older library).
std::string device_load_text(const nnrt_progress &p);

class ProgressView {
 public:
  ProgressView(int32_t epochs, bool quiet);
  // Ends the bar's line (see end_line), so that what is printed after it, an error included, starts
  // on a line of its own.
  ~ProgressView();
  ProgressView(const ProgressView &) = delete;
  ProgressView &operator=(const ProgressView &) = delete;

  // Training a language model on windows of `tokens` tokens: its loss (the mean per-token nll) is
  // shown with its perplexity, exp(loss), and the rate in tokens per second.
  void language_model(int64_t tokens) { tokens_ = tokens; }

  // The nnrt_progress_fn body; returns nonzero when Ctrl-C asked to stop.
  int update(const nnrt_progress &p);

  // Ends the live bar's line when a bar is drawn on it (training stopped or failed mid-epoch); does
  // nothing otherwise.
  void end_line();

  // Losses seen, thinned to at most a few hundred points, for the report's curve.
  const std::vector<std::pair<double, double>> &loss_curve() const { return curve_; }

  // Installs a SIGINT handler that asks training to stop at the next batch (the second Ctrl-C
  // kills the process as usual).
  static void catch_interrupt();

  // Whether Ctrl-C (SIGINT) asked training to stop.
  static bool interrupted();

 private:
  void draw_bar(const nnrt_progress &p);
  void print_line(const nnrt_progress &p);
  std::string loss_text(double loss) const;  // "loss 1.2345" (and " ppl 3.44")
  std::string rate_text(double examples_per_second) const;  // "123 images/s" or tokens/s

  int32_t epochs_;
  bool quiet_, live_;
  bool bar_open_ = false;  // a live bar is drawn and its line not ended
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::vector<std::pair<double, double>> curve_;  // (epoch + fraction, loss)
  int64_t stride_ = 1, seen_ = 0;
  int64_t tokens_ = 0;  // tokens per example of a language model; 0 otherwise
};

}  // namespace nnrt_cli
