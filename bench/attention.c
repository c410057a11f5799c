/* bench/attention: scaled dot-product attention at long sequences, as one op ("attention": a block
** of query rows at a time) and composed of ops (matmul, scale, softmax, matmul: a [T, T] score
** matrix per head), on the oneDNN backend (or the one named). Each measurement runs in a child
** process of its own, so that its peak RSS (from wait4) is its own; fused and composed alternate,
** and the medians are printed.
**
**   attention [--heads H] [--dim D] [--threads N] [--rounds R] [--backend B] [T ...]
**
** Defaults: 4 heads of 64, 2 threads, 3 rounds, sequences 512 1024 2048 4096; batch 1, f32. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_common.h"

struct config {
  int heads, dim, threads, rounds;
  const char *backend;
};

static nnrt_array *random_array(nnrt_context *ctx, int64_t heads, int64_t t, int64_t d, const char *seed) {
  int64_t shape[4] = {1, heads, t, d};
  char attrs[160];
  nnrt_array *a = NULL;
  snprintf(attrs, sizeof attrs, "{\"shape\": [1, %lld, %lld, %lld], \"low\": -1, \"high\": 1, \"seed\": %s}",
           (long long)shape[1], (long long)shape[2], (long long)shape[3], seed);
  CHECK(nnrt_op(ctx, "random_uniform", NULL, 0, attrs, &a, 1));
  return a;
}

static nnrt_array *op1(nnrt_context *ctx, const char *name, nnrt_array *a, nnrt_array *b, const char *attrs) {
  const nnrt_array *in[2] = {a, b};
  nnrt_array *out = NULL;
  CHECK(nnrt_op(ctx, name, in, b ? 2 : 1, attrs, &out, 1));
  return out;
}

/* One attention, fused or composed; returns its output. */
static nnrt_array *attend(nnrt_context *ctx, int fused, nnrt_array *q, nnrt_array *k, nnrt_array *v, nnrt_array *scale) {
  nnrt_array *scores, *scaled, *p, *o;
  if (fused) {
    const nnrt_array *in[3] = {q, k, v};
    CHECK(nnrt_op(ctx, "attention", in, 3, NULL, &o, 1));
    return o;
  }
  scores = op1(ctx, "matmul", q, k, "{\"transpose_b\": true}");
  scaled = op1(ctx, "mul", scores, scale, NULL);
  nnrt_array_release(scores);
  p = op1(ctx, "softmax", scaled, NULL, NULL);
  nnrt_array_release(scaled);
  o = op1(ctx, "matmul", p, v, NULL);
  nnrt_array_release(p);
  return o;
}

/* In the child: one warm-up call and timed calls for about a second; prints milliseconds per call. */
static void measure(const struct config *c, int fused, int64_t t, int fd) {
  char options[96];
  nnrt_context *ctx = NULL;
  nnrt_array *q, *k, *v, *scale = NULL;
  double start, ms;
  int calls = 0;
  float s = 1.0f / sqrtf((float)c->dim);
  int64_t one = 1;
  snprintf(options, sizeof options, "{\"backend\": \"%s\", \"threads\": %d}", c->backend, c->threads);
  CHECK(nnrt_context_create(options, &ctx));
  q = random_array(ctx, c->heads, t, c->dim, "1");
  k = random_array(ctx, c->heads, t, c->dim, "2");
  v = random_array(ctx, c->heads, t, c->dim, "3");
  CHECK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, &one, &s, sizeof s, &scale));
  nnrt_array_release(attend(ctx, fused, q, k, v, scale));
  start = bench_now();
  do {
    nnrt_array_release(attend(ctx, fused, q, k, v, scale));
    ++calls;
  } while (bench_now() - start < 1.0);
  ms = (bench_now() - start) / calls * 1e3;
  if (write(fd, &ms, sizeof ms) != (ssize_t)sizeof ms) exit(1);
  nnrt_array_release(q);
  nnrt_array_release(k);
  nnrt_array_release(v);
  nnrt_array_release(scale);
  nnrt_context_release(ctx);
}

/* Runs one measurement in a child; *ms and *rss_mb get its time per call and its peak RSS. */
static int run_child(const struct config *c, int fused, int64_t t, double *ms, double *rss_mb) {
  int fds[2], status = 0;
  struct rusage ru;
  pid_t pid;
  if (pipe(fds) != 0) return -1;
  pid = fork();
  if (pid == 0) {
    close(fds[0]);
    measure(c, fused, t, fds[1]);
    _exit(0);
  }
  close(fds[1]);
  if (read(fds[0], ms, sizeof *ms) != (ssize_t)sizeof *ms) *ms = -1;
  close(fds[0]);
  if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  *rss_mb = (double)ru.ru_maxrss / 1024.0;
  return *ms > 0 ? 0 : -1;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
  struct config c = {4, 64, 2, 3, "onednn"};
  int64_t lengths[16] = {512, 1024, 2048, 4096};
  int n_lengths = 4, given = 0, i, r, f;
  for (i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--heads") && i + 1 < argc) c.heads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dim") && i + 1 < argc) c.dim = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) c.threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) c.rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc) c.backend = argv[++i];
    else if (argv[i][0] != '-' && given < 16) lengths[given++] = atoll(argv[i]);
    else {
      fprintf(stderr, "usage: attention [--heads H] [--dim D] [--threads N] [--rounds R] [--backend B] [T ...]\n");
      return 2;
    }
  }
  if (given) n_lengths = given;
  if (c.rounds < 1 || c.rounds > 32) c.rounds = 3;
  printf("attention, batch 1, %d heads of %d, f32, backend %s, %d threads; medians of %d alternating runs\n",
         c.heads, c.dim, c.backend, c.threads, c.rounds);
  printf("%8s | %12s %14s | %12s %14s | %s\n", "sequence", "fused ms", "fused peak MB", "composed ms",
         "composed peak MB", "composed scores per head");
  for (i = 0; i < n_lengths; ++i) {
    double ms[2][32], rss[2][32];
    int ok[2] = {1, 1};
    for (r = 0; r < c.rounds; ++r)
      for (f = 1; f >= 0; --f)
        if (ok[f] && run_child(&c, f, lengths[i], &ms[f][r], &rss[f][r]) != 0) ok[f] = 0;
    printf("%8lld |", (long long)lengths[i]);
    for (f = 1; f >= 0; --f) {
      if (ok[f]) printf(" %12.2f %14.1f |", median(ms[f], c.rounds), median(rss[f], c.rounds));
      else printf(" %12s %14s |", "failed", "-");
    }
    printf(" %.1f MB\n", (double)lengths[i] * (double)lengths[i] * 4.0 / 1048576.0);
  }
  return 0;
}
