// Where an op runs: the host's thread pool, through host->parallel_for.
//
// Determinism rule of this backend: parallel chunks only ever split work into independent pieces
// (output elements, output tiles, fixed blocks of a sum); how a value is computed never depends on
// the chunk bounds or the thread count, so results are bit-identical for any number of threads.
#pragma once

#include <stdint.h>

#include <atomic>
#include <exception>
#include <type_traits>

#include "nnrt/nnrt_backend.h"

namespace nnrt::reference {

struct Exec {
  const nnrt_host_api *host = nullptr;
  nnrt_host_pool *pool = nullptr;  // NULL: run everything on the calling thread
  int threads = 1;
};

namespace detail {

template <class F>
struct ParallelCall {
  F *fn;
  std::atomic<bool> failed{false};
  std::exception_ptr error;
};

// host->parallel_for wants a plain function that does not throw: this one runs the callable and
// keeps the first exception for the calling thread to rethrow.
template <class F>
void parallel_trampoline(int64_t begin, int64_t end, void *user) {
  auto *call = static_cast<ParallelCall<F> *>(user);
  try {
    (*call->fn)(begin, end);
  } catch (...) {
    bool expected = false;
    if (call->failed.compare_exchange_strong(expected, true)) call->error = std::current_exception();
  }
}

}  // namespace detail

// Runs fn(begin, end) over chunks of [0, n), each at least `grain` long, on the pool.
template <class F>
void parallel_for(const Exec &exec, int64_t n, int64_t grain, F &&fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (exec.pool == nullptr || exec.threads <= 1 || n <= grain) {
    fn(int64_t{0}, n);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  detail::ParallelCall<Fn> call;
  call.fn = &fn;
  exec.host->parallel_for(exec.pool, n, grain, detail::parallel_trampoline<Fn>, &call);
  if (call.failed.load()) std::rethrow_exception(call.error);
}

// Splits `tasks` independent tasks over up to exec.threads slots: fn(slot, task) runs every task
// exactly once, and all the tasks of one slot run one after another on one thread, so a slot can
// own a slice of scratch memory. Tasks are dealt round-robin (task t goes to slot t % slots).
template <class F>
void parallel_slots(const Exec &exec, int64_t tasks, int slots, F &&fn) {
  if (tasks <= 0) return;
  if (slots > tasks) slots = static_cast<int>(tasks);
  if (slots < 1) slots = 1;
  parallel_for(exec, slots, 1, [&](int64_t begin, int64_t end) {
    for (int64_t slot = begin; slot < end; ++slot)
      for (int64_t t = slot; t < tasks; t += slots) fn(static_cast<int>(slot), t);
  });
}

}  // namespace nnrt::reference
