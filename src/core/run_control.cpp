// RunScope and check_run (run_control.h).
#include "core/run_control.h"

#include "core/error.h"

namespace nnrt {

namespace {
thread_local RunScope *current_scope = nullptr;
}

RunScope::RunScope(const RunControl *control)
    : control_(control), timeout_(control ? control->timeout_seconds.load() : 0), previous_(current_scope) {
  if (timeout_ > 0) start_ = std::chrono::steady_clock::now();  // the clock only when a timeout needs it
  current_scope = this;
}

RunScope::~RunScope() { current_scope = previous_; }

void check_run() {
  const RunScope *scope = current_scope;
  if (!scope || !scope->control()) return;
  const RunControl &c = *scope->control();
  if (c.cancelled.load(std::memory_order_relaxed)) fail(NNRT_ERR_CANCELLED, "cancelled by nnrt_run_options_cancel");
  if (nnrt_abort_fn fn = c.abort_fn.load(std::memory_order_relaxed)) {
    if (fn(c.abort_user.load(std::memory_order_relaxed)) != 0) fail(NNRT_ERR_CANCELLED, "stopped by the abort callback");
  }
  if (scope->timeout() > 0) {
    double ran = std::chrono::duration<double>(std::chrono::steady_clock::now() - scope->start()).count();
    if (ran > scope->timeout()) {
      fail(NNRT_ERR_DEADLINE_EXCEEDED, "ran ", ran, " s, past its timeout of ", scope->timeout(), " s");
    }
  }
}

}  // namespace nnrt
