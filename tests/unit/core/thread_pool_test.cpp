#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace nnrt {
namespace {

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 5, 64, 1000, 12345}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallel_for(n, 7, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)], 1) << "n=" << n << " i=" << i;
    }
  }
}

TEST(ThreadPool, ChunksDependOnlyOnSizeGrainAndThreads) {
  ThreadPool pool(4);
  auto chunks = [&] {
    std::mutex m;
    std::vector<std::pair<int64_t, int64_t>> out;
    pool.parallel_for(1000, 10, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lock(m);
      out.emplace_back(b, e);
    });
    std::sort(out.begin(), out.end());
    return out;
  };
  auto first = chunks();
  EXPECT_EQ(first.size(), 4u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(chunks(), first);
}

TEST(ThreadPool, GrainLimitsTheChunkCount) {
  ThreadPool pool(8);
  std::atomic<int> calls{0};
  pool.parallel_for(10, 5, [&](int64_t, int64_t) { calls++; });
  EXPECT_EQ(calls, 2);
}

TEST(ThreadPool, NestedAndConcurrentCallersDoNotDeadlock) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int r = 0; r < 50; ++r) {
        pool.parallel_for(8, 1, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            pool.parallel_for(4, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
          }
        });
      }
    });
  }
  for (auto &t : callers) t.join();
  EXPECT_EQ(total, 4 * 50 * 8 * 4);
}

TEST(ThreadPool, ExceptionsReachTheCaller) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.parallel_for(100, 1,
                                 [](int64_t b, int64_t) {
                                   if (b > 0) throw std::runtime_error("chunk failed");
                                 }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> n{0};
  pool.parallel_for(100, 1, [&](int64_t b, int64_t e) { n += static_cast<int>(e - b); });
  EXPECT_EQ(n, 100);
}

// A stand-in for a backend's parallel_run: runs the chunks in reverse order on the calling thread
// (any order must do) and counts its calls.
std::atomic<int> runner_calls{0};
void reverse_runner(int64_t chunks, void (*chunk)(int64_t, void *), void *user) {
  runner_calls++;
  for (int64_t i = chunks - 1; i >= 0; --i) chunk(i, user);
}

TEST(ThreadPool, AChunkRunnerGetsTheSameChunks) {
  for (int threads : {2, 3, 8}) {
    for (int64_t n : {2, 5, 64, 1000, 12345}) {
      for (int64_t grain : {1, 7, 300}) {
        auto chunks = [&](ThreadPool &pool) {
          std::mutex m;
          std::vector<std::pair<int64_t, int64_t>> out;
          pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
            std::lock_guard<std::mutex> lock(m);
            out.emplace_back(b, e);
          });
          std::sort(out.begin(), out.end());
          return out;
        };
        ThreadPool own(threads), delegated(threads);
        delegated.run_chunks_on(reverse_runner);
        int before = runner_calls;
        auto expected = chunks(own);
        EXPECT_EQ(chunks(delegated), expected) << threads << " threads, n=" << n << " grain=" << grain;
        // A single chunk runs on the caller without the runner.
        EXPECT_EQ(runner_calls - before, expected.size() > 1 ? 1 : 0);
      }
    }
  }
}

TEST(ThreadPool, AChunkRunnerPassesExceptionsIsBypassedAndCanBeRemoved) {
  ThreadPool pool(4);
  pool.run_chunks_on(reverse_runner);
  EXPECT_THROW(pool.parallel_for(100, 1,
                                 [](int64_t b, int64_t) {
                                   if (b > 0) throw std::runtime_error("chunk failed");
                                 }),
               std::runtime_error);
  int before = runner_calls;
  std::atomic<int> own{0};
  pool.parallel_for_own_threads(100, 1, [&](int64_t b, int64_t e) { own += static_cast<int>(e - b); });
  EXPECT_EQ(own, 100);
  EXPECT_EQ(runner_calls, before) << "parallel_for_own_threads went to the runner";
  pool.run_chunks_on(nullptr);
  std::atomic<int> n{0};
  pool.parallel_for(100, 1, [&](int64_t b, int64_t e) { n += static_cast<int>(e - b); });
  EXPECT_EQ(n, 100);
  EXPECT_EQ(runner_calls, before);
}

TEST(ThreadPool, DefaultThreadCountReadsTheEnvironment) {
  setenv("NNRT_NUM_THREADS", "3", 1);
  EXPECT_EQ(default_thread_count(), 3);
  setenv("NNRT_NUM_THREADS", "zero", 1);
  EXPECT_GE(default_thread_count(), 1);
  unsetenv("NNRT_NUM_THREADS");
  EXPECT_GE(default_thread_count(), 1);
}

}  // namespace
}  // namespace nnrt
