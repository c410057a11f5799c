// Stopping a call early: the state behind nnrt_run_options (a cancel flag, a timeout, an abort
// callback) and the scope that makes one call watch it.
//
// A call that takes run options opens a RunScope on its thread; the op dispatcher, a prediction
// plan's replay, evaluation's batch loop and a load's stages call check_run(), which throws
// NNRT_ERR_CANCELLED or NNRT_ERR_DEADLINE_EXCEEDED when the call is to stop. Unwinding frees what
// the call allocated. Without a scope, check_run() costs one thread-local read.
#pragma once

#include <atomic>
#include <chrono>

#include "nnrt/nnrt.h"

namespace nnrt {

// Shared by every call run with one nnrt_run_options; each member is safe to touch from any thread.
struct RunControl {
  std::atomic<bool> cancelled{false};
  std::atomic<double> timeout_seconds{0};  // 0: none
  std::atomic<nnrt_abort_fn> abort_fn{nullptr};
  std::atomic<void *> abort_user{nullptr};
};

// Makes the calling thread's nnrt work watch `control` (NULL: nothing to watch) for its lifetime;
// the deadline is the timeout counted from now. Scopes nest; the innermost wins.
class RunScope {
 public:
  explicit RunScope(const RunControl *control);
  ~RunScope();
  RunScope(const RunScope &) = delete;
  RunScope &operator=(const RunScope &) = delete;

  const RunControl *control() const { return control_; }
  std::chrono::steady_clock::time_point start() const { return start_; }
  double timeout() const { return timeout_; }

 private:
  const RunControl *control_;
  std::chrono::steady_clock::time_point start_;
  double timeout_ = 0;
  RunScope *previous_;
};

// Throws NNRT_ERR_CANCELLED (cancelled, or the abort callback said stop) or
// NNRT_ERR_DEADLINE_EXCEEDED (past the timeout) when the call on this thread is to stop.
void check_run();

// Whether a status is one that check_run() throws: the call was stopped, nothing failed.
inline bool is_stop_status(nnrt_status s) { return s == NNRT_ERR_CANCELLED || s == NNRT_ERR_DEADLINE_EXCEEDED; }

}  // namespace nnrt
