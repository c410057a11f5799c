// The nnrt_host_api given to every backend: logging, error messages, the context's thread pool.
#include <cstddef>
#include <string>

#include "backend/registry.h"
#include "core/log.h"
#include "core/thread_pool.h"

// The layouts of the structs embedded by value in nnrt_op_desc are fixed for ABI major 1: a later
// member takes reserved space, it never moves what is there. These pins fail the build of a change
// that would break plugins built against an earlier header of the same major.
static_assert(sizeof(nnrt_tensor_desc) == 176, "nnrt_tensor_desc's size is part of the plugin ABI");
static_assert(offsetof(nnrt_tensor_desc, dims) == 16 && offsetof(nnrt_tensor_desc, strides) == 80 &&
                  offsetof(nnrt_tensor_desc, reserved_tail) == 144,
              "nnrt_tensor_desc's layout is part of the plugin ABI");
static_assert(sizeof(nnrt_op_attrs) == 216, "nnrt_op_attrs's size is part of the plugin ABI");
static_assert(offsetof(nnrt_op_attrs, alpha) == 64 && offsetof(nnrt_op_attrs, seed) == 144 &&
                  offsetof(nnrt_op_attrs, scale) == 152 && offsetof(nnrt_op_attrs, reserved) == 168,
              "nnrt_op_attrs's layout is part of the plugin ABI");
static_assert(offsetof(nnrt_op_desc, inputs) == 16 &&
                  offsetof(nnrt_op_desc, attrs) == 16 + sizeof(nnrt_tensor_desc) * (NNRT_OP_MAX_INPUTS + NNRT_OP_MAX_OUTPUTS),
              "nnrt_op_desc's layout is part of the plugin ABI");

namespace nnrt::backend {

namespace {

thread_local std::string backend_error;

void host_log(int level, const char *message) { log::message(level, message ? message : ""); }

void host_set_error(const char *message) { backend_error = message ? message : ""; }

// The opaque nnrt_host_pool handed to backends is the context's ThreadPool.
ThreadPool *thread_pool(nnrt_host_pool *pool) { return reinterpret_cast<ThreadPool *>(pool); }

void host_parallel_for(nnrt_host_pool *pool, int64_t n, int64_t grain, void (*fn)(int64_t, int64_t, void *),
                       void *user) {
  if (pool) {
    thread_pool(pool)->parallel_for(n, grain, fn, user);
  } else if (n > 0) {
    fn(0, n, user);
  }
}

int32_t host_pool_threads(nnrt_host_pool *pool) { return pool ? thread_pool(pool)->threads() : 1; }

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
