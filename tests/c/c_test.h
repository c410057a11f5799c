/* A minimal test harness for the C99 tests: CHECK macros that count and report failures. Each
** test program runs its cases and returns non-zero if any check failed. c_test_finish prints the
** counts as the line scripts/test_summary.py reads: "nnrt-test-counts: passed=N failed=N skipped=0",
** one case per check. */
#ifndef NNRT_C_TEST_H
#define NNRT_C_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnrt/nnrt.h"

static int c_test_failures = 0;
static int c_test_checks = 0;

#define CHECK(cond)                                                               \
  do {                                                                            \
    ++c_test_checks;                                                              \
    if (!(cond)) {                                                                \
      ++c_test_failures;                                                          \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
    }                                                                             \
  } while (0)

/* Checks that `call` returns `status` and that the error message contains `text` (may be ""). */
#define CHECK_STATUS(call, status, text)                                                      \
  do {                                                                                        \
    nnrt_status s_ = (call);                                                                  \
    ++c_test_checks;                                                                          \
    if (s_ != (status)) {                                                                     \
      ++c_test_failures;                                                                      \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n", __FILE__, __LINE__, #call, \
              nnrt_status_name(s_), nnrt_status_name(status), nnrt_last_error());             \
    } else if (s_ != NNRT_OK && !strstr(nnrt_last_error(), (text))) {                         \
      ++c_test_failures;                                                                      \
      fprintf(stderr, "%s:%d: %s: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, #call,  \
              nnrt_last_error(), (text));                                                     \
    }                                                                                         \
  } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, NNRT_OK, "")

#define CHECK_NEAR(a, b, tol)                                                                \
  do {                                                                                       \
    double a_ = (a), b_ = (b);                                                               \
    ++c_test_checks;                                                                         \
    if (!(fabs(a_ - b_) <= (tol))) {                                                         \
      ++c_test_failures;                                                                     \
      fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g\n", __FILE__, __LINE__, #a, a_, b_);  \
    }                                                                                        \
  } while (0)

static int c_test_finish(const char *name) {
  printf("nnrt-test-counts: passed=%d failed=%d skipped=0\n", c_test_checks - c_test_failures, c_test_failures);
  if (c_test_failures) {
    fprintf(stderr, "%s: %d of %d checks failed\n", name, c_test_failures, c_test_checks);
    return 1;
  }
  printf("%s: %d checks passed\n", name, c_test_checks);
  return 0;
}

#endif
