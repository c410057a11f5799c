/* Shared by the cgo preambles of the Go binding: includes the C API and defines the macros that
** make each fallible call's C shim. Every shim calls one nnrt function and, when it fails, copies
** nnrt_last_error() before returning. The copy must happen inside the same cgo call because the
** message is thread-local and a goroutine may run its next cgo call on another OS thread, whose
** message belongs to someone else. */
#ifndef NNRT_GO_H
#define NNRT_GO_H

#include <stdlib.h>
#include <string.h>

#include <nnrt/nnrt.h>

/* A malloc'd copy of this thread's last error message (the Go side frees it), or NULL when out of
** memory, in which case the Go side reports the status name alone. */
static inline char *nnrt_go_copy_last_error(void) {
  const char *msg = nnrt_last_error();
  size_t n = strlen(msg);
  char *copy = (char *)malloc(n + 1);
  if (copy) memcpy(copy, msg, n + 1);
  return copy;
}

/* Returns the status of `call`, storing a copy of the error message in *err when it failed. */
#define NNRT_GO_CALL(call)                                      \
  do {                                                          \
    nnrt_status status_ = (call);                               \
    if (status_ != NNRT_OK) *err = nnrt_go_copy_last_error();   \
    return status_;                                             \
  } while (0)

/* Defines nnrt_go_<fn>(handle, &out, &err) for a (handle, buf, cap, len) string function: asks the
** size, allocates, fills, and retries if the text grew in between (a context's cache statistics
** can change while we read them). *out is malloc'd; the Go side frees it. */
#define NNRT_GO_STRING_SHIM(fn, handle_type)                                  \
  static inline nnrt_status nnrt_go_##fn(handle_type h, char **out, char **err) { \
    size_t len = 0, cap = 0;                                                  \
    char *buf = NULL;                                                         \
    for (;;) {                                                                \
      nnrt_status st = fn(h, buf, cap, &len);                                 \
      if (st != NNRT_OK) {                                                    \
        free(buf);                                                            \
        *err = nnrt_go_copy_last_error();                                     \
        return st;                                                            \
      }                                                                       \
      if (buf != NULL && len < cap) break;                                    \
      free(buf);                                                              \
      cap = len + 1;                                                          \
      buf = (char *)malloc(cap);                                              \
      if (buf == NULL) return NNRT_ERR_OUT_OF_MEMORY;                         \
    }                                                                         \
    *out = buf;                                                               \
    return NNRT_OK;                                                           \
  }

#endif
