// What every communicator plugin's entry point checks first (nnrt_comm.h): a host API large enough
// to call, and the same ABI major; otherwise the reason goes to host->set_error.
#pragma once

#include <string>

#include "nnrt/nnrt_comm.h"

namespace nnrt::comm {

inline bool host_accepted(uint32_t host_abi, const nnrt_comm_host_api *h) {
  if (!h || h->struct_size < offsetof(nnrt_comm_host_api, set_error) + sizeof h->set_error) return false;
  if (host_abi == NNRT_COMM_ABI_MAJOR) return true;
  std::string m = "built for communicator ABI " + std::to_string(NNRT_COMM_ABI_MAJOR) + ", host has " +
                  std::to_string(host_abi);
  h->set_error(m.c_str());
  return false;
}

}  // namespace nnrt::comm
