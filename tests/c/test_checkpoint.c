/* Checkpoints through the C API: a saved model loads back identical; a restored trainer goes on
** bit-identically; mismatched, missing and damaged files give the documented errors. */
#include <stdlib.h>
#include <unistd.h>

#include "c_test.h"
#include "lenet_example.h"

static nnrt_context *ctx;
static char folder[64];
static char path_buf[4][128];

/* A file name in this run's scratch folder; up to four live at once. */
static const char *scratch(int slot, const char *name) {
  sprintf(path_buf[slot], "%s/%s", folder, name);
  return path_buf[slot];
}

static const char *lenet = NNRT_LENET_CONFIG;
static const char *lenet_params[] = {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                                     "fc1.weight",   "fc1.bias",   "out.weight",   "out.bias"};

/* Dropout draws a new mask every step and batchnorm keeps running statistics: both are state
** that a restore has to bring back exactly. */
static const char *mlp =
    "{\"input\": [6], \"seed\": 11, \"layers\": ["
    " {\"type\": \"dense\", \"units\": 16, \"activation\": \"relu\"},"
    " {\"type\": \"batchnorm\"},"
    " {\"type\": \"dropout\", \"rate\": 0.3},"
    " {\"type\": \"dense\", \"units\": 8, \"activation\": \"tanh\"},"
    " {\"type\": \"output\", \"units\": 3, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";
static const char *mlp_other =
    "{\"input\": [6], \"seed\": 11, \"layers\": ["
    " {\"type\": \"dense\", \"units\": 17, \"activation\": \"relu\"},"
    " {\"type\": \"batchnorm\"},"
    " {\"type\": \"dropout\", \"rate\": 0.3},"
    " {\"type\": \"dense\", \"units\": 8, \"activation\": \"tanh\"},"
    " {\"type\": \"output\", \"units\": 3, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";
static const char *adam = "{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01}, \"batch_size\": 8, \"seed\": 3}";
/* The same run with another shuffle seed: a restore brings back the saved run's seed. */
static const char *adam_seed99 = "{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01}, \"batch_size\": 8, \"seed\": 99}";

#define BATCH 8
#define EXAMPLES 40

static unsigned rng_state = 2024;
static float uniform(void) {
  rng_state = rng_state * 1103515245u + 12345u;
  return (float)((rng_state >> 8) & 0xffff) / 65536.0f - 0.5f;
}

static nnrt_array *floats(int32_t ndim, const int64_t *shape, size_t n) {
  float *v = (float *)malloc(n * sizeof *v);
  nnrt_array *a = NULL;
  size_t i;
  for (i = 0; i < n; ++i) v[i] = uniform();
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, ndim, shape, v, n * sizeof *v, &a));
  free(v);
  return a;
}

static nnrt_array *labels(int64_t n, int32_t classes) {
  int32_t v[EXAMPLES];
  int64_t i, shape[1];
  nnrt_array *a = NULL;
  shape[0] = n;
  for (i = 0; i < n; ++i) v[i] = (int32_t)((i * 7 + 1) % classes);
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, shape, v, (size_t)n * sizeof *v, &a));
  return a;
}

static float *host_floats(const nnrt_array *a, size_t *count) {
  size_t bytes = 0;
  float *v;
  nnrt_array_nbytes(a, &bytes);
  v = (float *)malloc(bytes ? bytes : 1);
  CHECK_OK(nnrt_array_to_host(a, v, bytes));
  *count = bytes / sizeof *v;
  return v;
}

/* 1 when both arrays hold the same bytes. */
static int same_values(const nnrt_array *a, const nnrt_array *b) {
  size_t na, nb;
  float *va = host_floats(a, &na), *vb = host_floats(b, &nb);
  int same = na == nb && memcmp(va, vb, na * sizeof *va) == 0;
  free(va);
  free(vb);
  return same;
}

