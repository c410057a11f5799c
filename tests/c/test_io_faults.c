/* I/O faults during save: a file size limit (RLIMIT_FSIZE, as a full disk behaves: the write fails
** part way) and a read-only folder. Each save must fail with NNRT_ERR_IO naming the file, leave no
** temporary file behind, and leave the previous checkpoint loadable with its old contents. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c_test.h"

static const char *mlp =
    "{\"input\": [64], \"seed\": 5, \"layers\": [{\"type\": \"dense\", \"units\": 64, \"activation\": \"relu\"},"
    " {\"type\": \"output\", \"units\": 4, \"loss\": \"nll\"}]}";

static int files_in(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ++n;
  closedir(d);
  return n;
}

/* The first element of layer0.weight of the model saved at path (NaN if it does not load). */
static float first_weight(nnrt_context *ctx, const char *path) {
  nnrt_model *m = NULL;
  nnrt_array *w = NULL;
  static float v[64 * 64];
  float first = NAN;
  if (nnrt_model_load(ctx, path, &m) != NNRT_OK) return NAN;
  if (nnrt_model_get_param(m, "layer0.weight", &w) == NNRT_OK && nnrt_array_to_host(w, v, sizeof v) == NNRT_OK)
    first = v[0];
  nnrt_array_release(w);
  nnrt_model_release(m);
  return first;
}

/* What the cases share: a saved model (its first weight `before`) and the same model changed since,
** so that a save that went through would be seen. */
static nnrt_context *ctx = NULL;
static nnrt_model *m = NULL;
static nnrt_trainer *t = NULL;
static char dir[] = "/tmp/nnrt_io_faults_XXXXXX", path[128];
static float before;

/* Disk full: writes beyond 4 KiB fail (EFBIG; SIGXFSZ ignored, as a program embedding nnrt may). */
static void test_disk_full(void) {
  struct rlimit old, small;
  signal(SIGXFSZ, SIG_IGN);
  CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
  small = old;
  small.rlim_cur = 4096;
  CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
  CHECK_STATUS(nnrt_model_save(m, path), NNRT_ERR_IO, path);
  CHECK_STATUS(nnrt_trainer_save(t, path), NNRT_ERR_IO, path);
  CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
  CHECK(files_in(dir) == 1); /* no temporary file left */
  CHECK(first_weight(ctx, path) == before);
}

/* A read-only folder: the temporary file cannot be made. Root ignores permissions, so this case
** needs an ordinary user (as root it is counted as skipped). */
static void test_read_only_folder(void) {
  if (geteuid() == 0) {
    C_TEST_SKIP("a read-only folder cannot be tested as root, which may write anywhere");
    return;
  }
  CHECK(chmod(dir, 0555) == 0);
  CHECK_STATUS(nnrt_model_save(m, path), NNRT_ERR_IO, dir);
  CHECK_STATUS(nnrt_trainer_save(t, path), NNRT_ERR_IO, dir);
  CHECK(chmod(dir, 0755) == 0);
  CHECK(files_in(dir) == 1);
  CHECK(first_weight(ctx, path) == before);
}

/* After the faults, saving works again. */
static void test_save_after_faults(void) {
  CHECK_OK(nnrt_model_save(m, path));
  CHECK(first_weight(ctx, path) == before + 1);
}

int main(int argc, char **argv) {
  nnrt_array *w = NULL;
  static float v[64 * 64];
  int i;

  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  CHECK_OK(nnrt_context_create(argc > 1 ? argv[1] : NULL, &ctx));
  CHECK_OK(nnrt_model_create(ctx, mlp, &m));
  CHECK_OK(nnrt_trainer_create(m, NULL, &t));
  CHECK_OK(nnrt_model_save(m, path));
  before = first_weight(ctx, path);
  CHECK(!isnan(before));
  if (c_test_failures) return c_test_finish("test_io_faults");

  /* Change the model, so that a save that went through would be seen. */
  CHECK_OK(nnrt_model_get_param(m, "layer0.weight", &w));
  CHECK_OK(nnrt_array_to_host(w, v, sizeof v));
  for (i = 0; i < 64 * 64; ++i) v[i] += 1;
  nnrt_array_release(w);
  {
    int64_t s[2] = {64, 64};
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, s, v, sizeof v, &w));
    CHECK_OK(nnrt_model_set_param(m, "layer0.weight", w));
    nnrt_array_release(w);
  }

  test_disk_full();
  test_read_only_folder();
  test_save_after_faults();

  nnrt_trainer_release(t);
  nnrt_model_release(m);
  nnrt_context_release(ctx);
  unlink(path);
  rmdir(dir);
  return c_test_finish("test_io_faults");
}
