/* What the C benchmark programs share: a fail-fast CHECK, a monotonic clock, and the MLP
** 784-1024-1024-10 that bench/lenet, bench/predict and bench/scaling measure beside LeNet. */
#ifndef NNRT_BENCH_COMMON_H
#define NNRT_BENCH_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <nnrt/nnrt.h>

/* Ends the program with the status and message when an nnrt call fails. */
#define CHECK(call)                                                                            \
  do {                                                                                         \
    nnrt_status s_ = (call);                                                                   \
    if (s_ != NNRT_OK) {                                                                       \
      fprintf(stderr, "%s failed: %s: %s\n", #call, nnrt_status_name(s_), nnrt_last_error()); \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

#define BENCH_MLP_CONFIG                                                                            \
  "{\"input\": [1, 28, 28], \"seed\": 123, \"layers\": ["                                           \
  " {\"type\": \"dense\", \"units\": 1024, \"activation\": \"relu\", \"init\": \"xavier\"},"        \
  " {\"type\": \"dense\", \"units\": 1024, \"activation\": \"relu\", \"init\": \"xavier\"},"        \
  " {\"type\": \"output\", \"units\": 10, \"activation\": \"softmax\", \"loss\": \"nll\", \"init\": \"xavier\"}]}"

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
