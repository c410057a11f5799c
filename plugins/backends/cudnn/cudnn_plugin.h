// The cuDNN backend as the plugin kit (nnrt/plugin_kit.hpp) sees it, shared by the plugin file the
// host loads (cudnn_loader.cpp) and the backend it loads (cudnn_backend.cpp).
#pragma once

#include <cstdint>

#include "nnrt/nnrt_backend.h"
#include "nnrt/plugin_kit.hpp"

namespace nnrt::cudnn {

struct Cudnn {
  static constexpr const char *name = "cudnn";
  using Host = nnrt_host_api;
  // cuBLASLt takes matrix dims and batch counts as int32, and cuDNN's engines index a dim in 32
  // bits. Element counts are not limited: the backend's own kernels index in 64 bits, and a cuDNN
  // engine that cannot index a tensor refuses its plan (NOT_SUPPORTED), which op_create reports.
  static constexpr int64_t max_dim = INT32_MAX;
  static constexpr int64_t max_elements = 0;
};

// The host functions the backend calls besides set_error.
#define NNRT_CUDNN_HOST_CALLS {NNRT_HOST_FUNCTION(nnrt_host_api, log)}

}  // namespace nnrt::cudnn
