/* C functions with the exact signatures nnrt calls back, forwarding to the exported Go functions
** in callbacks.go. nnrt passes the user pointer back untouched; for progress it carries a
** runtime/cgo.Handle number, never a Go pointer. */
#include "_cgo_export.h"

void nnrt_go_log_trampoline(int level, const char *message, void *user) {
  (void)user;
  nnrtGoLog(level, (char *)message);
}

int nnrt_go_progress_trampoline(const nnrt_progress *p, void *user) {
  return nnrtGoProgress((nnrt_progress *)p, (uintptr_t)user);
}
