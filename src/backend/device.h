// A backend opened on one device for one context: its instance, stream, memory cache and the cache
// of created ops (one per distinct descriptor, as oneDNN primitives and cuDNN plans want).
#pragma once

#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "backend/registry.h"
#include "core/memory_cache.h"
#include "core/thread_pool.h"

namespace nnrt::backend {

// One created op, or the record that the backend refused the descriptor.
struct CachedOp {
  nnrt_backend_op *op = nullptr;  // NULL when refused
  size_t workspace_bytes = 0;
};

class Device {
 public:
  // Opens device `index` of a backend. For a host-memory backend, memory comes from `host_cache`
  // (shared by the context's host-memory backends); otherwise a device cache with `limits` is made.
  static std::shared_ptr<Device> open(const BackendInfo &backend, int32_t index,
                                      std::shared_ptr<ThreadPool> pool, bool deterministic,
                                      std::shared_ptr<MemoryCache> host_cache, CacheLimits limits);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const std::string &name() const { return name_; }
  const nnrt_backend_v1 &table() const { return *table_; }
  int32_t index() const { return index_; }
  bool host_memory() const { return (table_->flags & NNRT_BACKEND_HOST_MEMORY) != 0; }
  MemoryCache &memory() { return *memory_; }
  ThreadPool &pool() { return *pool_; }

  // Data movement on this device's stream. The *_sync forms wait for completion.
  void copy_from_host_sync(void *dst, const void *src, size_t bytes);
  void copy_to_host_sync(void *dst, const void *src, size_t bytes);
  void copy_device(void *dst, const void *src, size_t bytes);
  void zero(void *dst, size_t bytes);
  void synchronize();

  // The op for a descriptor, created on first use; op == NULL when the backend refuses it.
  // Throws nnrt::Error when the backend accepts in supports() but fails in op_create.
  CachedOp find_or_create(const nnrt_op_desc &desc);

  // Why the backend refuses a descriptor: op_create's status and message (NNRT_ERR_UNSUPPORTED
  // and "" when it gives none).
  nnrt_status refusal_reason(const nnrt_op_desc &desc, std::string *why);

  // Runs a created op with `workspace` (op.workspace_bytes of this device's memory), or, when it is
  // NULL, a workspace from this device's memory cache.
  void run(const CachedOp &op, nnrt_op_args &args, const char *what, void *workspace = nullptr);

  size_t cached_op_count() const;

  // The device's current load from the backend's device_status, or false when the backend has none
  // (or it failed: the load is informative, never worth an error).
  bool load(nnrt_device_status *out) const;

  // For code that calls the table itself (backend/staged_upload.h): the opened instance, the
  // context's stream (NULL for a backend without streams), and the failure of a table call as an
  // nnrt::Error with the backend's message.
  nnrt_backend_instance *instance() const { return instance_; }
  nnrt_stream *stream() const { return stream_; }
  void check(nnrt_status status, const char *what) {
    if (status != NNRT_OK) backend_failure(status, what);
  }

 private:
  Device() = default;
  [[noreturn]] void backend_failure(nnrt_status status, const std::string &what);

  struct DescKey {
    nnrt_op_desc desc;
    size_t hash;
    bool operator==(const DescKey &o) const;
  };
  struct DescHash {
    size_t operator()(const DescKey &k) const { return k.hash; }
  };
  static size_t hash_desc(const nnrt_op_desc &d);

  std::string name_;
  const nnrt_backend_v1 *table_ = nullptr;
  int32_t index_ = 0;
  std::shared_ptr<ThreadPool> pool_;
  nnrt_backend_instance *instance_ = nullptr;
  nnrt_stream *stream_ = nullptr;
  std::shared_ptr<MemoryCache> memory_;
  mutable std::shared_mutex ops_mutex_;
  std::unordered_map<DescKey, CachedOp, DescHash> ops_;
};

}  // namespace nnrt::backend
