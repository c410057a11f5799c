// The nnrt_host_api given to every backend: logging, error messages, the context's thread pool.
#include <string>

#include "backend/registry.h"
#include "core/log.h"
#include "core/thread_pool.h"

namespace nnrt::backend {

namespace {

thread_local std::string backend_error;

void host_log(int level, const char *message) { log::message(level, message ? message : ""); }

void host_set_error(const char *message) { backend_error = message ? message : ""; }

void host_parallel_for(void *pool, int64_t n, int64_t grain, void (*fn)(int64_t, int64_t, void *),
                       void *user) {
  if (pool) {
    static_cast<ThreadPool *>(pool)->parallel_for(n, grain, fn, user);
  } else if (n > 0) {
    fn(0, n, user);
  }
}

int32_t host_pool_threads(void *pool) { return pool ? static_cast<ThreadPool *>(pool)->threads() : 1; }

const nnrt_host_api the_host_api = {
    sizeof(nnrt_host_api), NNRT_BACKEND_ABI_MAJOR, host_log, host_set_error, host_parallel_for,
    host_pool_threads,
};

}  // namespace

const nnrt_host_api *host_api() { return &the_host_api; }

std::string take_backend_error() {
  std::string e;
  e.swap(backend_error);
  return e;
}

}  // namespace nnrt::backend
