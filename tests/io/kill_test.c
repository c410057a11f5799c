/* Crash safety of checkpoint saves: a writer process saves a LeNet over and over, alternating two
** weight sets (every parameter 0.25, or every parameter -0.5), and is killed with SIGKILL at
** random moments. After every kill the file must load and hold exactly one of the two sets -- the
** last one saved or the one being saved -- never a mix, never a damaged file.
**
** Leftover temporary files of killed saves are ignored by loads (a load reads only the path) and
** removed by the next save; the test checks both.
**
** The writer reports the start ('s') and the end (the set's digit) of every save, so the test
** knows which kills landed inside nnrt_model_save. It requires at least MIN_DURING_SAVE of them,
** killing more writers (up to four times the number asked for) until it has them.
**
** Usage: kill_test [kills]     (the writer runs as: kill_test --writer <path> <fd>) */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lenet_example.h"
#include "nnrt/nnrt.h"

static const char *lenet = NNRT_LENET_CONFIG;
static const char *params[] = {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                               "fc1.weight",   "fc1.bias",   "out.weight",   "out.bias"};
#define NPARAMS 8
#define MIN_DURING_SAVE 5
static const float set_value[2] = {0.25f, -0.5f};

static int failures = 0;
#define REQUIRE(cond, ...)                                     \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "kill_test: FAILED: " __VA_ARGS__);      \
      fprintf(stderr, " (%s)\n", nnrt_last_error());           \
      ++failures;                                              \
    }                                                          \
  } while (0)

static nnrt_context *reference_context(void) {
  nnrt_context *ctx = NULL;
  if (nnrt_context_create("{\"backend\": \"reference\", \"threads\": 1}", &ctx) != NNRT_OK) {
    fprintf(stderr, "kill_test: context: %s\n", nnrt_last_error());
    exit(1);
  }
  return ctx;
}

/* Sets every parameter of m to set_value[which]. */
static int fill_params(nnrt_context *ctx, nnrt_model *m, int which) {
  int i;
  for (i = 0; i < NPARAMS; ++i) {
    nnrt_array *p = NULL, *v = NULL;
    nnrt_dtype dtype;
    int32_t ndim;
    int64_t shape[NNRT_MAX_DIMS];
    size_t bytes = 0, k;
    float *values;
    if (nnrt_model_get_param(m, params[i], &p) != NNRT_OK) return 0;
    nnrt_array_info(p, &dtype, &ndim, shape);
    nnrt_array_nbytes(p, &bytes);
    values = (float *)malloc(bytes);
    for (k = 0; k < bytes / sizeof(float); ++k) values[k] = set_value[which];
    if (nnrt_array_from_host(ctx, NNRT_DTYPE_F32, ndim, shape, values, bytes, &v) != NNRT_OK ||
        nnrt_model_set_param(m, params[i], v) != NNRT_OK)
      return 0;
    free(values);
    nnrt_array_release(v);
    nnrt_array_release(p);
  }
  return 1;
}

/* The writer: reports "ready" through fd, then saves set 0, set 1, set 0, ... reporting the start
** of each save with 's' and its end with the set's digit, until it is killed. */
static int run_writer(const char *path, int fd) {
  nnrt_context *ctx = reference_context();
  nnrt_model *m = NULL;
  int which = 0;
  char ready = 'r';
  if (nnrt_model_create(ctx, lenet, &m) != NNRT_OK) {
    fprintf(stderr, "kill_test writer: %s\n", nnrt_last_error());
    return 1;
  }
  if (write(fd, &ready, 1) != 1) return 1;
  for (;;) {
    char done = (char)('0' + which), start = 's';
    if (!fill_params(ctx, m, which) || write(fd, &start, 1) != 1 || nnrt_model_save(m, path) != NNRT_OK) {
      fprintf(stderr, "kill_test writer: %s\n", nnrt_last_error());
      return 1;
    }
    if (write(fd, &done, 1) != 1) return 1;
    which = 1 - which;
  }
}

/* Which set the model holds: 0 or 1, or -1 for anything else (a mix, other values). */
static int set_of(nnrt_model *m) {
  int i, found = -2;
  for (i = 0; i < NPARAMS; ++i) {
    nnrt_array *p = NULL;
    size_t bytes = 0, k;
    float *values;
    if (nnrt_model_get_param(m, params[i], &p) != NNRT_OK) return -1;
    nnrt_array_nbytes(p, &bytes);
    values = (float *)malloc(bytes);
    nnrt_array_to_host(p, values, bytes);
    for (k = 0; k < bytes / sizeof(float); ++k) {
      int here = values[k] == set_value[0] ? 0 : values[k] == set_value[1] ? 1 : -1;
      if (found == -2) found = here;
      if (here != found) found = -1;
    }
    free(values);
    nnrt_array_release(p);
  }
  return found;
}

/* Temporary files of saves to `name` in `folder`. */
static int count_leftovers(const char *folder, const char *name) {
  char prefix[256];
  DIR *d = opendir(folder);
  struct dirent *e;
  int n = 0;
  sprintf(prefix, ".%s.tmp.", name);
  if (!d) return -1;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) ++n;
  closedir(d);
  return n;
}

