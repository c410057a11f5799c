#include "core/error.h"

#include <cstddef>

namespace nnrt {

namespace {
thread_local std::string last_error_message;
}

void set_last_error(const std::string &message) { last_error_message = message; }

const char *last_error() { return last_error_message.c_str(); }

const char *status_name(nnrt_status status) {
  switch (status) {
    case NNRT_OK: return "NNRT_OK";
    case NNRT_ERR_INVALID_ARGUMENT: return "NNRT_ERR_INVALID_ARGUMENT";
    case NNRT_ERR_OUT_OF_MEMORY: return "NNRT_ERR_OUT_OF_MEMORY";
    case NNRT_ERR_SHAPE: return "NNRT_ERR_SHAPE";
    case NNRT_ERR_DTYPE: return "NNRT_ERR_DTYPE";
    case NNRT_ERR_UNSUPPORTED: return "NNRT_ERR_UNSUPPORTED";
    case NNRT_ERR_BACKEND: return "NNRT_ERR_BACKEND";
    case NNRT_ERR_NO_DEVICE: return "NNRT_ERR_NO_DEVICE";
    case NNRT_ERR_IO: return "NNRT_ERR_IO";
    case NNRT_ERR_CORRUPT: return "NNRT_ERR_CORRUPT";
    case NNRT_ERR_VERSION: return "NNRT_ERR_VERSION";
    case NNRT_ERR_CANCELLED: return "NNRT_ERR_CANCELLED";
    case NNRT_ERR_INTERNAL: return "NNRT_ERR_INTERNAL";
    case NNRT_ERR_DEADLINE_EXCEEDED: return "NNRT_ERR_DEADLINE_EXCEEDED";
    default: break;
  }
  return "NNRT_ERR_UNKNOWN";
}

}  // namespace nnrt
