// Version, errors, logging and the string convention: the C API's small common entry points.
#include <cstring>

#include "api/handles.h"
#include "core/dtype.h"
#include "core/log.h"
#include "core/version.h"

namespace nnrt::api {

void write_string(const std::string &s, char *buf, size_t cap, size_t *len) {
  require(len != nullptr, "len is NULL; expected a pointer to receive the length");
  require(buf != nullptr || cap == 0, "buf is NULL but cap is not 0");
  if (cap > 0) {
    size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
    std::memcpy(buf, s.data(), n);
    buf[n] = 0;
  }
  *len = s.size();
}

void log_bad_release(const char *function, const char *type) {
  log::warn(std::string(function) + ": not a live " + type + "; ignored");
}

}  // namespace nnrt::api

extern "C" {

uint32_t nnrt_abi_version(void) { return NNRT_ABI_VERSION; }

const char *nnrt_version_string(void) { return nnrt::kVersionString; }

const char *nnrt_status_name(nnrt_status s) { return nnrt::status_name(s); }

const char *nnrt_last_error(void) { return nnrt::last_error(); }

void nnrt_set_log_callback(nnrt_log_fn fn, void *user, int min_level) { nnrt::log::set_callback(fn, user, min_level); }

size_t nnrt_dtype_size(nnrt_dtype t) { return nnrt::dtype_size(t); }

}  // extern "C"