static void sleep_us(long us) {
  struct timespec t;
  t.tv_sec = us / 1000000;
  t.tv_nsec = (us % 1000000) * 1000;
  nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
  char folder[128], path[256], fd_text[16];
  const char *tmp = getenv("TMPDIR");
  int kills = argc > 1 ? atoi(argv[1]) : 50, k, holds, mid_save = 0, max_leftovers = 0, saves = 0;
  int during_save = 0;
  int loaded_sets[2] = {0, 0};
  long save_us = 0, window_us = 20000;
  nnrt_context *ctx;
  nnrt_model *m = NULL;

  if (argc == 4 && strcmp(argv[1], "--writer") == 0) return run_writer(argv[2], atoi(argv[3]));

  sprintf(folder, "%.100s/nnrt-kill-XXXXXX", tmp && *tmp && strlen(tmp) < 100 ? tmp : "/tmp");
  if (!mkdtemp(folder)) {
    perror("mkdtemp");
    return 1;
  }
  sprintf(path, "%s/model.safetensors", folder);
  srand((unsigned)time(NULL) ^ (unsigned)getpid());

  /* The file exists before the first kill, holding set 0. */
  ctx = reference_context();
  REQUIRE(nnrt_model_create(ctx, lenet, &m) == NNRT_OK, "create");
  REQUIRE(fill_params(ctx, m, 0), "fill");
  {
    /* Kills come at random within about three saves' time (at least 20 ms), so that they land
    ** in every phase of a save: writing, flushing, renaming, and between saves. */
    int i;
    for (i = 0; i < 3; ++i) {
      struct timespec t0, t1;
      long us;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      REQUIRE(nnrt_model_save(m, path) == NNRT_OK, "first save");
      clock_gettime(CLOCK_MONOTONIC, &t1);
      us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
      if (us > save_us) save_us = us;
    }
    window_us = 3 * save_us < 20000 ? 20000 : 3 * save_us > 200000 ? 200000 : 3 * save_us;
  }
  holds = 0;

  for (k = 0; (k < kills || (during_save < MIN_DURING_SAVE && k < 4 * kills)) && !failures; ++k) {
    int pipe_fd[2], status, last_done = -1, n, i, loaded_set, in_save = 0;
    char buf[4096], ready;
    pid_t child;
    nnrt_model *loaded = NULL;
    if (pipe(pipe_fd) != 0) return 1;
    sprintf(fd_text, "%d", pipe_fd[1]);
    child = fork();
    if (child == 0) {
      close(pipe_fd[0]);
      execl("/proc/self/exe", argv[0], "--writer", path, fd_text, (char *)NULL);
      _exit(127);
    }
    close(pipe_fd[1]);
    if (read(pipe_fd[0], &ready, 1) != 1) {
      REQUIRE(0, "the writer did not start");
      break;
    }
    sleep_us((long)(((double)rand() / RAND_MAX) * (double)window_us));
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    REQUIRE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the writer ended on its own (status %d)", status);
    while ((n = (int)read(pipe_fd[0], buf, sizeof buf)) > 0) {
      for (i = 0; i < n; ++i) {
        in_save = buf[i] == 's';
        if (!in_save) {
          ++saves;
          last_done = buf[i] - '0';
        }
      }
    }
    close(pipe_fd[0]);
    if (in_save) ++during_save;

    n = count_leftovers(folder, "model.safetensors");
    if (n > 0) ++mid_save;
    if (n > max_leftovers) max_leftovers = n;
    /* Each save removes the leftovers of dead writers before it starts its own. */
    REQUIRE(n <= 2, "%d temporary files after kill %d", n, k);

    REQUIRE(nnrt_model_load(ctx, path, &loaded) == NNRT_OK, "load after kill %d", k);
    if (!loaded) break;
    loaded_set = set_of(loaded);
    REQUIRE(loaded_set >= 0, "after kill %d the file holds a mix of the two weight sets", k);
    /* A writer that finished no save may have renamed its first one (set 0) into place. */
    REQUIRE(last_done >= 0 || loaded_set == holds || loaded_set == 0, "kill %d: a set no save wrote", k);
    if (loaded_set >= 0) {
      loaded_sets[loaded_set]++;
      holds = loaded_set;
    }
    nnrt_model_release(loaded);
  }

  /* A save by a live process removes what the killed writers left. */
  REQUIRE(nnrt_model_save(m, path) == NNRT_OK, "final save");
  REQUIRE(count_leftovers(folder, "model.safetensors") == 0, "temporary files remain after a later save");

  REQUIRE(during_save >= MIN_DURING_SAVE, "only %d of %d kills landed during a save (at least %d needed)", during_save,
          k, MIN_DURING_SAVE);

  printf("kill_test: a save takes up to %ld us; kills at random within %ld us of the writer's start\n", save_us, window_us);
  printf("kill_test: %d kills landed during a save (between its start and its end)\n", during_save);
  printf("kill_test: %d kills, %d loads checked (set 0: %d, set 1: %d), %d saves finished by writers, "
         "%d kills left a temporary file (at most %d at once), all removed by the next save\n",
         k, loaded_sets[0] + loaded_sets[1], loaded_sets[0], loaded_sets[1], saves, mid_save, max_leftovers);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
  remove(path);
  rmdir(folder);
  printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
  printf("nnrt-test-counts: passed=%d failed=%d skipped=0\n", failures ? 0 : 1, failures ? 1 : 0);
  return failures ? 1 : 0;
}
