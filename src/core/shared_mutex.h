// A reader-writer lock that prefers writers: once a writer waits, new readers wait behind it.
//
// std::shared_mutex on glibc prefers readers, so a few threads predicting back to back keep a
// model's shared lock held at every instant and the trainer (the writer) never gets in: training
// slows to seconds per step and a cancel is not seen until the predictors stop. Here a waiting
// writer closes the door to new readers, the current ones finish, the writer runs, then everyone
// who waited goes on. Readers must not take the lock recursively (a waiting writer would deadlock
// them), and nnrt never does.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace nnrt {

class WriterPreferringSharedMutex {
 public:
  void lock() {
    std::unique_lock<std::mutex> l(mutex_);
    ++writers_waiting_;
    writer_gate_.wait(l, [&] { return !writer_active_ && readers_ == 0; });
    --writers_waiting_;
    writer_active_ = true;
  }

  void unlock() {
    {
      std::lock_guard<std::mutex> l(mutex_);
      generation_.store(next_generation(), std::memory_order_relaxed);
      writer_active_ = false;
    }
    // Both: the next writer, or the readers that queued behind this one.
    writer_gate_.notify_one();
    reader_gate_.notify_all();
  }

  void lock_shared() {
    std::unique_lock<std::mutex> l(mutex_);
    reader_gate_.wait(l, [&] { return !writer_active_ && writers_waiting_ == 0; });
    ++readers_;
  }

  void unlock_shared() {
    bool last;
    {
      std::lock_guard<std::mutex> l(mutex_);
      last = --readers_ == 0;
    }
    if (last) writer_gate_.notify_one();
  }

  // A number no other lock or writer has: drawn anew at each exclusive unlock, so that while the
  // lock is held shared it names what the last writer left (backend/weights_version.h).
  uint64_t generation() const { return generation_.load(std::memory_order_relaxed); }

 private:
  static uint64_t next_generation() {
    static std::atomic<uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  std::atomic<uint64_t> generation_{next_generation()};
  std::mutex mutex_;
  std::condition_variable writer_gate_, reader_gate_;
  int readers_ = 0, writers_waiting_ = 0;
  bool writer_active_ = false;
};

}  // namespace nnrt
