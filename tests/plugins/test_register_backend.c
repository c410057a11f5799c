/* nnrt_register_backend, as a static build uses it: the fake GPU backend's source is linked into
** this program and registered by its entry point. Entry points that return NULL, a table of
** another ABI, a table missing a required function, or a name already taken are refused, each
** with its status; the good one is used by a context afterwards. */
#include <stdlib.h>

#include <nnrt/nnrt_backend.h>

#include "../c/c_test.h"

/* The fake GPU plugin's entry point (fake_gpu_plugin.c, compiled into this program). */
const nnrt_backend_v1 *nnrt_backend_entry(uint32_t host_abi, const nnrt_host_api *host);

static nnrt_backend_v1 altered;

static const nnrt_backend_v1 *refusing_entry(uint32_t host_abi, const nnrt_host_api *host) {
  (void)host_abi;
  host->set_error("refusing: this device is switched off");
  return NULL;
}

/* The fake GPU's table under another name, with a newer ABI major. */
static const nnrt_backend_v1 *newer_abi_entry(uint32_t host_abi, const nnrt_host_api *host) {
  altered = *nnrt_backend_entry(host_abi, host);
  altered.name = "newerabi";
  altered.abi_major = NNRT_BACKEND_ABI_MAJOR + 1;
  return &altered;
}

/* The fake GPU's table under another name, without its required op_run. */
static const nnrt_backend_v1 *incomplete_entry(uint32_t host_abi, const nnrt_host_api *host) {
  altered = *nnrt_backend_entry(host_abi, host);
  altered.name = "incomplete";
  altered.op_run = NULL;
  return &altered;
}

static int describe_has(nnrt_context *ctx, const char *text) {
  char buf[8192];
  size_t len = 0;
  if (nnrt_context_describe(ctx, buf, sizeof buf, &len) != NNRT_OK) return 0;
  return strstr(buf, text) != NULL;
}

int main(void) {
  nnrt_context *ctx = NULL;
  setenv("NNRT_FAKEGPU_DEVICES", "1", 1);

  CHECK_STATUS(nnrt_register_backend(NULL), NNRT_ERR_INVALID_ARGUMENT, "entry is NULL");
  CHECK_STATUS(nnrt_register_backend(refusing_entry), NNRT_ERR_BACKEND, "this device is switched off");
  CHECK_STATUS(nnrt_register_backend(newer_abi_entry), NNRT_ERR_VERSION, "built for backend ABI");
  CHECK_STATUS(nnrt_register_backend(incomplete_entry), NNRT_ERR_INVALID_ARGUMENT, "lacks a required function");

  /* None of the refused ones is usable. */
  CHECK_STATUS(nnrt_context_create("{\"backend\": \"newerabi\"}", &ctx), NNRT_ERR_INVALID_ARGUMENT, "newerabi");
  CHECK_STATUS(nnrt_context_create("{\"backend\": \"incomplete\"}", &ctx), NNRT_ERR_INVALID_ARGUMENT, "incomplete");

  /* The fake GPU, registered, is selected by name and by priority; its ops run. */
  CHECK_OK(nnrt_register_backend(nnrt_backend_entry));
  CHECK_OK(nnrt_context_create("{\"backend\": \"fakegpu\", \"strict\": true}", &ctx));
  CHECK(describe_has(ctx, "\"backend\":\"fakegpu\""));
  CHECK(describe_has(ctx, "\"name\":\"fakegpu\""));
  {
    int64_t shape[1] = {3};
    float v[3] = {1, 2, 3}, out[3] = {0, 0, 0};
    nnrt_array *a = NULL, *r = NULL;
    const nnrt_array *in[2];
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, shape, v, sizeof v, &a));
    in[0] = a;
    in[1] = a;
    CHECK_OK(nnrt_op(ctx, "add", in, 2, NULL, &r, 1));
    CHECK_OK(nnrt_array_to_host(r, out, sizeof out));
    CHECK(out[0] == 2 && out[1] == 4 && out[2] == 6);
    nnrt_array_release(a);
    nnrt_array_release(r);
  }
  nnrt_context_release(ctx);
  CHECK_OK(nnrt_context_create(NULL, &ctx));
  CHECK(describe_has(ctx, "\"backend\":\"fakegpu\""));
  nnrt_context_release(ctx);

  /* A name is registered once. */
  CHECK_STATUS(nnrt_register_backend(nnrt_backend_entry), NNRT_ERR_INVALID_ARGUMENT, "already registered");
  return c_test_finish("test_register_backend");
}