static int same_param(const nnrt_model *a, const nnrt_model *b, const char *name) {
  nnrt_array *pa = NULL, *pb = NULL;
  int same;
  CHECK_OK(nnrt_model_get_param(a, name, &pa));
  CHECK_OK(nnrt_model_get_param(b, name, &pb));
  same = pa && pb && same_values(pa, pb);
  nnrt_array_release(pa);
  nnrt_array_release(pb);
  return same;
}

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void copy_file(const char *from, const char *to, long keep_bytes) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  long n = 0;
  int c;
  CHECK(in != NULL && out != NULL);
  if (!in || !out) return;
  while ((c = fgetc(in)) != EOF && (keep_bytes < 0 || n < keep_bytes)) {
    fputc(c, out);
    ++n;
  }
  fclose(in);
  fclose(out);
}

/* Replaces the first occurrence of `from` in the file with `to` (same length). */
static void patch_file(const char *path, const char *from, const char *to) {
  FILE *f = fopen(path, "r+b");
  static char buf[1 << 20];
  size_t n;
  char *hit = NULL;
  CHECK(f != NULL);
  if (!f) return;
  n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  {
    size_t i, len = strlen(from);
    for (i = 0; i + len <= n && !hit; ++i)
      if (memcmp(buf + i, from, len) == 0) hit = buf + i;
  }
  CHECK(hit != NULL);
  if (hit) {
    fseek(f, (long)(hit - buf), SEEK_SET);
    fwrite(to, 1, strlen(to), f);
  }
  fclose(f);
}

static void test_model_round_trip(void) {
  nnrt_model *m = NULL, *loaded = NULL, *keep = (nnrt_model *)0x1;
  nnrt_array *x, *ya = NULL, *yb = NULL;
  int64_t xs[4] = {4, 1, 28, 28}, ca = 0, cb = 0;
  const char *path = scratch(0, "lenet.safetensors");
  size_t i;

  CHECK_OK(nnrt_model_create(ctx, lenet, &m));
  x = floats(4, xs, 4 * 28 * 28);
  CHECK_OK(nnrt_model_save(m, path));
  CHECK_OK(nnrt_model_load(ctx, path, &loaded));
  CHECK(loaded != NULL);
  if (!loaded) return;
  CHECK_OK(nnrt_model_param_count(m, &ca));
  CHECK_OK(nnrt_model_param_count(loaded, &cb));
  CHECK(ca == cb);
  for (i = 0; i < sizeof lenet_params / sizeof *lenet_params; ++i) CHECK(same_param(m, loaded, lenet_params[i]));
  CHECK_OK(nnrt_model_predict(m, x, &ya));
  CHECK_OK(nnrt_model_predict(loaded, x, &yb));
  CHECK(ya && yb && same_values(ya, yb));

  /* Saving again over the file replaces it; the loaded copy saves to the same bytes' meaning. */
  CHECK_OK(nnrt_model_save(loaded, path));
  nnrt_model_release(loaded);
  loaded = NULL;
  CHECK_OK(nnrt_model_load(ctx, path, &loaded));
  CHECK(loaded && same_param(m, loaded, "fc1.weight"));

  /* Bad arguments: INVALID_ARGUMENT, and *out is left alone. */
  CHECK_STATUS(nnrt_model_load(NULL, path, &keep), NNRT_ERR_INVALID_ARGUMENT, "ctx");
  CHECK_STATUS(nnrt_model_load(ctx, NULL, &keep), NNRT_ERR_INVALID_ARGUMENT, "path");
  CHECK_STATUS(nnrt_model_load(ctx, "", &keep), NNRT_ERR_INVALID_ARGUMENT, "path");
  CHECK_STATUS(nnrt_model_load(ctx, path, NULL), NNRT_ERR_INVALID_ARGUMENT, "out");
  CHECK_STATUS(nnrt_model_save(NULL, path), NNRT_ERR_INVALID_ARGUMENT, "m");
  CHECK_STATUS(nnrt_model_save(m, NULL), NNRT_ERR_INVALID_ARGUMENT, "path");
  CHECK(keep == (nnrt_model *)0x1);

  /* Paths that cannot be read or written: IO, naming the path and the reason. */
  CHECK_STATUS(nnrt_model_load(ctx, "/nonexistent-nnrt-folder/m.safetensors", &keep), NNRT_ERR_IO,
               "/nonexistent-nnrt-folder/m.safetensors");
  CHECK_STATUS(nnrt_model_load(ctx, "/nonexistent-nnrt-folder/m.safetensors", &keep), NNRT_ERR_IO, "No such file");
  CHECK_STATUS(nnrt_model_save(m, "/nonexistent-nnrt-folder/m.safetensors"), NNRT_ERR_IO, "No such file");
  CHECK_STATUS(nnrt_model_load(ctx, folder, &keep), NNRT_ERR_IO, folder);
  CHECK_STATUS(nnrt_model_save(m, folder), NNRT_ERR_IO, folder);
  CHECK(keep == (nnrt_model *)0x1);

  nnrt_array_release(x);
  nnrt_array_release(ya);
  nnrt_array_release(yb);
  nnrt_model_release(loaded);
  nnrt_model_release(m);
}

