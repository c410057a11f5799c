// A caching allocator for one memory space (host memory, or one device): the ND4J "reuse" cache.
//
// Freed blocks go back to size-class bins and are handed out again, so a training loop that
// allocates the same shapes every step stops calling the system (or the device driver) after its
// first step. Limits: freed blocks are kept only while the cache holds at most max_cached_bytes,
// and blocks larger than max_block_bytes are never kept. An optional hard limit (max_total_bytes)
// bounds what is handed out plus what is cached: past it, allocations fail as out of memory (after
// the cache is emptied), as a GPU's memory would, but at a limit the application chose.
//
// The policy is independent of where the memory comes from (MemorySource), so the same class
// serves host memory and every device backend (a GPU's cudaMalloc), and is unit-tested on host
// memory. Freed device blocks are reused in stream order: a context queues all its device work on
// its one stream, so the next user of a block cannot overtake the last.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace nnrt {

struct CacheLimits {
  size_t max_cached_bytes = size_t(1) << 30;
  size_t max_block_bytes = size_t(256) << 20;
  size_t max_total_bytes = 0;  // 0: no hard limit
  // Neither max_cached_bytes nor max_block_bytes was chosen. The defaults above are the host's;
  // a device cache then keeps every freed block, up to the device's memory (Device::open), so that
  // a step's large blocks are not given back to the driver (cudaFree waits for the device) and
  // asked for again every step. It frees them when an allocation fails, or with the context.
  bool defaults = true;
};

struct CacheStats {
  size_t allocated_bytes = 0;  // in blocks handed out and not yet released
  size_t cached_bytes = 0;     // in freed blocks kept for reuse
  size_t peak_bytes = 0;       // the most allocated_bytes ever
  uint64_t hits = 0;           // allocations served from the cache
  uint64_t misses = 0;         // allocations that went to the system
};

// Where the memory really comes from.
struct MemorySource {
  std::function<void *(size_t bytes)> allocate;  // returns NULL when out of memory
  std::function<void(void *, size_t bytes)> release;  // bytes: as given to allocate
  size_t capacity = 0;  // the memory there is, in bytes; a larger request is refused (0: unknown)
  // Fills `bytes` at a block with the byte `value` (may be empty: the source cannot). Used only to
  // poison blocks when NNRT_POISON_MEMORY is set (memory_poison_byte).
  std::function<void(void *, size_t bytes, int value)> fill;
};

// The byte every block a cache hands out is filled with, or -1 (the default) for none. Set by the
// environment variable NNRT_POISON_MEMORY, read once: "nan" fills with 0xff (NaN in every float
// type, -1 in every integer type), "large" with 0x7f (3.4e38 in f32 and bf16). The test suites run
// with it, so that a result computed from memory nobody wrote (a kernel that skips elements, a
// buffer assumed zero) differs from the reference instead of passing by luck.
int memory_poison_byte();

class MemoryCache {
 public:
  MemoryCache(MemorySource source, CacheLimits limits);
  ~MemoryCache();  // returns every cached block; blocks still handed out are the owners' problem
  MemoryCache(const MemoryCache &) = delete;
  MemoryCache &operator=(const MemoryCache &) = delete;

  // Returns a block of at least `bytes` (its true size in *block_bytes, to pass to release), 64-byte
  // aligned or better. Throws NNRT_ERR_OUT_OF_MEMORY, after emptying the cache and retrying once.
  void *allocate(size_t bytes, size_t *block_bytes);
  void release(void *ptr, size_t block_bytes);

  // Returns every cached block to the source.
  void trim();

  CacheStats stats() const;
  CacheLimits limits() const { return limits_; }

  // The size class a request of `bytes` is rounded up to.
  static size_t size_class(size_t bytes);

  // The largest request ever passed on: size classes round up by at most 1/8, and this leaves room.
  static constexpr size_t kMaxRequest = size_t(1) << 62;

 private:
  // allocate() without the poisoning.
  void *take(size_t bytes, size_t *block_bytes);
  void trim_locked();
  // Whether a new block of `size` keeps in use + cached under max_total_bytes.
  bool within_hard_limit(size_t size);

  MemorySource source_;
  CacheLimits limits_;
  mutable std::mutex mutex_;
  std::map<size_t, std::vector<void *>> bins_;  // size class -> free blocks
  CacheStats stats_;
};

// The machine's physical memory in bytes (0 if unknown).
size_t physical_memory_bytes();

// A MemorySource of 64-byte aligned host memory, its capacity the physical memory. Blocks of 1 MiB
// and more are mapped from the system directly (transparent huge pages asked for), so that one
// released goes back to the system at once: glibc would keep blocks below its mmap threshold, which
// grows to 32 MB, in its heap, where the freed activations of a large batch stayed resident (a
// ResNet-50 at batch 16: 250 MB). Sanitizer builds take every block from malloc, whose blocks
// AddressSanitizer guards.
MemorySource host_memory_source();

}  // namespace nnrt
