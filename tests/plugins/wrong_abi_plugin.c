/* A backend built for another ABI major: its table says abi_major 99. The host must refuse it. */
#include <nnrt/nnrt_backend.h>

static int32_t probe(int32_t *count, char *reason, size_t cap) {
  (void)reason;
  (void)cap;
  *count = 1;
  return 50;
}

static nnrt_backend_v1 table;

__attribute__((visibility("default"))) const nnrt_backend_v1 *nnrt_backend_entry(uint32_t host_abi,
                                                                                 const nnrt_host_api *host) {
  (void)host_abi;
  (void)host;
  table.struct_size = sizeof table;
  table.abi_major = 99;
  table.name = "wrongabi";
  table.kind = NNRT_DEVICE_CPU;
  table.probe = probe;
  return &table;
}
