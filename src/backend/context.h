// A context: the selected backend and device, the reference backend beside it for fallbacks, a
// thread pool and the host memory cache. Shared by every object made from it.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "backend/device.h"
#include "core/memory_cache.h"
#include "core/thread_pool.h"
#include "nnrt/nnrt.h"

namespace nnrt {

struct ContextOptions {
  std::string backend = "auto";
  int32_t device = 0;
  bool strict = false;
  int32_t threads = 0;  // 0: default_thread_count()
  bool deterministic = false;
  uint64_t seed = 0;
  nnrt_dtype default_dtype = NNRT_DTYPE_F32;
  CacheLimits cache;
  bool map_checkpoints = true;  // map checkpoint files rather than read them (io/file_bytes.h)

  // Reads the JSON options of nnrt_context_create; throws NNRT_ERR_INVALID_ARGUMENT naming a bad key.
  static ContextOptions parse(const char *json);
};

class Context {
 public:
  // Discovers plugins, selects and opens the backend. Throws nnrt::Error.
  static std::shared_ptr<Context> create(const ContextOptions &options);

  const ContextOptions &options() const { return options_; }
  // The device arrays are made on and ops run on.
  const std::shared_ptr<backend::Device> &device() const { return device_; }
  // The reference backend on the host: where ops the device cannot run go (same as device() when
  // the reference backend is the selected one).
  const std::shared_ptr<backend::Device> &reference() const { return reference_; }
  ThreadPool &pool() const { return *pool_; }
  MemoryCache &host_cache() const { return *host_cache_; }

  // A fresh seed for an op or model that was given none: the context seed, then derived values.
  uint64_t next_seed();

  // The JSON of nnrt_context_describe.
  std::string describe() const;

 private:
  Context() = default;

  ContextOptions options_;
  std::shared_ptr<ThreadPool> pool_;
  std::shared_ptr<MemoryCache> host_cache_;
  std::shared_ptr<backend::Device> device_;
  std::shared_ptr<backend::Device> reference_;
  std::atomic<uint64_t> seed_counter_{0};
};

}  // namespace nnrt