static void test_damaged_files(void) {
  nnrt_model *m = NULL, *keep = (nnrt_model *)0x1;
  const char *good = scratch(0, "good.safetensors"), *bad = scratch(1, "bad.safetensors");
  FILE *f;

  CHECK_OK(nnrt_model_create(ctx, lenet, &m));
  CHECK_OK(nnrt_model_save(m, good));

  f = fopen(bad, "wb");
  fclose(f);
  CHECK_STATUS(nnrt_model_load(ctx, bad, &keep), NNRT_ERR_CORRUPT, "too short");
  f = fopen(bad, "wb");
  fputs("\x89PNG\r\n\x1a\n this is a picture, not a checkpoint", f);
  fclose(f);
  CHECK_STATUS(nnrt_model_load(ctx, bad, &keep), NNRT_ERR_CORRUPT, "not a safetensors file");
  copy_file(good, bad, 100000);
  CHECK_STATUS(nnrt_model_load(ctx, bad, &keep), NNRT_ERR_CORRUPT, "truncated");
  copy_file(good, bad, 500);
  CHECK_STATUS(nnrt_model_load(ctx, bad, &keep), NNRT_ERR_CORRUPT, bad);
  copy_file(good, bad, -1);
  patch_file(bad, "\"nnrt.format\":\"1\"", "\"nnrt.format\":\"7\"");
  CHECK_STATUS(nnrt_model_load(ctx, bad, &keep), NNRT_ERR_VERSION, "format 7");
  /* A config that no longer builds (here: an unknown activation) is damage too. */
  copy_file(good, bad, -1);
  patch_file(bad, "relu", "relq");
  CHECK_STATUS(nnrt_model_load(ctx, bad, &keep), NNRT_ERR_CORRUPT, "checksum");
  CHECK(keep == (nnrt_model *)0x1);
  nnrt_model_release(m);
}

typedef struct {
  double losses[64];
  int count;
} loss_log;

static int record_loss(const nnrt_progress *p, void *user) {
  loss_log *log = (loss_log *)user;
  if (!p->epoch_end && log->count < 64) log->losses[log->count++] = p->loss;
  return 0;
}

