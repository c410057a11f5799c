/* What the plugin kit (nnrt/plugin_kit.hpp) does for every real backend plugin, checked through
** the plugin's own table, loaded here without libnnrt: each path given is a backend plugin file.
**   - entry checks: a host of another ABI major, and a host that lacks a function the plugin calls
**     (log), are refused with a message that says which;
**   - size limits: the table declares its largest dim (nnrt_backend_v1::max_dim), and an op beyond
**     it never reaches the backend's code: supports() answers 0 and op_create() returns
**     NNRT_ERR_UNSUPPORTED naming the dim and the limit. The op is the convolution whose output
**     height 2^31 made oneDNN divide by zero in its primitive creation, called from supports();
**   - the barrier: a table function given NULL returns a status with a message, and the process
**     goes on. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <nnrt/nnrt_backend.h>

#include "../c/c_test.h"

static char last_message[1024];

static void host_log(int level, const char *message) {
  (void)level;
  (void)message;
}
static void host_set_error(const char *message) { snprintf(last_message, sizeof last_message, "%s", message); }
static void host_parallel_for(nnrt_host_pool *pool, int64_t n, int64_t grain,
                              void (*fn)(int64_t, int64_t, void *), void *user) {
  (void)pool;
  (void)grain;
  if (n > 0) fn(0, n, user);
}
static int32_t host_pool_threads(nnrt_host_pool *pool) {
  (void)pool;
  return 1;
}

static nnrt_host_api full_host(void) {
  nnrt_host_api h;
  memset(&h, 0, sizeof h);
  h.struct_size = sizeof h;
  h.abi_major = NNRT_BACKEND_ABI_MAJOR;
  h.log = host_log;
  h.set_error = host_set_error;
  h.parallel_for = host_parallel_for;
  h.pool_threads = host_pool_threads;
  return h;
}

/* Expects the entry point to refuse `host` (offered as ABI `abi`) with a message holding `text`. */
static void expect_refused(nnrt_backend_entry_fn entry, uint32_t abi, const nnrt_host_api *host, const char *text) {
  last_message[0] = 0;
  CHECK(entry(abi, host) == NULL);
  if (!strstr(last_message, text)) fprintf(stderr, "  refusal \"%s\" lacks \"%s\"\n", last_message, text);
  CHECK(strstr(last_message, text) != NULL);
}

static void set_tensor(nnrt_tensor_desc *t, int64_t n, int64_t c, int64_t h, int64_t w) {
  t->struct_size = sizeof *t;
  t->dtype = NNRT_DTYPE_F32;
  t->ndim = 4;
  t->dims[0] = n;
  t->dims[1] = c;
  t->dims[2] = h;
  t->dims[3] = w;
  t->strides[3] = 1;
  t->strides[2] = w;
  t->strides[1] = w * h;
  t->strides[0] = w * h * c;
}

static void check_plugin(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  nnrt_backend_entry_fn entry;
  nnrt_host_api host = full_host(), no_log;
  const nnrt_backend_v1 *t;
  if (!lib) fprintf(stderr, "  %s: %s\n", path, dlerror());
  CHECK(lib != NULL);
  if (!lib) return;
  *(void **)&entry = dlsym(lib, "nnrt_backend_entry");
  CHECK(entry != NULL);
  if (!entry) return;

  /* Entry checks. */
  expect_refused(entry, NNRT_BACKEND_ABI_MAJOR + 1, &host, "built for backend ABI 1, the host has backend ABI 2");
  no_log = host;
  no_log.log = NULL;
  expect_refused(entry, NNRT_BACKEND_ABI_MAJOR, &no_log, "the host API lacks log");

  t = entry(NNRT_BACKEND_ABI_MAJOR, &host);
  if (!t) fprintf(stderr, "  %s: %s\n", path, last_message);
  CHECK(t != NULL);
  if (!t) return;
  /* Every plugin declares its limits. */
  CHECK(NNRT_HAS_MEMBER(t, nnrt_backend_v1, max_elements));
  CHECK(t->max_dim > 0 && t->max_dim <= 2147483647);
  printf("  %s: %s, largest dim %lld, largest tensor %lld elements\n", path, t->name, (long long)t->max_dim,
         (long long)t->max_elements);
  {
    int32_t devices = 0;
    char reason[256] = "";
    nnrt_device_config config;
    nnrt_backend_instance *instance = NULL;
    nnrt_backend_op *op = NULL;
    nnrt_op_desc desc;
    size_t workspace = 0;
    nnrt_status s;
    if (t->probe(&devices, reason, sizeof reason) <= 0 || devices < 1) {
      printf("  %s: no device here (%s): the op checks need one\n", path, reason);
      return;
    }
    memset(&config, 0, sizeof config);
    config.struct_size = sizeof config;
    config.threads = 1;
    CHECK(t->open(&config, &instance) == NNRT_OK);
    if (!instance) return;
    /* x [1,1,4,4] * w [1,1,3,3] with 1073741823 rows of padding above and below: y [1,1,2^31,2]. */
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    desc.kind = NNRT_OP_CONV2D;
    desc.n_inputs = 2;
    desc.n_outputs = 1;
    set_tensor(&desc.inputs[0], 1, 1, 4, 4);
    set_tensor(&desc.inputs[1], 1, 1, 3, 3);
    set_tensor(&desc.outputs[0], 1, 1, 2147483648ll, 2);
    desc.attrs.groups = 1;
    desc.attrs.stride[0] = desc.attrs.stride[1] = 1;
    desc.attrs.dilation[0] = desc.attrs.dilation[1] = 1;
    desc.attrs.pad[0] = desc.attrs.pad[2] = 1073741823;
    CHECK(t->supports(instance, &desc) == 0);
    last_message[0] = 0;
    s = t->op_create(instance, &desc, &op, &workspace);
    CHECK(s == NNRT_ERR_UNSUPPORTED && op == NULL);
    if (!strstr(last_message, "2147483648") || !strstr(last_message, "largest dim"))
      fprintf(stderr, "  op_create's message \"%s\" names neither the dim nor the limit\n", last_message);
    CHECK(strstr(last_message, "2147483648") && strstr(last_message, "largest dim"));
    /* The same op within the limits (no padding, y [1,1,2,2]) is the backend's to answer. */
    desc.attrs.pad[0] = desc.attrs.pad[2] = 0;
    set_tensor(&desc.outputs[0], 1, 1, 2, 2);
    CHECK(t->supports(instance, &desc) == 1);
    /* The barrier: NULL arguments give a status and a message, never a crash. */
    last_message[0] = 0;
    CHECK(t->op_create(instance, NULL, &op, &workspace) == NNRT_ERR_INVALID_ARGUMENT && last_message[0]);
    CHECK(t->supports(instance, NULL) == 0);
    t->close(instance);
  }
}

int main(int argc, char **argv) {
  int i;
  if (argc < 2) {
    fprintf(stderr, "usage: test_plugin_kit PLUGIN.so...\n");
    return 2;
  }
  for (i = 1; i < argc; ++i) check_plugin(argv[i]);
  return c_test_finish("test_plugin_kit");
}
