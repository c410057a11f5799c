#include "test_host.h"

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

// The test host defines the pool handle the plugin ABI leaves opaque.
struct nnrt_host_pool {
  int threads;
};

namespace nnrt::test {
namespace {

thread_local std::string backend_error;

void host_log(int level, const char *message) { std::fprintf(stderr, "[backend %d] %s\n", level, message); }

void host_set_error(const char *message) { backend_error = message ? message : ""; }

// Splits [0, n) into at most `threads` chunks of at least `grain` and runs them on fresh threads:
// slow to start, but simple and obviously correct, which is what a test host should be.
void host_parallel_for(nnrt_host_pool *pool, int64_t n, int64_t grain, void (*fn)(int64_t, int64_t, void *),
                       void *user) {
  if (n <= 0) return;
  int threads = pool ? pool->threads : 1;
  if (grain < 1) grain = 1;
  int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
  if (chunks <= 1) {
    fn(0, n, user);
    return;
  }
  int64_t per = (n + chunks - 1) / chunks;
  std::vector<std::thread> workers;
  for (int64_t c = 1; c < chunks; ++c) {
    int64_t b = c * per, e = std::min(n, b + per);
    if (b < e) workers.emplace_back([=] { fn(b, e, user); });
  }
  fn(0, std::min(n, per), user);
  for (auto &w : workers) w.join();
}

int32_t host_pool_threads(nnrt_host_pool *pool) { return pool ? pool->threads : 1; }

const nnrt_host_api host_api = {
    sizeof(nnrt_host_api), NNRT_BACKEND_ABI_MAJOR, host_log, host_set_error, host_parallel_for,
    host_pool_threads,
};

}  // namespace

const nnrt_host_api *test_host() { return &host_api; }

nnrt_host_pool *make_test_pool(int threads) { return new nnrt_host_pool{threads < 1 ? 1 : threads}; }

void free_test_pool(nnrt_host_pool *pool) { delete pool; }

std::string take_backend_error() {
  std::string e = backend_error;
  backend_error.clear();
  return e;
}

}  // namespace nnrt::test
