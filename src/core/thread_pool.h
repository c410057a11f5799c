// A fixed pool of worker threads running parallel_for chunks.
//
// Chunk bounds depend only on n, grain and the thread count, so a kernel that combines per-chunk
// results in chunk order is deterministic for a given thread count. Several threads may call
// parallel_for at once (predict is thread-safe), and a chunk may itself call parallel_for: a thread
// that waits for its chunks runs queued chunks meanwhile, so nesting cannot deadlock.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nnrt {

class ThreadPool {
 public:
  // A pool of `threads` (>= 1): the calling thread plus threads - 1 workers.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int threads() const { return threads_; }

  // Runs fn(begin, end, user) over [0, n) in at most threads() chunks of at least `grain`
  // elements, and returns when all are done. fn must not throw.
  void parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t, int64_t, void *), void *user);

  // The same with a callable, which may throw: the first exception is rethrown here.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn);

 private:
  struct Job;
  struct Task {
    Job *job;
    int64_t begin, end;
  };

  void worker_loop();
  bool run_one_queued(std::unique_lock<std::mutex> &lock);

  int threads_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::deque<Task> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// The default thread count: NNRT_NUM_THREADS if set to a positive integer, else the CPUs available.
int default_thread_count();

}  // namespace nnrt
