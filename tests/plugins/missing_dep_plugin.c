/* A backend linked against a library that the test removes: dlopen must fail with dlerror()'s text
** naming the missing library. */
#include <nnrt/nnrt_backend.h>

int nnrt_test_helper_value(void);

__attribute__((visibility("default"))) const nnrt_backend_v1 *nnrt_backend_entry(uint32_t host_abi,
                                                                                 const nnrt_host_api *host) {
  (void)host_abi;
  (void)host;
  return nnrt_test_helper_value() ? (const nnrt_backend_v1 *)0 : (const nnrt_backend_v1 *)0;
}
