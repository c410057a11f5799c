// Uploads of host data to a device on a second stream, through page-locked staging buffers, so
// that copying the next batch overlaps the computation on the current one.
//
// A ring of slots, each a page-locked host buffer (host_alloc) and a device buffer. The producer
// writes a slot's host buffer and submits it: the copy runs on the copy stream. The consumer then
// copies parts of the slot's device buffer into arrays on the context's stream, after making that
// stream wait for the copy, and releases the slot. Events order the two streams:
//
//   copied[s]  recorded on the copy stream after slot s's copy: the context stream waits for it
//              before reading the slot, and the host waits for it before rewriting the host buffer;
//   free[s]    recorded on the context stream after the slot was read: the copy stream waits for
//              it before writing the slot's device buffer again.
//
// The arrays the consumer makes come from the device's memory cache and are written on the
// context's stream, so they follow the cache's stream-ordered reuse like every other array.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "backend/device.h"

namespace nnrt::backend {

class StagedUpload {
 public:
  // True when the device can: device memory, host_alloc/host_free, streams and the five event
  // functions in a table whose struct_size covers them.
  static bool available(const Device &device);

  // A ring of `slots` (>= 1) on `device`, which must be available(). Throws nnrt::Error when a
  // stream or an event cannot be made.
  StagedUpload(std::shared_ptr<Device> device, int slots);
  // Waits for the copy stream, then frees the buffers, events and stream (errors are logged).
  ~StagedUpload();
  StagedUpload(const StagedUpload &) = delete;
  StagedUpload &operator=(const StagedUpload &) = delete;

  // Producer side, one thread. begin() returns the host buffer (at least `bytes`, 256-byte
  // aligned) of the next slot in the ring, once the host may write it: its previous copy has
  // completed. The slot must have been released since its last use (NNRT_ERR_INTERNAL if not).
  // submit() queues the copy of its first `bytes` and returns the slot's index.
  void *begin(size_t bytes);
  int submit(size_t bytes);

  // Consumer side, one thread. Queues the copy of bytes [offset, offset + bytes) of slot `slot`
  // into `dst` (device memory) on the context's stream, after the slot's upload.
  void copy_out(int slot, size_t offset, void *dst, size_t bytes);
  // The consumer is done with the slot: the producer may take it again.
  void release(int slot);

 private:
  enum class State { kFree, kBegun, kSubmitted, kWaited };
  struct Slot {
    void *host = nullptr;
    size_t host_bytes = 0;
    void *device = nullptr;
    size_t device_bytes = 0;  // as the memory cache handed it out
    nnrt_event *copied = nullptr;
    nnrt_event *free = nullptr;
    State state = State::kFree;
  };

  void free_all();

  std::shared_ptr<Device> device_;
  const nnrt_backend_v1 &table_;
  nnrt_stream *copy_stream_ = nullptr;
  std::vector<Slot> slots_;
  size_t next_ = 0;    // the slot begin() takes next
  std::mutex mutex_;   // slot states, between the producer and the consumer
};

}  // namespace nnrt::backend
