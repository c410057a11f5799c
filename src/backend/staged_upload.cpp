#include "backend/staged_upload.h"

#include <cstddef>

#include "core/error.h"
#include "core/log.h"

namespace nnrt::backend {

namespace {
size_t round_up(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }
}  // namespace

bool StagedUpload::available(const Device &device) {
  const nnrt_backend_v1 &t = device.table();
  return !device.host_memory() && device.stream() && t.host_alloc && t.host_free && t.stream_create &&
         t.stream_destroy && NNRT_HAS_MEMBER(&t, nnrt_backend_v1, event_synchronize) && t.event_create &&
         t.event_destroy && t.event_record && t.stream_wait_event && t.event_synchronize;
}

StagedUpload::StagedUpload(std::shared_ptr<Device> device, int slots)
    : device_(std::move(device)), table_(device_->table()), slots_(static_cast<size_t>(slots < 1 ? 1 : slots)) {
  if (!available(*device_)) fail(NNRT_ERR_INTERNAL, device_->name(), ": no staged uploads on this backend");
  nnrt_backend_instance *inst = device_->instance();
  try {
    take_backend_error();
    device_->check(table_.stream_create(inst, &copy_stream_), "could not create the copy stream");
    for (Slot &s : slots_) {
      device_->check(table_.event_create(inst, &s.copied), "could not create an event");
      device_->check(table_.event_create(inst, &s.free), "could not create an event");
    }
  } catch (...) {
    free_all();
    throw;
  }
}

StagedUpload::~StagedUpload() { free_all(); }

void StagedUpload::free_all() {
  nnrt_backend_instance *inst = device_->instance();
  if (copy_stream_ && table_.stream_synchronize(inst, copy_stream_) != NNRT_OK) {
    log::warn(cat(device_->name(), ": waiting for the copy stream failed: ", take_backend_error()));
  }
  for (Slot &s : slots_) {
    if (s.host) table_.host_free(inst, s.host);
    if (s.device) device_->memory().release(s.device, s.device_bytes);
    if (s.copied) table_.event_destroy(inst, s.copied);
    if (s.free) table_.event_destroy(inst, s.free);
    s = Slot{};
  }
  if (copy_stream_) table_.stream_destroy(inst, copy_stream_);
  copy_stream_ = nullptr;
}

void *StagedUpload::begin(size_t bytes) {
  const size_t index = next_;
  Slot &s = slots_[index];
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (s.state != State::kFree) {
      fail(NNRT_ERR_INTERNAL, "staged upload: slot ", index, " of ", slots_.size(), " is still in use");
    }
  }
  nnrt_backend_instance *inst = device_->instance();
  take_backend_error();
  // The host buffer's last copy must have completed before the host writes it again.
  device_->check(table_.event_synchronize(inst, s.copied), "waiting for a staging copy failed");
  const size_t want = round_up(bytes ? bytes : 1, 256);
  if (s.host_bytes < want) {
    if (s.host) table_.host_free(inst, s.host);
    s.host = nullptr;
    s.host_bytes = 0;
    device_->check(table_.host_alloc(inst, want, &s.host), "could not allocate page-locked host memory");
    s.host_bytes = want;
  }
  if (s.device_bytes < want) {
    // The slot was last read on the context stream (already queued), so the old block goes back to
    // the cache in stream order. The new block may still be in use by work queued on the context
    // stream: the copy stream waits for `free`, recorded after that work.
    if (s.device) device_->memory().release(s.device, s.device_bytes);
    s.device = nullptr;
    s.device_bytes = 0;
    size_t block = 0;
    s.device = device_->memory().allocate(want, &block);
    s.device_bytes = block;
    device_->check(table_.event_record(inst, s.free, device_->stream()), "could not record an event");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  s.state = State::kBegun;
  return s.host;
}

int StagedUpload::submit(size_t bytes) {
  const size_t index = next_;
  Slot &s = slots_[index];
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (s.state != State::kBegun || bytes > s.host_bytes) {
      fail(NNRT_ERR_INTERNAL, "staged upload: submit of slot ", index, " without a begin of ", bytes, " bytes");
    }
  }
  nnrt_backend_instance *inst = device_->instance();
  take_backend_error();
  device_->check(table_.stream_wait_event(inst, copy_stream_, s.free), "the copy stream could not wait");
  device_->check(table_.memcpy_async(inst, s.device, s.host, bytes, NNRT_COPY_HOST_TO_DEVICE, copy_stream_),
                 "copy to the device failed");
  device_->check(table_.event_record(inst, s.copied, copy_stream_), "could not record an event");
  next_ = (next_ + 1) % slots_.size();
  std::lock_guard<std::mutex> lock(mutex_);
  s.state = State::kSubmitted;
  return static_cast<int>(index);
}

void StagedUpload::copy_out(int slot, size_t offset, void *dst, size_t bytes) {
  if (slot < 0 || static_cast<size_t>(slot) >= slots_.size()) {
    fail(NNRT_ERR_INTERNAL, "staged upload: no slot ", slot, " of ", slots_.size());
  }
  Slot &s = slots_[static_cast<size_t>(slot)];
  bool wait = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (s.state != State::kSubmitted && s.state != State::kWaited) {
      fail(NNRT_ERR_INTERNAL, "staged upload: slot ", slot, " was not submitted");
    }
    if (offset + bytes > s.device_bytes) {
      fail(NNRT_ERR_INTERNAL, "staged upload: bytes [", offset, ", ", offset + bytes, ") of a slot of ",
           s.device_bytes);
    }
    wait = s.state == State::kSubmitted;
  }
  if (wait) {
    take_backend_error();
    device_->check(table_.stream_wait_event(device_->instance(), device_->stream(), s.copied),
                   "the stream could not wait for a copy");
    std::lock_guard<std::mutex> lock(mutex_);
    s.state = State::kWaited;
  }
  device_->copy_device(dst, static_cast<const unsigned char *>(s.device) + offset, bytes);
}

void StagedUpload::release(int slot) {
  if (slot < 0 || static_cast<size_t>(slot) >= slots_.size()) {
    fail(NNRT_ERR_INTERNAL, "staged upload: no slot ", slot, " of ", slots_.size());
  }
  Slot &s = slots_[static_cast<size_t>(slot)];
  take_backend_error();
  device_->check(table_.event_record(device_->instance(), s.free, device_->stream()), "could not record an event");
  std::lock_guard<std::mutex> lock(mutex_);
  s.state = State::kFree;
}

}  // namespace nnrt::backend
