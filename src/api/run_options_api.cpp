// nnrt_run_options_*: cancellation, timeout and abort callback for calls that run long.
#include <cmath>

#include "api/handles.h"

using namespace nnrt;
using namespace nnrt::api;

extern "C" {

nnrt_status nnrt_run_options_create(nnrt_run_options **out) {
  return guard("nnrt_run_options_create", [&] {
    require(out != nullptr, "out is NULL; expected a pointer to receive the run options");
    *out = new nnrt_run_options();
  });
}

void nnrt_run_options_release(nnrt_run_options *o) { release_handle(o, "nnrt_run_options_release"); }

nnrt_status nnrt_run_options_cancel(nnrt_run_options *o) {
  return guard("nnrt_run_options_cancel", [&] { check_handle(o, "o")->impl.cancelled = true; });
}

nnrt_status nnrt_run_options_reset(nnrt_run_options *o) {
  return guard("nnrt_run_options_reset", [&] { check_handle(o, "o")->impl.cancelled = false; });
}

nnrt_status nnrt_run_options_set_timeout(nnrt_run_options *o, double seconds) {
  return guard("nnrt_run_options_set_timeout", [&] {
    check_handle(o, "o");
    if (!std::isfinite(seconds) || seconds < 0) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "seconds is ", seconds, "; expected a finite number >= 0 (0: no timeout)");
    }
    o->impl.timeout_seconds = seconds;
  });
}

nnrt_status nnrt_run_options_set_abort_callback(nnrt_run_options *o, nnrt_abort_fn fn, void *user) {
  return guard("nnrt_run_options_set_abort_callback", [&] {
    check_handle(o, "o");
    o->impl.abort_user = user;
    o->impl.abort_fn = fn;
  });
}

}  // extern "C"
