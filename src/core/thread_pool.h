// A fixed pool of worker threads running parallel_for chunks.
//
// Chunk bounds depend only on n, grain and the thread count, so a kernel that combines per-chunk
// results in chunk order is deterministic for a given thread count. Several threads may call
// parallel_for at once (predict is thread-safe), and a chunk may itself call parallel_for: a thread
// that waits for its chunks runs queued chunks meanwhile, so nesting cannot deadlock.
//
// The chunks may instead run on another runtime's threads (run_chunks_on): a context on the oneDNN
// backend runs them on oneDNN's OpenMP team, so that its cores are not handed back and forth
// between two sets of threads (see nnrt_backend_v1::parallel_run). The pool's own workers are
// started only when a parallel_for first needs them.
#pragma once

#include <atomic>
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

  // Runs chunk(i, user) for every i in [0, chunks) on some set of threads and returns when all are
  // done (the signature of nnrt_backend_v1::parallel_run).
  using ChunkRunner = void (*)(int64_t chunks, void (*chunk)(int64_t, void *), void *user);

  // From now on, runs parallel_for's chunks (the same bounds) with `runner` rather than on the
  // pool's workers; nullptr goes back to them. May be called while other threads use the pool.
  void run_chunks_on(ChunkRunner runner) { runner_.store(runner, std::memory_order_release); }

  // Runs fn(begin, end, user) over [0, n) in at most threads() chunks of at least `grain`
  // elements, and returns when all are done. fn must not throw.
  void parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t, int64_t, void *), void *user);

  // The same with a callable, which may throw: the first exception is rethrown here.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn);

  // parallel_for on the pool's own workers even when a chunk runner is set, for chunks that run
  // backend ops themselves (a trainer's workers): oneDNN sizes a primitive's thread team when it
  // creates it, and a primitive run inside oneDNN's own OpenMP region waits forever at its barriers
  // for threads that region does not have.
  void parallel_for_own_threads(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn);

 private:
  struct Job;
  struct Task {
    Job *job;
    int64_t begin, end;
  };

  void worker_loop();
  bool run_one_queued(std::unique_lock<std::mutex> &lock);
  void start_workers();
  void run(int64_t n, int64_t grain, void (*fn)(int64_t, int64_t, void *), void *user, bool may_delegate);
  void run_callable(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn, bool may_delegate);

  int threads_;
  std::atomic<ChunkRunner> runner_{nullptr};
  std::once_flag workers_started_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::deque<Task> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// The default thread count: NNRT_NUM_THREADS if set to a positive integer, else the CPUs available.
int default_thread_count();

}  // namespace nnrt
