// BatchIterator: one epoch of batches, shuffled by a seed, optionally prepared ahead by a thread.
//
// Batch b always holds examples order[b * batch_size ...], whoever makes it and whenever, so the
// batches are the same with and without prefetching. The prefetch thread waits on condition
// variables (never spins) for room in a queue of at most `prefetch` batches, and stops at the next
// wait once the iterator is destroyed.
//
// On a device backend that offers staged uploads (backend/staged_upload.h), the producer gathers a
// batch straight into a page-locked buffer and queues its copy on a second stream; the consumer
// (next()) cuts the batch's arrays out of the uploaded slot on the context's stream. The host never
// waits for the device to make a batch, so the copy of the next batch overlaps the current step.
// There are prefetch + 1 slots: at most `prefetch` batches wait in the queue and one is being made,
// so the slot the producer takes was always released by next() before. Elsewhere a batch is copied
// on the context's stream as any array is.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "backend/ops.h"
#include "backend/staged_upload.h"
#include "core/dtype.h"
#include "core/error.h"
#include "data/dataset.h"
#include "data/shuffle.h"

namespace nnrt::data {

namespace {
std::atomic<int64_t> batch_fault{-1};
std::atomic<int64_t> batches_made{0};
}  // namespace

void set_batch_fault_for_testing(int64_t index) { batch_fault.store(index, std::memory_order_relaxed); }
int64_t batches_made_for_testing() { return batches_made.load(std::memory_order_relaxed); }

// A batch as the producer leaves it: made (slot < 0), or uploaded into a staging slot, with what
// the consumer needs to cut its arrays out of it.
struct Prepared {
  Batch batch;
  int slot = -1;
  Shape x_shape, y_shape;
  nnrt_dtype y_dtype = NNRT_DTYPE_I64;
  size_t x_bytes = 0, y_offset = 0, y_bytes = 0;
};

struct BatchIterator::Impl {
  std::shared_ptr<const Dataset> data;
  std::shared_ptr<Context> ctx;
  int64_t batch_size = 0;
  nnrt_dtype x_dtype = NNRT_DTYPE_F32;
  std::vector<int64_t> order;
  std::vector<int64_t> ids;  // the epoch's batch numbers handed out, in order
  int64_t batches = 0;
  int64_t given = 0;  // batches handed out by next()

  // Host staging of the batch being made; used by one thread only (the prefetch thread when
  // there is one, else the caller of next()).
  std::vector<unsigned char> x_host, y_host;
  std::unique_ptr<backend::StagedUpload> staging;  // NULL: batches are copied on the context's stream

  int prefetch = 0;
  std::mutex mutex;
  std::condition_variable batch_ready;  // producer -> consumer
  std::condition_variable room_free;    // consumer (or destructor) -> producer
  std::deque<Prepared> ready;
  std::exception_ptr error;  // what making a batch threw; handed out after the batches before it
  bool producer_done = false;
  bool stopping = false;
  std::thread producer;