static void test_trainer_resume(void) {
  nnrt_model *ma = NULL, *mb = NULL, *other = NULL, *loaded = NULL;
  nnrt_trainer *ta = NULL, *tb = NULL, *t_other = NULL, *t_sgd = NULL;
  nnrt_array *x[6], *y = NULL, *features, *all_labels;
  nnrt_dataset *data = NULL;
  int64_t xs[2] = {BATCH, 6}, fs[2] = {EXAMPLES, 6};
  double loss, next_a[2], next_b[2], after_failed;
  const char *saved = scratch(0, "train.safetensors"), *model_only = scratch(1, "model.safetensors");
  const char *damaged = scratch(2, "damaged.safetensors"), *at4 = scratch(3, "train4.safetensors");
  loss_log log_a, log_b;
  int i;

  for (i = 0; i < 6; ++i) x[i] = floats(2, xs, BATCH * 6);
  y = labels(BATCH, 3);
  CHECK_OK(nnrt_model_create(ctx, mlp, &ma));
  CHECK_OK(nnrt_trainer_create(ma, adam, &ta));
  for (i = 0; i < 3; ++i) CHECK_OK(nnrt_trainer_step(ta, x[i], y, &loss));
  CHECK_OK(nnrt_trainer_save(ta, saved));
  CHECK_OK(nnrt_trainer_step(ta, x[3], y, &next_a[0]));
  CHECK_OK(nnrt_trainer_save(ta, at4));
  CHECK_OK(nnrt_trainer_step(ta, x[4], y, &next_a[1]));

  /* A fresh trainer on a fresh model, restored: the next losses are the same bits. */
  CHECK_OK(nnrt_model_create(ctx, mlp, &mb));
  CHECK_OK(nnrt_trainer_create(mb, adam_seed99, &tb));
  CHECK_OK(nnrt_trainer_restore(tb, saved));
  CHECK_OK(nnrt_trainer_step(tb, x[3], y, &next_b[0]));
  CHECK_OK(nnrt_trainer_step(tb, x[4], y, &next_b[1]));
  CHECK(isfinite(next_a[0]) && isfinite(next_a[1]) && next_a[0] != next_a[1]);
  CHECK(same_double(next_a[0], next_b[0]));
  CHECK(same_double(next_a[1], next_b[1]));
  CHECK(same_param(ma, mb, "layer0.weight"));
  CHECK(same_param(ma, mb, "layer1.running_mean"));
  CHECK(same_param(ma, mb, "layer3.weight"));

  /* Restoring rolls a trainer that went on back to the saved point. */
  CHECK_OK(nnrt_trainer_restore(ta, saved));
  CHECK_OK(nnrt_trainer_step(ta, x[3], y, &loss));
  CHECK(same_double(loss, next_a[0]));

  /* nnrt_model_load reads a trainer checkpoint too. */
  CHECK_OK(nnrt_model_load(ctx, at4, &loaded));
  CHECK(loaded && same_param(ma, loaded, "layer3.weight"));

  /* Files that do not fit this trainer: INVALID_ARGUMENT saying what differs. */
  CHECK_OK(nnrt_model_create(ctx, mlp_other, &other));
  CHECK_OK(nnrt_trainer_create(other, adam, &t_other));
  CHECK_STATUS(nnrt_trainer_restore(t_other, saved), NNRT_ERR_INVALID_ARGUMENT, "different model config");
  CHECK_STATUS(nnrt_trainer_restore(t_other, saved), NNRT_ERR_INVALID_ARGUMENT, "units");
  CHECK_OK(nnrt_trainer_create(mb, "{\"optimizer\": {\"type\": \"sgd\", \"momentum\": 0.9}}", &t_sgd));
  CHECK_STATUS(nnrt_trainer_restore(t_sgd, saved), NNRT_ERR_INVALID_ARGUMENT, "\"adam\"");
  CHECK_OK(nnrt_model_save(ma, model_only));
  CHECK_STATUS(nnrt_trainer_restore(tb, model_only), NNRT_ERR_INVALID_ARGUMENT, "nnrt_model_save");

  /* Failed restores change nothing: tb goes on as if they had not happened. */
  copy_file(saved, damaged, -1);
  patch_file(damaged, "adam", "adaM");
  CHECK_STATUS(nnrt_trainer_restore(tb, damaged), NNRT_ERR_CORRUPT, "checksum");
  copy_file(saved, damaged, -1);
  patch_file(damaged, "\"nnrt.format\":\"1\"", "\"nnrt.format\":\"7\"");
  CHECK_STATUS(nnrt_trainer_restore(tb, damaged), NNRT_ERR_VERSION, "format 7");
  CHECK_STATUS(nnrt_trainer_restore(tb, "/nonexistent-nnrt-folder/t.safetensors"), NNRT_ERR_IO, "No such file");
  CHECK_STATUS(nnrt_trainer_restore(tb, NULL), NNRT_ERR_INVALID_ARGUMENT, "path");
  CHECK_STATUS(nnrt_trainer_restore(NULL, saved), NNRT_ERR_INVALID_ARGUMENT, "t");
  CHECK_STATUS(nnrt_trainer_save(NULL, saved), NNRT_ERR_INVALID_ARGUMENT, "t");
  CHECK_STATUS(nnrt_trainer_save(tb, "/nonexistent-nnrt-folder/t.safetensors"), NNRT_ERR_IO, "No such file");
  CHECK_OK(nnrt_trainer_step(tb, x[5], y, &after_failed));
  CHECK_OK(nnrt_trainer_step(ta, x[4], y, &loss));
  CHECK_OK(nnrt_trainer_step(ta, x[5], y, &loss));
  CHECK(same_double(loss, after_failed));

  /* fit: an epoch after a restore sees the same shuffled batches and the same losses. */
  features = floats(2, fs, EXAMPLES * 6);
  all_labels = labels(EXAMPLES, 3);
  CHECK_OK(nnrt_dataset_from_arrays(ctx, features, all_labels, &data));
  CHECK_OK(nnrt_trainer_restore(ta, saved));
  CHECK_OK(nnrt_trainer_fit(ta, data, NULL, 1));
  CHECK_OK(nnrt_trainer_save(ta, saved));
  memset(&log_a, 0, sizeof log_a);
  memset(&log_b, 0, sizeof log_b);
  CHECK_OK(nnrt_trainer_set_progress(ta, record_loss, &log_a));
  CHECK_OK(nnrt_trainer_fit(ta, data, NULL, 1));
  CHECK_OK(nnrt_trainer_restore(tb, saved));
  CHECK_OK(nnrt_trainer_set_progress(tb, record_loss, &log_b));
  CHECK_OK(nnrt_trainer_fit(tb, data, NULL, 1));
  CHECK(log_a.count == EXAMPLES / BATCH && log_a.count == log_b.count);
  CHECK(memcmp(log_a.losses, log_b.losses, sizeof log_a.losses) == 0);
  CHECK(isfinite(log_a.losses[0]) && log_a.losses[0] != log_a.losses[1]);

  for (i = 0; i < 6; ++i) nnrt_array_release(x[i]);
  nnrt_array_release(y);
  nnrt_array_release(features);
  nnrt_array_release(all_labels);
  nnrt_dataset_release(data);
  nnrt_trainer_release(ta);
  nnrt_trainer_release(tb);
  nnrt_trainer_release(t_other);
  nnrt_trainer_release(t_sgd);
  nnrt_model_release(loaded);
  nnrt_model_release(ma);
  nnrt_model_release(mb);
  nnrt_model_release(other);
}

