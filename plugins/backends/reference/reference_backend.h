// The built-in reference backend: portable C++ for every op of the op set, forward and backward,
// on host memory. It is the oracle the other backends are checked against, the fallback for ops a
// plugin does not support, and what trains networks when no plugin is present.
#pragma once

#include <stdint.h>

#include "nnrt/nnrt_backend.h"

namespace nnrt::reference {

// The backend's function table, as a plugin's nnrt_backend_entry returns it; NULL (after
// host->set_error) when host_abi is not NNRT_BACKEND_ABI_MAJOR or host lacks a service.
const nnrt_backend_v1 *backend_entry(uint32_t host_abi, const nnrt_host_api *host);

}  // namespace nnrt::reference