  Prepared prepare(int64_t b);
  Batch finish(Prepared &p);
  void produce();
};

Prepared BatchIterator::Impl::prepare(int64_t b) {
  batches_made.fetch_add(1, std::memory_order_relaxed);
  if (b == batch_fault.load(std::memory_order_relaxed)) fail(NNRT_ERR_INTERNAL, "injected fault in batch ", b);
  const int64_t begin = b * batch_size;
  const int64_t n = std::min(batch_size, data->size() - begin);
  Shape x_shape, y_shape;
  x_shape.dims[x_shape.rank++] = n;
  for (int32_t i = 0; i < data->example_shape().rank; ++i) x_shape.dims[x_shape.rank++] = data->example_shape()[i];
  y_shape.dims[y_shape.rank++] = n;
  nnrt_dtype y_dtype = data->has_class_labels() ? NNRT_DTYPE_I64 : NNRT_DTYPE_F32;
  for (int32_t i = 0; i < data->label_shape().rank; ++i) y_shape.dims[y_shape.rank++] = data->label_shape()[i];
  Prepared p;
  p.batch.n = n;
  p.x_shape = x_shape;
  p.y_shape = y_shape;
  p.y_dtype = y_dtype;
  p.x_bytes = static_cast<size_t>(x_shape.numel()) * dtype_size(x_dtype);
  p.y_bytes = static_cast<size_t>(y_shape.numel()) * dtype_size(y_dtype);
  if (staging) {
    p.y_offset = (p.x_bytes + 255) / 256 * 256;  // the device copy of y starts aligned
    auto *host = static_cast<unsigned char *>(staging->begin(p.y_offset + p.y_bytes));
    data->gather(order.data() + begin, n, x_dtype, host, host + p.y_offset);
    std::memset(host + p.x_bytes, 0, p.y_offset - p.x_bytes);  // the padding is copied too: no stale bytes
    p.slot = staging->submit(p.y_offset + p.y_bytes);
    return p;
  }
  x_host.resize(p.x_bytes);
  y_host.resize(p.y_bytes);
  data->gather(order.data() + begin, n, x_dtype, x_host.data(), y_host.data());
  p.batch.x = ops::from_host(*ctx, x_dtype, x_shape, x_host.data(), x_host.size());
  p.batch.y = ops::from_host(*ctx, y_dtype, y_shape, y_host.data(), y_host.size());
  return p;
}

Batch BatchIterator::Impl::finish(Prepared &p) {
  if (p.slot < 0) return std::move(p.batch);
  Batch batch;
  batch.n = p.batch.n;
  try {
    batch.x = Array::allocate(ctx->device(), x_dtype, p.x_shape);
    batch.y = Array::allocate(ctx->device(), p.y_dtype, p.y_shape);
    staging->copy_out(p.slot, 0, batch.x.data(), p.x_bytes);
    staging->copy_out(p.slot, p.y_offset, batch.y.data(), p.y_bytes);
  } catch (...) {
    try {
      staging->release(p.slot);
    } catch (...) {
      // The first failure is the one reported.
    }
    throw;
  }
  staging->release(p.slot);
  return batch;
}

void BatchIterator::Impl::produce() {
  for (int64_t k = 0; k < batches; ++k) {
    const int64_t b = ids[static_cast<size_t>(k)];
    {
      std::unique_lock<std::mutex> lock(mutex);
      room_free.wait(lock, [&] { return stopping || ready.size() < static_cast<size_t>(prefetch); });
      if (stopping) return;
    }
    Prepared batch;
    try {
      batch = prepare(b);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      error = std::current_exception();
      producer_done = true;
      batch_ready.notify_all();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      ready.push_back(std::move(batch));
    }
    batch_ready.notify_one();
  }
  std::lock_guard<std::mutex> lock(mutex);
  producer_done = true;
  batch_ready.notify_all();
}

BatchIterator::BatchIterator(std::shared_ptr<const Dataset> data, std::shared_ptr<Context> ctx, int64_t batch_size,
                             bool shuffle, uint64_t seed, int prefetch, nnrt_dtype x_dtype,
                             const std::vector<int64_t> *only)
    : impl_(std::make_unique<Impl>()) {
  if (!data || !ctx) fail(NNRT_ERR_INTERNAL, "BatchIterator: no dataset or no context");
  if (batch_size < 1) fail(NNRT_ERR_INVALID_ARGUMENT, "batch_size: expected an integer >= 1, got ", batch_size);
  if (prefetch < 0) fail(NNRT_ERR_INVALID_ARGUMENT, "prefetch: expected an integer >= 0, got ", prefetch);
  if (!dtype_is_float(x_dtype)) {
    fail(NNRT_ERR_DTYPE, "batch features: expected a float dtype (f32, f64, f16, bf16), got ", dtype_name(x_dtype));
  }
  Impl &m = *impl_;
  m.order = shuffle ? shuffled_order(data->size(), seed) : identity_order(data->size());
  m.data = std::move(data);
  m.ctx = std::move(ctx);
  m.batch_size = batch_size;
  m.x_dtype = x_dtype;
  const int64_t all = epoch_batches(m.data->size(), batch_size);
  if (only) {
    for (int64_t b : *only) {
      if (b < 0 || b >= all) fail(NNRT_ERR_INTERNAL, "BatchIterator: batch ", b, " of an epoch of ", all);
    }
    m.ids = *only;
  } else {
    m.ids.resize(static_cast<size_t>(all));
    for (int64_t b = 0; b < all; ++b) m.ids[static_cast<size_t>(b)] = b;
  }
  m.batches = static_cast<int64_t>(m.ids.size());
  m.prefetch = prefetch;
  if (m.batches > 0 && backend::StagedUpload::available(*m.ctx->device())) {
    m.staging = std::make_unique<backend::StagedUpload>(m.ctx->device(), prefetch + 1);
  }
  if (prefetch > 0 && m.batches > 0) m.producer = std::thread([&m] { m.produce(); });
}

BatchIterator::~BatchIterator() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->room_free.notify_all();
  if (impl_->producer.joinable()) impl_->producer.join();
}

bool BatchIterator::next(Batch &out) {
  Impl &m = *impl_;
  if (m.given == m.batches) return false;
  if (m.prefetch == 0) {
    Prepared p = m.prepare(m.ids[static_cast<size_t>(m.given)]);
    out = m.finish(p);
    ++m.given;
    return true;
  }
  std::unique_lock<std::mutex> lock(m.mutex);
  m.batch_ready.wait(lock, [&] { return !m.ready.empty() || m.producer_done; });
  if (m.ready.empty()) {
    if (m.error) std::rethrow_exception(m.error);
    fail(NNRT_ERR_INTERNAL, "BatchIterator: the prefetch thread ended after ", m.given, " of ", m.batches, " batches");
  }
  Prepared p = std::move(m.ready.front());
  m.ready.pop_front();
  lock.unlock();
  // The slot is released before the producer may take it again: room is made only afterwards.
  try {
    out = m.finish(p);
  } catch (...) {
    ++m.given;
    m.room_free.notify_one();
    throw;
  }
  ++m.given;
  m.room_free.notify_one();
  return true;
}

int64_t BatchIterator::batches() const { return impl_->batches; }

}  // namespace nnrt::data