/* Early stopping keeps the best parameters and mixed precision a loss scale: both are restored, so
** a resumed fit makes the same steps and ends on the same best model. */
static void test_resume_early_stopping_mixed(void) {
  const char *options =
      "{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.05}, \"batch_size\": 8, \"seed\": 5,"
      " \"precision\": \"mixed_f16\", \"early_stopping\": {\"metric\": \"accuracy\", \"patience\": 10}}";
  nnrt_model *ma = NULL, *mb = NULL;
  nnrt_trainer *ta = NULL, *tb = NULL;
  nnrt_array *features, *all_labels;
  nnrt_dataset *data = NULL;
  int64_t fs[2] = {EXAMPLES, 6};
  const char *saved = scratch(0, "early.safetensors");
  loss_log log_a, log_b;
  char result_a[4096], result_b[4096];
  size_t len;

  features = floats(2, fs, EXAMPLES * 6);
  all_labels = labels(EXAMPLES, 3);
  CHECK_OK(nnrt_dataset_from_arrays(ctx, features, all_labels, &data));
  CHECK_OK(nnrt_model_create(ctx, mlp, &ma));
  CHECK_OK(nnrt_model_create(ctx, mlp, &mb));
  CHECK_OK(nnrt_trainer_create(ma, options, &ta));
  CHECK_OK(nnrt_trainer_create(mb, options, &tb));
  CHECK_OK(nnrt_trainer_fit(ta, data, data, 2));
  CHECK_OK(nnrt_trainer_save(ta, saved));
  memset(&log_a, 0, sizeof log_a);
  memset(&log_b, 0, sizeof log_b);
  CHECK_OK(nnrt_trainer_set_progress(ta, record_loss, &log_a));
  CHECK_OK(nnrt_trainer_fit(ta, data, data, 2));
  CHECK_OK(nnrt_trainer_restore(tb, saved));
  CHECK_OK(nnrt_trainer_set_progress(tb, record_loss, &log_b));
  CHECK_OK(nnrt_trainer_fit(tb, data, data, 2));
  CHECK(log_a.count == 2 * EXAMPLES / BATCH && log_a.count == log_b.count);
  CHECK(memcmp(log_a.losses, log_b.losses, sizeof log_a.losses) == 0);
  CHECK(same_param(ma, mb, "layer0.weight"));
  CHECK(same_param(ma, mb, "layer1.running_var"));
  /* The same history, best epoch and loss scale (the timings aside). */
  CHECK_OK(nnrt_trainer_result(ta, result_a, sizeof result_a, &len));
  CHECK_OK(nnrt_trainer_result(tb, result_b, sizeof result_b, &len));
  CHECK(strstr(result_a, "\"best_epoch\"") != NULL);
  CHECK(strncmp(strstr(result_a, "\"best_epoch\""), strstr(result_b, "\"best_epoch\""), 40) == 0);
  CHECK(strncmp(strstr(result_a, "\"loss_scale\""), strstr(result_b, "\"loss_scale\""), 30) == 0);

  nnrt_array_release(features);
  nnrt_array_release(all_labels);
  nnrt_dataset_release(data);
  nnrt_trainer_release(ta);
  nnrt_trainer_release(tb);
  nnrt_model_release(ma);
  nnrt_model_release(mb);
}

