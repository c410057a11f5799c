#include "backend/device.h"

#include <cstdint>
#include <cstring>
#include <mutex>

#include "core/error.h"

namespace nnrt::backend {

namespace {

// The device's memory in bytes, from its properties; 0 when the backend does not say.
size_t device_memory_bytes(const nnrt_backend_v1 &table, int32_t index) {
  nnrt_device_props props{};
  props.struct_size = sizeof props;
  if (table.device_props(index, &props) != NNRT_OK) {
    take_backend_error();
    return 0;
  }
  return static_cast<size_t>(props.memory_bytes);
}

}  // namespace

std::shared_ptr<Device> Device::open(const BackendInfo &backend, int32_t index, std::shared_ptr<ThreadPool> pool,
                                     bool deterministic, std::shared_ptr<MemoryCache> host_cache,
                                     CacheLimits limits) {
  std::shared_ptr<Device> d(new Device);
  d->name_ = backend.name;
  d->table_ = backend.table;
  d->index_ = index;
  d->pool_ = std::move(pool);
  nnrt_device_config config{};
  config.struct_size = sizeof config;
  config.device = index;
  config.threads = d->pool_->threads();
  config.deterministic = deterministic ? 1 : 0;
  config.pool = reinterpret_cast<nnrt_host_pool *>(d->pool_.get());  // opaque to the backend
  take_backend_error();
  nnrt_status s = d->table_->open(&config, &d->instance_);
  if (s != NNRT_OK || !d->instance_) {
    d->instance_ = nullptr;
    d->backend_failure(s == NNRT_OK ? NNRT_ERR_BACKEND : s, cat("could not open device ", index));
  }
  if (d->table_->stream_create) {
    s = d->table_->stream_create(d->instance_, &d->stream_);
    if (s != NNRT_OK) d->backend_failure(s, "could not create a stream");
  }
  if (d->host_memory()) {
    d->memory_ = std::move(host_cache);
  } else {
    // Device memory: the cache keeps the raw instance pointer, which outlives it (see ~Device).
    nnrt_backend_instance *inst = d->instance_;
    const nnrt_backend_v1 *t = d->table_;
    std::string name = d->name_;
    MemorySource source{
        [inst, t, name](size_t bytes) -> void * {
          void *p = nullptr;
          nnrt_status s = t->mem_alloc(inst, bytes, &p);
          if (s == NNRT_OK) return p;
          // Out of memory: the cache frees what it holds and tries again. Any other failure is the
          // device's, passed on with the plugin's message.
          if (s == NNRT_ERR_OUT_OF_MEMORY) return nullptr;
          std::string detail = take_backend_error();
          fail(s, name, ": could not allocate ", bytes, " bytes of device memory", detail.empty() ? "" : ": ", detail);
        },
        [inst, t](void *p, size_t) { t->mem_free(inst, p); },
        device_memory_bytes(*d->table_, index),
        // Queued on the device's stream, ahead of any work that will use the block.
        [inst, t, stream = d->stream_](void *p, size_t bytes, int value) {
          if (t->memset_async(inst, p, value, bytes, stream) != NNRT_OK) take_backend_error();
        },
    };
    if (limits.defaults) {
      const size_t keep_all = source.capacity ? source.capacity : SIZE_MAX;
      limits.max_cached_bytes = limits.max_block_bytes = keep_all;
    }
    d->memory_ = std::make_shared<MemoryCache>(std::move(source), limits);
  }
  return d;
}

Device::~Device() {
  for (auto &entry : ops_) {
    if (entry.second.op) table_->op_destroy(entry.second.op);
  }
  ops_.clear();
  if (!host_memory() && memory_) {
    memory_->trim();
    memory_.reset();
  }
  if (stream_ && table_->stream_destroy) table_->stream_destroy(instance_, stream_);
  if (instance_) table_->close(instance_);
}

void Device::backend_failure(nnrt_status status, const std::string &what) {
  std::string detail = take_backend_error();
  fail(status, name_, ": ", what, detail.empty() ? "" : ": ", detail);
}

void Device::copy_from_host_sync(void *dst, const void *src, size_t bytes) {
  if (bytes == 0) return;
  if (host_memory()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  nnrt_status s = table_->memcpy_async(instance_, dst, src, bytes, NNRT_COPY_HOST_TO_DEVICE, stream_);
  if (s != NNRT_OK) backend_failure(s, "copy to the device failed");
  synchronize();
}

void Device::copy_to_host_sync(void *dst, const void *src, size_t bytes) {
  if (bytes == 0) return;
  if (host_memory()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  nnrt_status s = table_->memcpy_async(instance_, dst, src, bytes, NNRT_COPY_DEVICE_TO_HOST, stream_);
  if (s != NNRT_OK) backend_failure(s, "copy from the device failed");
  synchronize();
}

void Device::copy_device(void *dst, const void *src, size_t bytes) {
  if (bytes == 0) return;
  if (host_memory()) {
    std::memmove(dst, src, bytes);
    return;
  }
  nnrt_status s = table_->memcpy_async(instance_, dst, src, bytes, NNRT_COPY_DEVICE_TO_DEVICE, stream_);
  if (s != NNRT_OK) backend_failure(s, "device-to-device copy failed");
}

void Device::zero(void *dst, size_t bytes) {
  if (bytes == 0) return;
  if (host_memory()) {
    std::memset(dst, 0, bytes);
    return;
  }
  nnrt_status s = table_->memset_async(instance_, dst, 0, bytes, stream_);
  if (s != NNRT_OK) backend_failure(s, "memset failed");
}

void Device::synchronize() {
  if (!table_->stream_synchronize || !stream_) return;
  nnrt_status s = table_->stream_synchronize(instance_, stream_);
  if (s != NNRT_OK) backend_failure(s, "synchronize failed");
}

bool Device::DescKey::operator==(const DescKey &o) const {
  return hash == o.hash && std::memcmp(&desc, &o.desc, sizeof desc) == 0;
}

// Mixes the descriptor's 64-bit words; only the tensors in use are read (the rest are zero).
size_t Device::hash_desc(const nnrt_op_desc &d) {
  auto mix = [](uint64_t h, const void *p, size_t bytes) {
    const unsigned char *c = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
      uint64_t w;
      std::memcpy(&w, c + i, 8);
      h ^= w;
      h *= 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
    }
    return h;
  };
  uint64_t h = static_cast<uint64_t>(d.kind) * 0x100000001B3ull + static_cast<uint64_t>(d.n_inputs) * 31 +
               static_cast<uint64_t>(d.n_outputs);
  int ni = d.n_inputs < 0 ? 0 : (d.n_inputs > NNRT_OP_MAX_INPUTS ? NNRT_OP_MAX_INPUTS : d.n_inputs);
  int no = d.n_outputs < 0 ? 0 : (d.n_outputs > NNRT_OP_MAX_OUTPUTS ? NNRT_OP_MAX_OUTPUTS : d.n_outputs);
  h = mix(h, d.inputs, sizeof(nnrt_tensor_desc) * ni);
  h = mix(h, d.outputs, sizeof(nnrt_tensor_desc) * no);
  h = mix(h, &d.attrs, sizeof d.attrs);
  return static_cast<size_t>(h);
}

CachedOp Device::find_or_create(const nnrt_op_desc &desc) {
  DescKey key{desc, hash_desc(desc)};
  {
    std::shared_lock<std::shared_mutex> lock(ops_mutex_);
    auto it = ops_.find(key);
    if (it != ops_.end()) return it->second;
  }
  CachedOp created;
  take_backend_error();
  if (table_->supports(instance_, &desc)) {
    nnrt_status s = table_->op_create(instance_, &desc, &created.op, &created.workspace_bytes);
    if (s == NNRT_ERR_UNSUPPORTED) {
      created = CachedOp{};
    } else if (s != NNRT_OK) {
      backend_failure(s, "could not create the op");
    }
  }
  std::unique_lock<std::shared_mutex> lock(ops_mutex_);
  auto inserted = ops_.emplace(key, created);
  if (!inserted.second && created.op) table_->op_destroy(created.op);  // another thread won the race
  return inserted.first->second;
}

nnrt_status Device::refusal_reason(const nnrt_op_desc &desc, std::string *why) {
  nnrt_backend_op *op = nullptr;
  size_t workspace = 0;
  take_backend_error();
  nnrt_status s = table_->op_create(instance_, &desc, &op, &workspace);
  *why = take_backend_error();
  if (s == NNRT_OK) {
    if (op) table_->op_destroy(op);
    s = NNRT_ERR_UNSUPPORTED;  // supports() said no although op_create would say yes
  }
  return s;
}

void Device::run(const CachedOp &op, nnrt_op_args &args, const char *what, void *given_workspace) {
  void *workspace = op.workspace_bytes ? given_workspace : nullptr;
  size_t block = 0;
  const bool own_workspace = op.workspace_bytes && !workspace;
  if (own_workspace) workspace = memory_->allocate(op.workspace_bytes, &block);
  args.struct_size = sizeof args;
  args.workspace = workspace;
  args.workspace_bytes = op.workspace_bytes;
  args.stream = stream_;
  take_backend_error();
  nnrt_status s = table_->op_run(op.op, &args);
  // Work on a stream is ordered, so the next user of this block cannot overtake this op.
  if (own_workspace) memory_->release(workspace, block);
  if (s != NNRT_OK) backend_failure(s, what);
}

bool Device::load(nnrt_device_status *out) const {
  if (!NNRT_HAS_MEMBER(table_, nnrt_backend_v1, device_status) || !table_->device_status) return false;
  nnrt_device_status s{};
  s.struct_size = sizeof s;
  s.utilization_percent = s.temperature_celsius = -1;
  s.memory_used_bytes = s.memory_total_bytes = -1;
  if (table_->device_status(instance_, &s) != NNRT_OK) {
    take_backend_error();
    return false;
  }
  *out = s;
  return true;
}

size_t Device::cached_op_count() const {
  std::shared_lock<std::shared_mutex> lock(ops_mutex_);
  return ops_.size();
}

}  // namespace nnrt::backend
