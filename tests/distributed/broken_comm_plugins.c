/* Two broken communicator plugins, built twice from this file: WRONG_ABI returns a table of ABI
** major 99, otherwise the entry point refuses with a reason. The host must list both as not
** loaded, with that reason, and never call them. */
#include <nnrt/nnrt_comm.h>

__attribute__((visibility("default"))) const nnrt_comm_v1 *nnrt_comm_entry(uint32_t host_abi,
                                                                          const nnrt_comm_host_api *host) {
  (void)host_abi;
#ifdef WRONG_ABI
  static nnrt_comm_v1 table;
  (void)host;
  table.struct_size = sizeof table;
  table.abi_major = 99;
  table.name = "wrongabi";
  return &table;
#else
  host->set_error("refusing: the test engine is switched off");
  return 0;
#endif
}
