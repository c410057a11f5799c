/* Broken plugins never break the host: each is listed with the reason it did not load, and the
** context still works. argv[1] is the folder holding the built test plugins; they are copied into
** a scratch folder (so that the missing-dependency plugin really misses its dependency) which
** NNRT_BACKEND_PATH then names. */
#include <stdlib.h>
#include <unistd.h>

#include "../c/c_test.h"

static char dir[] = "/tmp/nnrt-plugins-XXXXXX";

static void copy_file(const char *from_dir, const char *name, const char *to_name) {
  char src[1024], dst[1024], buf[65536];
  FILE *in, *out;
  size_t n;
  snprintf(src, sizeof src, "%s/%s", from_dir, name);
  snprintf(dst, sizeof dst, "%s/%s", dir, to_name);
  in = fopen(src, "rb");
  out = fopen(dst, "wb");
  if (!in || !out) {
    fprintf(stderr, "cannot copy %s to %s\n", src, dst);
    exit(2);
  }
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  fclose(out);
}

static void write_file(const char *name, const char *text) {
  char path[1024];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "wb");
  fputs(text, f);
  fclose(f);
}

/* The JSON object of one plugin in the description (crudely: from its name to the next '}'). */
static const char *plugin_entry(const char *describe, const char *name, char *out, size_t cap) {
  char key[128];
  const char *p, *end;
  snprintf(key, sizeof key, "\"name\":\"%s\"", name);
  p = strstr(describe, key);
  if (!p) return NULL;
  while (p > describe && *p != '{') --p;
  end = strchr(p, '}');
  if (!end || (size_t)(end - p) >= cap) return NULL;
  memcpy(out, p, (size_t)(end - p));
  out[end - p] = 0;
  return out;
}

static void expect_refused(const char *describe, const char *name, const char *reason) {
  char entry[2048];
  if (!C_TEST_RECORD(plugin_entry(describe, name, entry, sizeof entry) != NULL)) {
    fprintf(stderr, "plugin %s is not listed in the description\n", name);
    return;
  }
  CHECK(strstr(entry, "\"loaded\":false") != NULL);
  if (!C_TEST_RECORD(strstr(entry, reason) != NULL)) {
    fprintf(stderr, "plugin %s: reason does not mention \"%s\": %s\n", name, reason, entry);
  }
}

int main(int argc, char **argv) {
  nnrt_context *ctx = NULL;
  char *describe;
  size_t len;
  if (argc < 2 || !mkdtemp(dir)) return 2;
  copy_file(argv[1], "libnnrt-test-noentry.so", "libnnrt-backend-noentry.so");
  copy_file(argv[1], "libnnrt-test-wrongabi.so", "libnnrt-backend-wrongabi.so");
  copy_file(argv[1], "libnnrt-test-refusing.so", "libnnrt-backend-refusing.so");
  copy_file(argv[1], "libnnrt-test-missingdep.so", "libnnrt-backend-missingdep.so");
  copy_file(argv[1], "libnnrt-backend-fakegpu.so", "libnnrt-backend-fakegpu.so");
  write_file("libnnrt-backend-garbage.so", "this is not a shared library\n");
  setenv("NNRT_BACKEND_PATH", dir, 1);
  unsetenv("NNRT_FAKEGPU_DEVICES");

  CHECK_OK(nnrt_context_create(NULL, &ctx));
  CHECK_OK(nnrt_context_describe(ctx, NULL, 0, &len));
  describe = (char *)malloc(len + 1);
  CHECK_OK(nnrt_context_describe(ctx, describe, len + 1, &len));

  expect_refused(describe, "garbage", "libnnrt-backend-garbage.so");
  expect_refused(describe, "noentry", "does not export nnrt_backend_entry");
  expect_refused(describe, "wrongabi", "backend ABI 99");
  expect_refused(describe, "refusing", "built for backend ABI 7, host has 1");
  expect_refused(describe, "missingdep", "libnnrt-test-dep.so");
  {
    /* The fake GPU loads, but finds no device: listed as loaded, not usable, with its reason. */
    char entry[2048];
    CHECK(plugin_entry(describe, "fakegpu", entry, sizeof entry) != NULL);
    CHECK(strstr(entry, "\"loaded\":true") != NULL);
    CHECK(strstr(entry, "\"usable\":false") != NULL);
    CHECK(strstr(entry, "NNRT_FAKEGPU_DEVICES") != NULL);
  }
  /* The default context still works, on a CPU backend. */
  CHECK(strstr(describe, "\"backend\":\"fakegpu\"") == NULL);
  {
    int64_t shape[1] = {3};
    float v[3] = {1, 2, 3}, out[3];
    nnrt_array *a = NULL, *s = NULL;
    const nnrt_array *in[2];
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, shape, v, sizeof v, &a));
    in[0] = a;
    in[1] = a;
    CHECK_OK(nnrt_op(ctx, "add", in, 2, NULL, &s, 1));
    CHECK_OK(nnrt_array_to_host(s, out, sizeof out));
    CHECK(out[0] == 2 && out[1] == 4 && out[2] == 6);
    nnrt_array_release(s);
    nnrt_array_release(a);
  }
  free(describe);
  nnrt_context_release(ctx);

  /* Asking for a broken or device-less backend by name says why. */
  CHECK_STATUS(nnrt_context_create("{\"backend\": \"noentry\"}", &ctx), NNRT_ERR_BACKEND, "nnrt_backend_entry");
  CHECK_STATUS(nnrt_context_create("{\"backend\": \"missingdep\"}", &ctx), NNRT_ERR_BACKEND, "libnnrt-test-dep.so");
  CHECK_STATUS(nnrt_context_create("{\"backend\": \"fakegpu\"}", &ctx), NNRT_ERR_NO_DEVICE, "no fake GPU");

  {
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  }
  return c_test_finish("test_plugins");
}
