/* Shared by the cgo preambles of the Go binding: includes the C API and defines the macros that
** make each fallible call's C shim. Every shim calls one nnrt function and, when it fails, copies
** nnrt_last_error() before returning. The copy must happen inside the same cgo call because the
** message is thread-local and a goroutine may run its next cgo call on another OS thread, whose
** message belongs to someone else. */
#ifndef NNRT_GO_H
#define NNRT_GO_H

#include <stdio.h>
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

/* nnrt's release function for memory nnrt_go_model_predict_into_host lends it: counts the calls
** (it may run on any thread nnrt uses). */
static inline void nnrt_go_lent_memory_released(void *data, void *user) {
  (void)data;
  __atomic_add_fetch((int *)user, 1, __ATOMIC_ACQ_REL);
}

/* Predicts from `input` (in_bytes bytes of in_dtype elements shaped in_shape) into `output`
** (out_bytes bytes of F32 elements shaped out_shape, the model's output shape for the batch), both
** Go memory, within this one cgo call: Go 1.19 cannot pin memory, and cgo forbids C to keep a Go
** pointer after the call returns. It wraps both with nnrt_array_wrap_host, runs
** nnrt_model_predict_into, and releases both wrappers before returning; nnrt then calls the
** release function of each and keeps nothing. Were a release function not called by then, nnrt
** would still hold Go memory that the garbage collector may free: the process stops (abort)
** rather than let nnrt write into it later. On a backend whose arrays are not in host memory
** (wrap_host: NNRT_ERR_UNSUPPORTED) it copies instead: nnrt_array_from_host,
** nnrt_model_predict_ex, nnrt_array_to_host. */
static inline nnrt_status nnrt_go_model_predict_into_host(
    nnrt_model *m, nnrt_context *ctx, nnrt_dtype in_dtype, int32_t in_ndim, const int64_t *in_shape,
    void *input, size_t in_bytes, int32_t out_ndim, const int64_t *out_shape, void *output,
    size_t out_bytes, const nnrt_run_options *opts, char **err) {
  int released = 0, lent = 0;
  nnrt_array *in = NULL, *out = NULL;
  nnrt_status st = nnrt_array_wrap_host(ctx, in_dtype, in_ndim, in_shape, NULL, input, in_bytes,
                                        nnrt_go_lent_memory_released, &released, &in);
  if (st == NNRT_ERR_UNSUPPORTED) {
    nnrt_array *prediction = NULL;
    st = nnrt_array_from_host(ctx, in_dtype, in_ndim, in_shape, input, in_bytes, &in);
    if (st == NNRT_OK) st = nnrt_model_predict_ex(m, in, opts, &prediction);
    if (st == NNRT_OK) st = nnrt_array_to_host(prediction, output, out_bytes);
    if (st != NNRT_OK) *err = nnrt_go_copy_last_error();
    nnrt_array_release(prediction);
    nnrt_array_release(in);
    return st;
  }
  if (st == NNRT_OK) {
    lent++;
    st = nnrt_array_wrap_host(ctx, NNRT_DTYPE_F32, out_ndim, out_shape, NULL, output, out_bytes,
                              nnrt_go_lent_memory_released, &released, &out);
  }
  if (st == NNRT_OK) {
    lent++;
    st = nnrt_model_predict_into(m, in, out, opts);
  }
  /* The message first: releasing is an nnrt call, after which nnrt_last_error may change. */
  if (st != NNRT_OK) *err = nnrt_go_copy_last_error();
  nnrt_array_release(out);
  nnrt_array_release(in);
  if (__atomic_load_n(&released, __ATOMIC_ACQUIRE) != lent) {
    fputs("nnrt (Go binding): memory lent to nnrt_array_wrap_host was not given back after its "
          "array was released\n", stderr);
    abort();
  }
  return st;
}

#endif
