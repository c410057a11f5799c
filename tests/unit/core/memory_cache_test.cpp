#include "core/memory_cache.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nnrt {
namespace {

// A source that counts what it hands out, and can be told to run out of memory.
struct CountingSource {
  int allocations = 0, releases = 0;
  size_t fail_above = SIZE_MAX;
  MemorySource make() {
    return MemorySource{[this](size_t n) -> void * {
                          if (n > fail_above) return nullptr;
                          ++allocations;
                          return std::aligned_alloc(64, n);
                        },
                        [this](void *p, size_t) {
                          ++releases;
                          std::free(p);
                        }};
  }
};

TEST(MemoryCache, SizeClassesRoundUpByAtMostAnEighth) {
  EXPECT_EQ(MemoryCache::size_class(0), 512u);
  EXPECT_EQ(MemoryCache::size_class(512), 512u);
  EXPECT_EQ(MemoryCache::size_class(513), 1024u);
  for (size_t n : {1000u, 4097u, 100000u, 1234567u, 300000000u}) {
    size_t c = MemoryCache::size_class(n);
    EXPECT_GE(c, n);
    EXPECT_LE(c, n + n / 8 + 512) << n;
  }
}

TEST(MemoryCache, ReusesFreedBlocksAndCountsHitsAndMisses) {
  CountingSource src;
  MemoryCache cache(src.make(), CacheLimits{});
  size_t b1, b2;
  void *p = cache.allocate(1000, &b1);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  cache.release(p, b1);
  void *q = cache.allocate(1000, &b2);
  EXPECT_EQ(p, q);
  CacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.allocated_bytes, b2);
  EXPECT_EQ(s.cached_bytes, 0u);
  cache.release(q, b2);
  s = cache.stats();
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.cached_bytes, b2);
  EXPECT_EQ(s.peak_bytes, b1);
  EXPECT_EQ(src.allocations, 1);
}

TEST(MemoryCache, HonoursItsLimits) {
  CountingSource src;
  MemoryCache cache(src.make(), CacheLimits{4096, 2048});
  size_t b;
  void *big = cache.allocate(3000, &b);  // larger than max_block_bytes: never cached
  cache.release(big, b);
  EXPECT_EQ(cache.stats().cached_bytes, 0u);
  EXPECT_EQ(src.releases, 1);
  std::vector<std::pair<void *, size_t>> blocks;
  for (int i = 0; i < 6; ++i) {
    blocks.emplace_back(nullptr, 0);
    blocks.back().first = cache.allocate(1024, &blocks.back().second);
  }
  for (auto &bl : blocks) cache.release(bl.first, bl.second);
  EXPECT_LE(cache.stats().cached_bytes, 4096u);
  EXPECT_EQ(src.releases, 1 + 2);  // four 1 KiB blocks fit under 4 KiB, two went back
}

TEST(MemoryCache, ZeroLimitDisablesCaching) {
  CountingSource src;
  MemoryCache cache(src.make(), CacheLimits{0, 0});
  size_t b;
  void *p = cache.allocate(100, &b);
  cache.release(p, b);
  EXPECT_EQ(src.releases, 1);
  EXPECT_EQ(cache.stats().cached_bytes, 0u);
}

TEST(MemoryCache, OutOfMemoryTrimsThenThrows) {
  CountingSource src;
  MemoryCache cache(src.make(), CacheLimits{});
  size_t b;
  void *p = cache.allocate(4096, &b);
  cache.release(p, b);
  src.fail_above = 1 << 20;
  try {
    cache.allocate(size_t(1) << 30, &b);
    FAIL() << "expected an out-of-memory error";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), NNRT_ERR_OUT_OF_MEMORY);
  }
  EXPECT_EQ(cache.stats().cached_bytes, 0u);  // the cached block was returned first
  EXPECT_EQ(src.releases, 1);
}

TEST(MemoryCache, DestructorReturnsCachedBlocks) {
  CountingSource src;
  {
    MemoryCache cache(src.make(), CacheLimits{});
    size_t b;
    for (int i = 0; i < 3; ++i) cache.release(cache.allocate(100 * (i + 1) * 1000, &b), b);
  }
  EXPECT_EQ(src.allocations, src.releases);
}

TEST(MemoryCache, OutOfMemoryMessageNamesAskedInUseAndCached) {
  CountingSource src;
  MemoryCache cache(src.make(), CacheLimits{});
  size_t held_b, cached_b, b;
  void *held = cache.allocate(8192, &held_b);
  void *cached = cache.allocate(4096, &cached_b);
  cache.release(cached, cached_b);
  src.fail_above = 1 << 20;
  try {
    cache.allocate(3000000, &b);
    FAIL() << "expected an out-of-memory error";
  } catch (const Error &e) {
    std::string m = e.what();
    EXPECT_NE(m.find("3000000 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(held_b) + " bytes in use"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(cached_b) + " bytes were cached"), std::string::npos) << m;
  }
  cache.release(held, held_b);
}

TEST(MemoryCache, HardLimitFreesTheCacheAndRetriesOnce) {
  CountingSource src;
  CacheLimits limits;
  limits.max_total_bytes = 8192;
  MemoryCache cache(src.make(), limits);
  size_t b1, b2, b3;
  void *p = cache.allocate(4096, &b1);
  cache.release(p, b1);  // 4 KiB cached
  void *q = cache.allocate(6000, &b2);  // 4 KiB cached + 6 KiB > 8 KiB: the cache goes, then it fits
  EXPECT_EQ(src.releases, 1);
  EXPECT_EQ(cache.stats().cached_bytes, 0u);
  EXPECT_EQ(cache.stats().allocated_bytes, b2);
  try {
    cache.allocate(4096, &b3);  // 6 KiB in use + 4 KiB > 8 KiB, nothing cached to free
    FAIL() << "expected the hard limit to refuse";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), NNRT_ERR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(e.what()).find("hard limit 8192"), std::string::npos) << e.what();
  }
  EXPECT_EQ(src.allocations, 2);  // the refused request never reached the source
  cache.release(q, b2);
  void *r = cache.allocate(4096, &b3);  // within the limit again
  cache.release(r, b3);
}

}  // namespace
}  // namespace nnrt

namespace nnrt {
namespace {

// The test suites run with NNRT_POISON_MEMORY set (tests/meson.build): every block handed out, new
// or reused, is filled with the poison byte, so a kernel that skips elements is caught by the
// comparison with the reference.
TEST(MemoryCache, PoisonsEveryBlockItHandsOutWhenAsked) {
  const int poison = memory_poison_byte();
  if (poison < 0) GTEST_SKIP() << "NNRT_POISON_MEMORY is not set (meson test sets it)";
  MemoryCache cache(host_memory_source(), CacheLimits{});
  for (int round = 0; round < 2; ++round) {  // a new block, then the same block from the cache
    size_t bytes = 0;
    auto *p = static_cast<unsigned char *>(cache.allocate(1000, &bytes));
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(p[i], poison) << "round " << round << ", byte " << i;
    std::memset(p, 0, bytes);  // what a previous user left behind must not show either
    cache.release(p, bytes);
  }
  EXPECT_EQ(cache.stats().hits, 1u);
}

}  // namespace
}  // namespace nnrt
