/* A minimal test harness for the C99 tests: CHECK macros that report failures, and the count line
** scripts/test_summary.py reads.
**
** What is counted is test cases, not checks: a case is a function that makes checks (main
** included), and it fails when one of its checks failed. A check made in a helper function counts
** toward the helper's case. C_TEST_SKIP(reason) marks the calling function's case as skipped, with
** its reason (a case that also failed a check counts as failed).
**
** c_test_finish prints "nnrt-test-counts: passed=N failed=N skipped=0", then one line
** "nnrt-test-counts: passed=0 failed=0 skipped=N reason=TEXT" per skip reason. Under an MPI
** launcher, ranks other than 0 run the same cases again: they print "nnrt-test-repeats:" instead,
** which the closing count does not add in. Each test program returns c_test_finish's result. */
#ifndef NNRT_C_TEST_H
#define NNRT_C_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnrt/nnrt.h"

static int c_test_failures = 0;  /* failed checks, of every case */
static int c_test_checks = 0;

/* One test case: a function that made checks. */
typedef struct {
  const char *function;
  int failed;
  const char *skip_reason; /* NULL unless C_TEST_SKIP was called */
} c_test_case;

/* More functions than this share the last entry (no test program comes near it). */
#define C_TEST_MAX_CASES 128
static c_test_case c_test_cases[C_TEST_MAX_CASES];
static int c_test_case_count = 0;

/* The case of `function` (__func__ of the check), added on its first check. */
static inline c_test_case *c_test_case_of(const char *function) {
  int i;
  for (i = 0; i < c_test_case_count; ++i)
    if (strcmp(c_test_cases[i].function, function) == 0) return &c_test_cases[i];
  if (c_test_case_count == C_TEST_MAX_CASES) return &c_test_cases[C_TEST_MAX_CASES - 1];
  c_test_cases[c_test_case_count].function = function;
  return &c_test_cases[c_test_case_count++];
}

/* Records one check of `function`'s case; returns ok. For checks written by hand (a message of
** their own): if (!C_TEST_RECORD(got == want)) fprintf(stderr, ...). */
static inline int c_test_record(const char *function, int ok) {
  c_test_case *c = c_test_case_of(function);
  ++c_test_checks;
  if (!ok) {
    ++c_test_failures;
    c->failed = 1;
  }
  return ok;
}
#define C_TEST_RECORD(ok) c_test_record(__func__, (ok) != 0)

/* Marks `function`'s case as skipped; the reason is printed and reported with the counts. */
static inline void c_test_skip(const char *function, const char *reason) {
  c_test_case_of(function)->skip_reason = reason;
  printf("SKIP %s: %s\n", function, reason);
}
#define C_TEST_SKIP(reason) c_test_skip(__func__, (reason))

#define CHECK(cond)                                                               \
  do {                                                                            \
    if (!C_TEST_RECORD(cond))                                                     \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
  } while (0)

/* Checks that `call` returns `status` and that the error message contains `text` (may be ""). */
#define CHECK_STATUS(call, status, text)                                                        \
  do {                                                                                          \
    nnrt_status s_ = (call);                                                                    \
    int status_ok_ = s_ == (status);                                                            \
    int text_ok_ = !status_ok_ || s_ == NNRT_OK || strstr(nnrt_last_error(), (text)) != NULL;   \
    if (!C_TEST_RECORD(status_ok_ && text_ok_)) {                                               \
      if (!status_ok_)                                                                          \
        fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n", __FILE__, __LINE__, #call,  \
                nnrt_status_name(s_), nnrt_status_name(status), nnrt_last_error());             \
      else                                                                                      \
        fprintf(stderr, "%s:%d: %s: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, #call, \
                nnrt_last_error(), (text));                                                     \
    }                                                                                           \
  } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, NNRT_OK, "")

#define CHECK_NEAR(a, b, tol)                                                                \
  do {                                                                                       \
    double a_ = (a), b_ = (b);                                                               \
    if (!C_TEST_RECORD(fabs(a_ - b_) <= (tol)))                                              \
      fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g\n", __FILE__, __LINE__, #a, a_, b_);  \
  } while (0)

/* The context's description as a NUL-terminated string the caller frees. */
static inline char *c_test_describe(nnrt_context *ctx) {
  size_t len = 0;
  char *buf;
  nnrt_context_describe(ctx, NULL, 0, &len);
  buf = (char *)malloc(len + 1);
  if (buf) nnrt_context_describe(ctx, buf, len + 1, &len);
  return buf;
}

/* Prints the counts (see the top of this file) and a summary; returns the program's exit status. */
static inline int c_test_finish(const char *name) {
  /* Open MPI's launcher names the rank; rank 0's cases are the ones counted. */
  const char *rank = getenv("OMPI_COMM_WORLD_RANK");
  const char *line = rank && atoi(rank) != 0 ? "nnrt-test-repeats" : "nnrt-test-counts";
  int passed = 0, failed = 0, skipped = 0, i, j;
  for (i = 0; i < c_test_case_count; ++i) {
    if (c_test_cases[i].failed) ++failed;
    else if (c_test_cases[i].skip_reason) ++skipped;
    else ++passed;
  }
  /* A failure counted by hand outside any case (++c_test_failures) still fails one. */
  if (c_test_failures && !failed) failed = 1;
  printf("%s: passed=%d failed=%d skipped=0\n", line, passed, failed);
  for (i = 0; i < c_test_case_count; ++i) {  /* one line per distinct reason */
    const char *reason = c_test_cases[i].skip_reason;
    int same = 0, earlier = 0;
    if (!reason || c_test_cases[i].failed) continue;
    for (j = 0; j < c_test_case_count; ++j) {
      if (c_test_cases[j].failed || !c_test_cases[j].skip_reason || strcmp(c_test_cases[j].skip_reason, reason)) continue;
      if (j < i) earlier = 1;
      ++same;
    }
    if (!earlier) printf("%s: passed=0 failed=0 skipped=%d reason=%s\n", line, same, reason);
  }
  printf("%s: %d case(s): %d passed, %d failed, %d skipped (%d of %d checks failed)\n", name,
         passed + failed + skipped, passed, failed, skipped, c_test_failures, c_test_checks);
  return failed ? 1 : 0;
}

#endif
