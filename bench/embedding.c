/* bench/embedding: what a prediction costs an embedding program beyond the math, by the way its
** data reaches nnrt and comes back. Three ways, taking turns, on the same model and input:
**   copy          nnrt_array_from_host + nnrt_model_predict + nnrt_array_to_host (two copies and
**                 two new arrays per call: how every binding called nnrt before caller-owned
**                 buffers)
**   wrap per call nnrt_array_wrap_host on the caller's input and output + nnrt_model_predict_into,
**                 both wrappers released (what the bindings do now: no copy, two small handles)
**   wrapped once  nnrt_model_predict_into on input and output arrays wrapped once (a program with
**                 fixed buffers)
** Each round runs each way for `seconds` (the order turns every round) and keeps the median call;
** the table gives the median over rounds and the time each way saves against copy. Figures only.
**
**   embedding [--models lenet,mlp] [--batches 1,64] [--threads 1] [--rounds 7] [--seconds 0.3]
*/
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "lenet_example.h" /* NNRT_LENET_CONFIG */

enum { COPY, WRAP_PER_CALL, WRAPPED_ONCE, WAYS };
static const char *way_names[WAYS] = {"copy", "wrap per call", "wrapped once"};

typedef struct {
  nnrt_context *ctx;
  nnrt_model *model;
  int64_t in_shape[4], out_shape[2];
  float *input, *output;
  size_t in_bytes, out_bytes;
  nnrt_array *in_once, *out_once;
} setup;

static void call(setup *s, int way) {
  nnrt_array *x = NULL, *y = NULL;
  switch (way) {
    case COPY:
      CHECK(nnrt_array_from_host(s->ctx, NNRT_DTYPE_F32, 4, s->in_shape, s->input, s->in_bytes, &x));
      CHECK(nnrt_model_predict(s->model, x, &y));
      CHECK(nnrt_array_to_host(y, s->output, s->out_bytes));
      break;
    case WRAP_PER_CALL:
      CHECK(nnrt_array_wrap_host(s->ctx, NNRT_DTYPE_F32, 4, s->in_shape, NULL, s->input, s->in_bytes, NULL, NULL, &x));
      CHECK(nnrt_array_wrap_host(s->ctx, NNRT_DTYPE_F32, 2, s->out_shape, NULL, s->output, s->out_bytes, NULL, NULL, &y));
      CHECK(nnrt_model_predict_into(s->model, x, y, NULL));
      break;
    default: CHECK(nnrt_model_predict_into(s->model, s->in_once, s->out_once, NULL)); break;
  }
  nnrt_array_release(x);
  nnrt_array_release(y);
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median call of one way over `seconds`. */
static double median_call(setup *s, int way, double seconds, double *samples, int cap) {
  int n = 0;
  double start = bench_now();
  while (n < cap && (n < 10 || bench_now() - start < seconds)) {
    double t = bench_now();
    call(s, way);
    samples[n++] = bench_now() - t;
  }
  qsort(samples, (size_t)n, sizeof(double), by_value);
  return samples[n / 2];
}

static void print_machine(void) {
  char line[4096], model[256] = "?";
  int avx2 = 0, avx512 = 0, bf16 = 0, amx = 0;
  double load = 0;
  FILE *f = fopen("/proc/cpuinfo", "r");
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0 && model[0] == '?') {
      char *colon = strchr(line, ':');
      if (colon) snprintf(model, sizeof model, "%s", colon + 2);
      model[strcspn(model, "\n")] = 0;
    }
    if (strncmp(line, "flags", 5) == 0) {
      avx2 = strstr(line, " avx2") != NULL;
      avx512 = strstr(line, " avx512f") != NULL;
      bf16 = strstr(line, " avx512_bf16") != NULL;
      amx = strstr(line, " amx_tile") != NULL;
    }
  }
  if (f) fclose(f);
  f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &load) != 1) load = -1;
    fclose(f);
  }
  printf("CPU: %s; ISA: %s%s%s; DNNL_MAX_CPU_ISA=%s; load average %.2f; nnrt %s\n", model,
         avx512 ? "AVX-512" : avx2 ? "AVX2" : "below AVX2", bf16 ? " +BF16" : "", amx ? " +AMX" : "",
         getenv("DNNL_MAX_CPU_ISA") ? getenv("DNNL_MAX_CPU_ISA") : "unset", load, nnrt_version_string());
}

