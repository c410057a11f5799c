#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include <sched.h>

namespace nnrt {

struct ThreadPool::Job {
  void (*fn)(int64_t, int64_t, void *);
  void *user;
  int pending;                 // chunks not finished yet; guarded by the pool mutex
  std::condition_variable done;
};

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {}

void ThreadPool::start_workers() {
  std::call_once(workers_started_, [this] {
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
  });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto &w : workers_) w.join();
}

// Runs one queued task with the lock released; returns false if the queue was empty.
bool ThreadPool::run_one_queued(std::unique_lock<std::mutex> &lock) {
  if (queue_.empty()) return false;
  Task t = queue_.front();
  queue_.pop_front();
  lock.unlock();
  t.job->fn(t.begin, t.end, t.job->user);
  lock.lock();
  if (--t.job->pending == 0) t.job->done.notify_all();
  return true;
}

void ThreadPool::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_ && queue_.empty()) return;
    run_one_queued(lock);
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t, int64_t, void *), void *user) {
  run(n, grain, fn, user, true);
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn) {
  run_callable(n, grain, fn, true);
}

void ThreadPool::parallel_for_own_threads(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn) {
  run_callable(n, grain, fn, false);
}

void ThreadPool::run(int64_t n, int64_t grain, void (*fn)(int64_t, int64_t, void *), void *user, bool may_delegate) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int64_t chunks = std::min<int64_t>(threads_, (n + grain - 1) / grain);
  if (chunks <= 1) {
    fn(0, n, user);
    return;
  }
  int64_t per = (n + chunks - 1) / chunks;
  ChunkRunner runner = may_delegate ? runner_.load(std::memory_order_acquire) : nullptr;
  if (runner) {
    struct Split {
      void (*fn)(int64_t, int64_t, void *);
      void *user;
      int64_t n, per;
    } split{fn, user, n, per};
    runner((n + per - 1) / per,
           [](int64_t i, void *s) {
             auto *sp = static_cast<Split *>(s);
             sp->fn(i * sp->per, std::min(sp->n, (i + 1) * sp->per), sp->user);
           },
           &split);
    return;
  }
  start_workers();
  Job job{fn, user, 0, {}};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t b = per; b < n; b += per) {
      queue_.push_back(Task{&job, b, std::min(n, b + per)});
      ++job.pending;
    }
  }
  work_ready_.notify_all();
  fn(0, per, user);
  std::unique_lock<std::mutex> lock(mutex_);
  while (job.pending > 0) {
    // Help with whatever is queued (our chunks or another caller's) instead of sleeping.
    if (!run_one_queued(lock)) job.done.wait(lock, [&] { return job.pending == 0 || !queue_.empty(); });
  }
}

void ThreadPool::run_callable(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn,
                              bool may_delegate) {
  struct Ctx {
    const std::function<void(int64_t, int64_t)> *fn;
    std::mutex mutex;
    std::exception_ptr error;
  } ctx{&fn, {}, nullptr};
  run(
      n, grain,
      [](int64_t b, int64_t e, void *user) {
        auto *c = static_cast<Ctx *>(user);
        try {
          (*c->fn)(b, e);
        } catch (...) {
          std::lock_guard<std::mutex> lock(c->mutex);
          if (!c->error) c->error = std::current_exception();
        }
      },
      &ctx, may_delegate);
  if (ctx.error) std::rethrow_exception(ctx.error);
}

int default_thread_count() {
  if (const char *v = std::getenv("NNRT_NUM_THREADS")) {
    char *end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (end != v && *end == 0 && n > 0 && n <= 4096) return static_cast<int>(n);
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

}  // namespace nnrt
