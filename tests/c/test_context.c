/* Contexts: options, describe, bad input. */
#include <stdlib.h>

#include "c_test.h"

static void check_bad_options(const char *json, const char *mentions) {
  nnrt_context *ctx = (nnrt_context *)0x1;
  CHECK_STATUS(nnrt_context_create(json, &ctx), NNRT_ERR_INVALID_ARGUMENT, mentions);
  CHECK(ctx == (nnrt_context *)0x1); /* out untouched on failure */
}

int main(void) {
  nnrt_context *ctx = NULL;
  char small[8];
  char *buf;
  size_t len = 0, len2 = 0;

  CHECK_OK(nnrt_context_create(NULL, &ctx));
  nnrt_context_release(ctx);
  CHECK_OK(nnrt_context_create("", &ctx));
  nnrt_context_release(ctx);
  CHECK_OK(nnrt_context_create("{}", &ctx));
  nnrt_context_release(ctx);
  CHECK_OK(nnrt_context_create(
      "{\"backend\": \"reference\", \"device\": 0, \"strict\": true, \"threads\": 3, \"deterministic\": true,"
      " \"seed\": 42, \"default_dtype\": \"bf16\", \"cache\": {\"max_cached_bytes\": 1048576, \"max_block_bytes\": 4096}}",
      &ctx));

  /* describe: ask for the size, then read it whole, then truncated. */
  CHECK_OK(nnrt_context_describe(ctx, NULL, 0, &len));
  CHECK(len > 50);
  buf = (char *)malloc(len + 1);
  CHECK_OK(nnrt_context_describe(ctx, buf, len + 1, &len2));
  CHECK(len2 == len);
  CHECK(strlen(buf) == len);
  CHECK(strstr(buf, "\"backend\":\"reference\"") != NULL);
  CHECK(strstr(buf, "\"threads\":3") != NULL);
  CHECK(strstr(buf, "\"deterministic\":true") != NULL);
  CHECK(strstr(buf, "\"default_dtype\":\"bf16\"") != NULL);
  CHECK(strstr(buf, "\"max_cached_bytes\":1048576") != NULL);
  CHECK(strstr(buf, "\"max_block_bytes\":4096") != NULL);
  {
    const char *keys[] = {"\"version\"", "\"abi\"", "\"device\"", "\"backends\"", "\"plugins\"", "\"devices\"",
                          "\"cache\"", "\"allocated_bytes\"", "\"cached_bytes\"", "\"hits\"", "\"misses\"",
                          "\"peak_bytes\"", "\"selected\":true", "\"kind\":\"cpu\""};
    size_t i;
    for (i = 0; i < sizeof keys / sizeof keys[0]; ++i) {
      if (!strstr(buf, keys[i])) fprintf(stderr, "describe lacks %s\n", keys[i]);
      CHECK(strstr(buf, keys[i]) != NULL);
    }
  }
  CHECK_OK(nnrt_context_describe(ctx, small, sizeof small, &len2));
  CHECK(len2 == len);
  CHECK(strlen(small) == sizeof small - 1);
  CHECK(strncmp(small, buf, sizeof small - 1) == 0);
  free(buf);

  CHECK_STATUS(nnrt_context_describe(NULL, small, sizeof small, &len), NNRT_ERR_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_STATUS(nnrt_context_describe(ctx, small, sizeof small, NULL), NNRT_ERR_INVALID_ARGUMENT, "len");
  CHECK_STATUS(nnrt_context_describe(ctx, NULL, 10, &len), NNRT_ERR_INVALID_ARGUMENT, "buf is NULL");
  {
    /* A handle of another type is refused. */
    nnrt_array *arr = NULL;
    int64_t shape[1] = {2};
    CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 1, shape, &arr));
    CHECK_STATUS(nnrt_context_describe((nnrt_context *)arr, small, sizeof small, &len), NNRT_ERR_INVALID_ARGUMENT,
                 "not a live nnrt_context");
    nnrt_array_release(arr);
  }
  nnrt_context_release(ctx);

  /* Bad options: each names the key. */
  CHECK_STATUS(nnrt_context_create(NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "out is NULL");
  check_bad_options("{", "not valid JSON");
  check_bad_options("[1, 2]", "expected a JSON object");
  check_bad_options("{\"bogus\": 1}", "unknown key 'options.bogus'");
  check_bad_options("{\"threads\": \"four\"}", "options.threads");
  check_bad_options("{\"threads\": -2}", "options.threads");
  check_bad_options("{\"threads\": 1.5}", "options.threads");
  check_bad_options("{\"strict\": 1}", "options.strict");
  check_bad_options("{\"deterministic\": \"yes\"}", "options.deterministic");
  check_bad_options("{\"seed\": -1}", "options.seed");
  check_bad_options("{\"device\": -1}", "options.device");
  check_bad_options("{\"default_dtype\": \"f8\"}", "options.default_dtype");
  check_bad_options("{\"default_dtype\": 32}", "options.default_dtype");
  check_bad_options("{\"cache\": 5}", "options.cache");
  check_bad_options("{\"cache\": {\"max_cached_bytes\": -5}}", "options.cache.max_cached_bytes");
  check_bad_options("{\"cache\": {\"size\": 5}}", "unknown key 'options.cache.size'");
  check_bad_options("{\"backend\": 3}", "options.backend");
  check_bad_options("{\"backend\": \"quantum\"}", "unknown backend 'quantum'");

  /* A device index that does not exist. */
  CHECK_STATUS(nnrt_context_create("{\"backend\": \"reference\", \"device\": 5}", &ctx), NNRT_ERR_NO_DEVICE,
               "device 5 does not exist");

  /* Threads from the environment. */
  setenv("NNRT_NUM_THREADS", "2", 1);
  CHECK_OK(nnrt_context_create("{\"backend\": \"reference\"}", &ctx));
  CHECK_OK(nnrt_context_describe(ctx, NULL, 0, &len));
  buf = (char *)malloc(len + 1);
  CHECK_OK(nnrt_context_describe(ctx, buf, len + 1, &len));
  CHECK(strstr(buf, "\"threads\":2") != NULL);
  free(buf);
  nnrt_context_release(ctx);
  unsetenv("NNRT_NUM_THREADS");

  nnrt_context_release(NULL);
  return c_test_finish("test_context");
}
