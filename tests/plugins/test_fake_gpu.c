/* A GPU backend with device memory, loaded from NNRT_BACKEND_PATH (set by meson), with
** NNRT_FAKEGPU_DEVICES=1: it wins by the default GPU priority, loses when the CPU priority is higher,
** and ops it does not support reach the reference backend through staging copies. */
#include <stdlib.h>

#include "../c/c_test.h"

/* A context made with `options` describes its cache with both texts in it. */
static void cache_limits_are(const char *options, const char *one, const char *other) {
  nnrt_context *ctx = NULL;
  char *d;
  CHECK_OK(nnrt_context_create(options, &ctx));
  d = c_test_describe(ctx);
  CHECK(strstr(d, one) != NULL);
  CHECK(strstr(d, other) != NULL);
  free(d);
  nnrt_context_release(ctx);
}

int main(void) {
  nnrt_context *ctx = NULL;
  char *d;
  setenv("NNRT_FAKEGPU_DEVICES", "1", 1);

  /* Default priorities: GPU 100 > CPU 0. */
  CHECK_OK(nnrt_context_create(NULL, &ctx));
  d = c_test_describe(ctx);
  CHECK(strstr(d, "\"backend\":\"fakegpu\"") != NULL);
  CHECK(strstr(d, "Fake GPU 0") != NULL);
  CHECK(strstr(d, "\"kind\":\"gpu\"") != NULL);
  free(d);
  nnrt_context_release(ctx);

  /* ND4J-style switch: a higher CPU priority selects a CPU backend. */
  setenv("NNRT_BACKEND_PRIORITY_CPU", "200", 1);
  CHECK_OK(nnrt_context_create(NULL, &ctx));
  d = c_test_describe(ctx);
  CHECK(strstr(d, "\"backend\":\"fakegpu\"") == NULL);
  free(d);
  nnrt_context_release(ctx);
  unsetenv("NNRT_BACKEND_PRIORITY_CPU");
  setenv("NNRT_BACKEND_PRIORITY_GPU", "-5", 1);
  CHECK_OK(nnrt_context_create(NULL, &ctx));
  d = c_test_describe(ctx);
  CHECK(strstr(d, "\"backend\":\"fakegpu\"") == NULL);
  free(d);
  nnrt_context_release(ctx);
  unsetenv("NNRT_BACKEND_PRIORITY_GPU");

  CHECK_STATUS(nnrt_context_create("{\"backend\": \"fakegpu\", \"device\": 1}", &ctx), NNRT_ERR_NO_DEVICE,
               "device 1 does not exist");

  /* The device's cache keeps every freed block (its limits are the device's 1 GiB of memory) unless
  ** limits are given; then it keeps the given ones, and the host's defaults for the other. A hard
  ** limit alone leaves the keep-everything defaults. */
  cache_limits_are("{\"backend\": \"fakegpu\"}", "\"max_cached_bytes\":1073741824", "\"max_block_bytes\":1073741824");
  cache_limits_are("{\"backend\": \"fakegpu\", \"cache\": {\"max_cached_bytes\": 4096}}", "\"max_cached_bytes\":4096",
                   "\"max_block_bytes\":268435456");
  cache_limits_are("{\"backend\": \"fakegpu\", \"cache\": {\"max_total_bytes\": 65536}}",
                   "\"max_block_bytes\":1073741824", "\"max_total_bytes\":65536");

  /* Strict: an op the fake GPU cannot run is an error instead of a fallback. */
  CHECK_OK(nnrt_context_create("{\"backend\": \"fakegpu\", \"strict\": true}", &ctx));
  {
    int64_t shape[2] = {2, 2};
    float v[4] = {1, 2, 3, 4}, out[4];
    nnrt_array *a = NULL, *r = NULL;
    const nnrt_array *in[2];
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape, v, sizeof v, &a));
    in[0] = a;
    in[1] = a;
    CHECK_OK(nnrt_op(ctx, "add", in, 2, NULL, &r, 1)); /* the fake GPU runs this itself */
    CHECK_OK(nnrt_array_to_host(r, out, sizeof out));
    CHECK(out[0] == 2 && out[3] == 8);
    nnrt_array_release(r);
    CHECK_STATUS(nnrt_op(ctx, "matmul", in, 2, NULL, &r, 1), NNRT_ERR_UNSUPPORTED, "strict");
    CHECK_STATUS(nnrt_op(ctx, "matmul", in, 2, NULL, &r, 1), NNRT_ERR_UNSUPPORTED, "fakegpu");
    nnrt_array_release(a);
  }
  nnrt_context_release(ctx);
  return c_test_finish("test_fake_gpu");
}