/* Splits "a,b,c" in place into at most `cap` items. */
static int split(char *list, char **items, int cap) {
  int n = 0;
  char *p = strtok(list, ",");
  while (p && n < cap) {
    items[n++] = p;
    p = strtok(NULL, ",");
  }
  return n;
}

int main(int argc, char **argv) {
  char models_arg[64] = "lenet,mlp", batches_arg[64] = "1,64", *models[4], *batches[8], options[64];
  int threads = 1, rounds = 7, i, m, b, r, w, n_models, n_batches, cap = 1 << 18;
  double seconds = 0.3, *samples = malloc(sizeof(double) * (size_t)(1 << 18));
  for (i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--models") == 0) snprintf(models_arg, sizeof models_arg, "%s", argv[i + 1]);
    else if (strcmp(argv[i], "--batches") == 0) snprintf(batches_arg, sizeof batches_arg, "%s", argv[i + 1]);
    else if (strcmp(argv[i], "--threads") == 0) threads = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[i + 1]);
    else {
      fprintf(stderr, "usage: %s [--models lenet,mlp] [--batches 1,64] [--threads 1] [--rounds 7] [--seconds 0.3]\n",
              argv[0]);
      return 2;
    }
  }
  if (rounds < 1 || rounds > 99 || threads < 1) {
    fprintf(stderr, "%s: expected 1-99 rounds and >= 1 threads\n", argv[0]);
    return 2;
  }
  n_models = split(models_arg, models, 4);
  n_batches = split(batches_arg, batches, 8);
  print_machine();
  printf("%-6s %5s %7s | %-13s %10s %10s\n", "model", "batch", "threads", "way", "median us", "saved us");
  snprintf(options, sizeof options, "{\"threads\": %d}", threads);
  for (m = 0; m < n_models; ++m) {
    for (b = 0; b < n_batches; ++b) {
      setup s;
      double medians[WAYS][99];
      int64_t batch = atol(batches[b]), k;
      memset(&s, 0, sizeof s);
      CHECK(nnrt_context_create(options, &s.ctx));
      CHECK(nnrt_model_create(s.ctx, strcmp(models[m], "mlp") == 0 ? BENCH_MLP_CONFIG : NNRT_LENET_CONFIG, &s.model));
      s.in_shape[0] = batch, s.in_shape[1] = 1, s.in_shape[2] = 28, s.in_shape[3] = 28;
      s.out_shape[0] = batch, s.out_shape[1] = 10;
      s.in_bytes = sizeof(float) * (size_t)batch * 784;
      s.out_bytes = sizeof(float) * (size_t)batch * 10;
      s.input = malloc(s.in_bytes);
      s.output = malloc(s.out_bytes);
      srand(7);
      for (k = 0; k < batch * 784; ++k) s.input[k] = (float)rand() / (float)RAND_MAX;
      CHECK(nnrt_array_wrap_host(s.ctx, NNRT_DTYPE_F32, 4, s.in_shape, NULL, s.input, s.in_bytes, NULL, NULL, &s.in_once));
      CHECK(nnrt_array_wrap_host(s.ctx, NNRT_DTYPE_F32, 2, s.out_shape, NULL, s.output, s.out_bytes, NULL, NULL,
                                 &s.out_once));
      for (w = 0; w < WAYS; ++w) /* warm-up: primitives, plans, caches */
        for (k = 0; k < 20; ++k) call(&s, w);
      for (r = 0; r < rounds; ++r)
        for (w = 0; w < WAYS; ++w) {
          int way = (w + r) % WAYS;
          medians[way][r] = median_call(&s, way, seconds, samples, cap);
        }
      {
        double median[WAYS];
        for (w = 0; w < WAYS; ++w) {
          qsort(medians[w], (size_t)rounds, sizeof(double), by_value);
          median[w] = medians[w][rounds / 2];
        }
        for (w = 0; w < WAYS; ++w) {
          printf("%-6s %5ld %7d | %-13s %10.1f %10.1f\n", models[m], (long)batch, threads, way_names[w], median[w] * 1e6,
                 (median[COPY] - median[w]) * 1e6);
        }
      }
      nnrt_array_release(s.in_once);
      nnrt_array_release(s.out_once);
      free(s.input);
      free(s.output);
      nnrt_model_release(s.model);
      nnrt_context_release(s.ctx);
    }
  }
  free(samples);
  return 0;
}
