// A minimal nnrt_host_api for tests that drive a backend table directly, without a context: a
// thread pool of std::threads, errors kept per thread, logs to stderr.
#pragma once

#include <string>

#include "nnrt/nnrt_backend.h"

namespace nnrt::test {

// The host services; parallel_for runs on a pool made by make_test_pool().
const nnrt_host_api *test_host();

// A pool for nnrt_device_config.pool with `threads` workers (the caller counts as one).
nnrt_host_pool *make_test_pool(int threads);
void free_test_pool(nnrt_host_pool *pool);

// The message the backend last passed to set_error on this thread, then cleared.
std::string take_backend_error();

}  // namespace nnrt::test