int main(int argc, char **argv) {
  char options[256];
  const char *base = getenv("TMPDIR");
  int i;
  sprintf(folder, "%.40s/nnrt-ckpt-XXXXXX", base && *base && strlen(base) < 40 ? base : "/tmp");
  if (!mkdtemp(folder)) {
    perror("mkdtemp");
    return 1;
  }
  /* {"deterministic": true} plus any options given on the command line, e.g. "backend": "reference". */
  sprintf(options, "{\"deterministic\": true%s%.200s}", argc > 1 ? ", " : "", argc > 1 ? argv[1] : "");
  if (nnrt_context_create(options, &ctx) != NNRT_OK) {
    fprintf(stderr, "context: %s\n", nnrt_last_error());
    return 1;
  }
  test_model_round_trip();
  test_damaged_files();
  test_trainer_resume();
  test_resume_early_stopping_mixed();
  nnrt_context_release(ctx);
  for (i = 0; i < 4; ++i) remove(path_buf[i]);
  {
    const char *names[] = {"lenet.safetensors", "good.safetensors", "bad.safetensors", "train.safetensors",
                           "model.safetensors", "damaged.safetensors", "train4.safetensors", "early.safetensors"};
    for (i = 0; i < 8; ++i) remove(scratch(0, names[i]));
  }
  rmdir(folder);
  return c_test_finish("test_checkpoint");
}
