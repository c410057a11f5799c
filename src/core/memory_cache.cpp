#include "core/memory_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/fault_injection.h"
#include "core/log.h"

namespace nnrt {

MemoryCache::MemoryCache(MemorySource source, CacheLimits limits)
    : source_(std::move(source)), limits_(limits) {}

MemoryCache::~MemoryCache() { trim(); }

// Small requests round up to 512 bytes; larger ones to the next of eight steps per power of two,
// which wastes at most 12.5% while letting similar sizes share a bin.
size_t MemoryCache::size_class(size_t bytes) {
  if (bytes <= 512) return 512;
  int top = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes - 1));
  size_t step = size_t(1) << (top - 3 > 9 ? top - 3 : 9);
  return (bytes + step - 1) / step * step;
}

int memory_poison_byte() {
  static const int byte = [] {
    const char *v = std::getenv("NNRT_POISON_MEMORY");
    if (!v || !*v) return -1;
    if (std::strcmp(v, "nan") == 0) return 0xff;
    if (std::strcmp(v, "large") == 0) return 0x7f;
    log::warn(cat("NNRT_POISON_MEMORY=", v, " is neither \"nan\" nor \"large\": memory is not poisoned"));
    return -1;
  }();
  return byte;
}

void *MemoryCache::allocate(size_t bytes, size_t *block_bytes) {
  void *p = take(bytes, block_bytes);
  const int poison = memory_poison_byte();
  if (poison >= 0 && source_.fill) source_.fill(p, *block_bytes, poison);
  return p;
}

void *MemoryCache::take(size_t bytes, size_t *block_bytes) {
  // A request larger than the memory there is (or so large that rounding it up would wrap) is
  // refused before anything is asked of the system: with overcommit, a huge host allocation could
  // otherwise "succeed" and the process be killed when the pages are touched.
  if (bytes > kMaxRequest || (source_.capacity && bytes > source_.capacity)) {
    fail(NNRT_ERR_OUT_OF_MEMORY, "out of memory: ", bytes, " bytes requested, more than the ",
         source_.capacity ? cat(source_.capacity, " bytes of memory there are") : std::string("largest block possible"));
  }
#ifdef NNRT_FAULT_INJECTION
  if (fault::allocation_fails()) fail(NNRT_ERR_OUT_OF_MEMORY, "out of memory: could not allocate ", bytes, " bytes (injected fault)");
#endif
  size_t size = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = bins_.find(size);
    if (it != bins_.end() && !it->second.empty()) {
      void *p = it->second.back();
      it->second.pop_back();
      stats_.cached_bytes -= size;
      stats_.allocated_bytes += size;
      if (stats_.allocated_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.allocated_bytes;
      ++stats_.hits;
      *block_bytes = size;
      return p;
    }
  }
  void *p = within_hard_limit(size) ? source_.allocate(size) : nullptr;
  if (!p) {
    // Cached blocks of other sizes may be what stands between us and success: return them all
    // and try once more.
    CacheStats before = stats();
    trim();
    p = within_hard_limit(size) ? source_.allocate(size) : nullptr;
    if (!p) {
      std::string limit = limits_.max_total_bytes
                              ? cat(", hard limit ", limits_.max_total_bytes, " bytes (cache.max_total_bytes)")
                              : std::string();
      fail(NNRT_ERR_OUT_OF_MEMORY, "out of memory: could not allocate ", bytes, " bytes (a block of ", size,
           "); ", before.allocated_bytes, " bytes in use, ", before.cached_bytes,
           " bytes were cached and have been freed", limit);
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.allocated_bytes += size;
  if (stats_.allocated_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.allocated_bytes;
  ++stats_.misses;
  *block_bytes = size;
  return p;
}

bool MemoryCache::within_hard_limit(size_t size) {
  if (limits_.max_total_bytes == 0) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_.allocated_bytes + stats_.cached_bytes + size <= limits_.max_total_bytes;
}

void MemoryCache::release(void *ptr, size_t block_bytes) {
  if (!ptr) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.allocated_bytes -= block_bytes;
    if (block_bytes <= limits_.max_block_bytes &&
        stats_.cached_bytes + block_bytes <= limits_.max_cached_bytes) {
      bins_[block_bytes].push_back(ptr);
      stats_.cached_bytes += block_bytes;
      return;
    }
  }
  source_.release(ptr, block_bytes);
}

void MemoryCache::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  trim_locked();
}

void MemoryCache::trim_locked() {
  for (auto &bin : bins_)
    for (void *p : bin.second) source_.release(p, bin.first);
  bins_.clear();
  stats_.cached_bytes = 0;
}

CacheStats MemoryCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

size_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<size_t>(pages) * static_cast<size_t>(page);
}

namespace {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kMappedBytes = SIZE_MAX;
#else
constexpr size_t kMappedBytes = size_t(1) << 20;
#endif
}  // namespace

MemorySource host_memory_source() {
  return MemorySource{
      [](size_t bytes) -> void * {
        if (bytes < kMappedBytes) return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
        void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return nullptr;
        madvise(p, bytes, MADV_HUGEPAGE);  // advice only: a kernel without huge pages ignores it
        return p;
      },
      [](void *p, size_t bytes) {
        if (bytes < kMappedBytes) std::free(p);
        else munmap(p, bytes);
      },
      physical_memory_bytes(),
      [](void *p, size_t bytes, int value) { std::memset(p, value, bytes); },
  };
}

}  // namespace nnrt
