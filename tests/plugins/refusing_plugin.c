/* A backend whose entry point refuses the host, as a plugin built for a newer host would. */
#include <stdio.h>

#include <nnrt/nnrt_backend.h>

__attribute__((visibility("default"))) const nnrt_backend_v1 *nnrt_backend_entry(uint32_t host_abi,
                                                                                 const nnrt_host_api *host) {
  char message[128];
  snprintf(message, sizeof message, "built for backend ABI 7, host has %u", (unsigned)host_abi);
  host->set_error(message);
  return NULL;
}
