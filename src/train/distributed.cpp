#include "train/distributed.h"

#include <chrono>
#include <climits>
#include <cstring>

#include "backend/ops.h"
#include "core/error.h"
#include "nnrt/kernels/half.h"

namespace nnrt::train {

DistributedOptions DistributedOptions::read(JsonReader &d) {
  DistributedOptions o;
  o.enabled = true;
  o.comm = d.get_string("comm", "mpi");
  if (o.comm.empty()) fail(NNRT_ERR_INVALID_ARGUMENT, d.name("comm"), ": expected a communicator name such as \"mpi\"");
  o.timeout_s = d.get_number("timeout_s", 60, 0.001, 86400);
  o.bucket_mib = d.get_number("bucket_mib", 25, 1e-6, 4096);
  std::string c = d.get_string("compression", "none");
  if (c == "f16") {
    o.compression = NNRT_DTYPE_F16;
  } else if (c == "bf16") {
    o.compression = NNRT_DTYPE_BF16;
  } else if (c != "none") {
    fail(NNRT_ERR_INVALID_ARGUMENT, d.name("compression"), ": expected \"none\", \"f16\" or \"bf16\", got \"", c, "\"");
  }
  d.finish();
  return o;
}

GradientBuckets::GradientBuckets(backend::Communicator &comm, const std::vector<Shape> &shapes,
                                 const std::vector<bool> &trainable, size_t bucket_bytes, nnrt_dtype compression)
    : comm_(comm), shapes_(shapes), compression_(compression) {
  const size_t limit = std::max<size_t>(1, bucket_bytes / sizeof(float));
  where_.assign(shapes.size(), {SIZE_MAX, 0});
  // Reverse order: the last layers' gradients are ready first. Bucket 0 starts with the rank's
  // example count and loss sum.
  buckets_.emplace_back();
  buckets_.back().filled = 2;
  for (size_t k = shapes.size(); k-- > 0;) {
    if (!trainable[k]) continue;
    size_t n = static_cast<size_t>(shapes[k].numel());
    Bucket *b = &buckets_.back();
    if (b->filled > 2 && b->filled + n > limit) {
      buckets_.emplace_back();
      b = &buckets_.back();
    }
    where_[k] = {buckets_.size() - 1, b->params.size()};
    b->params.push_back(k);
    b->offsets.push_back(b->filled);
    b->filled += n;
  }
  for (Bucket &b : buckets_) {
    b.data.assign(b.filled, 0.f);
    if (compression_ != NNRT_DTYPE_F32) b.half.assign(b.filled, 0);
    b.filled = 0;
  }
  added_.assign(shapes.size(), false);
}

void GradientBuckets::begin(int64_t examples, double loss_sum) {
  for (Bucket &b : buckets_) b.filled = 0;
  added_.assign(shapes_.size(), false);
  scale_ = static_cast<float>(examples);
  buckets_[0].data[0] = static_cast<float>(examples);
  buckets_[0].data[1] = static_cast<float>(loss_sum);
  buckets_[0].filled = 2;
  next_ = 0;
  start_ready();
}

void GradientBuckets::start_ready() {
  // Strictly in bucket order: every rank must start the same collectives in the same order, however
  // its gradients arrived (during backward, or all at once after combining workers).
  while (next_ < buckets_.size() && buckets_[next_].filled == buckets_[next_].data.size()) start(buckets_[next_++]);
}

void GradientBuckets::add(size_t i, const Array &grad) {
  if (where_[i].first == SIZE_MAX || added_[i]) return;
  added_[i] = true;
  Bucket &b = buckets_[where_[i].first];
  size_t offset = b.offsets[where_[i].second];
  size_t n = static_cast<size_t>(shapes_[i].numel());
  float *dst = b.data.data() + offset;
  if (grad.defined() && scale_ > 0) {
    grad.copy_to_host(dst, n * sizeof(float));
    for (size_t e = 0; e < n; ++e) dst[e] *= scale_;
  } else {
    std::memset(dst, 0, n * sizeof(float));
  }
  b.filled += n;
  start_ready();
}

void GradientBuckets::start(Bucket &b) {
  if (compression_ == NNRT_DTYPE_F32) {
    b.request = comm_.start_allreduce(b.data.data(), b.data.size(), NNRT_DTYPE_F32);
    return;
  }
  // 16 bits cannot hold bucket 0's example count and loss sum exactly: finish() sends those two
  // again in f32.
  for (size_t e = 0; e < b.data.size(); ++e) {
    b.half[e] = compression_ == NNRT_DTYPE_F16 ? kernels::f32_to_f16(b.data[e]) : kernels::f32_to_bf16(b.data[e]);
  }
  b.request = comm_.start_allreduce(b.half.data(), b.half.size(), compression_);
}

void GradientBuckets::finish(Context &ctx, std::vector<Array> &grads, int64_t &examples, double &mean_loss) {
  float header[2] = {buckets_[0].data[0], buckets_[0].data[1]};
  for (size_t i = 0; i < shapes_.size(); ++i) add(i, Array());
  for (Bucket &b : buckets_) {
    auto waited_from = std::chrono::steady_clock::now();
    comm_.wait(b.request);
    wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - waited_from).count();
    b.request = nullptr;
    if (compression_ != NNRT_DTYPE_F32) {
      for (size_t e = 0; e < b.data.size(); ++e) {
        b.data[e] = compression_ == NNRT_DTYPE_F16 ? kernels::f16_to_f32(b.half[e]) : kernels::bf16_to_f32(b.half[e]);
      }
    }
  }
  if (compression_ != NNRT_DTYPE_F32) {
    comm_.allreduce_sum(header, 2, NNRT_DTYPE_F32);
  } else {
    header[0] = buckets_[0].data[0];
    header[1] = buckets_[0].data[1];
  }
  examples = static_cast<int64_t>(header[0]);
  mean_loss = examples > 0 ? static_cast<double>(header[1]) / static_cast<double>(examples) : 0;
  const float inverse = examples > 0 ? 1.0f / static_cast<float>(examples) : 0.f;
  grads.assign(shapes_.size(), Array());
  for (size_t i = 0; i < shapes_.size(); ++i) {
    if (where_[i].first == SIZE_MAX) continue;
    Bucket &b = buckets_[where_[i].first];
    float *src = b.data.data() + b.offsets[where_[i].second];
    size_t n = static_cast<size_t>(shapes_[i].numel());
    for (size_t e = 0; e < n; ++e) src[e] *= inverse;
    grads[i] = ops::from_host(ctx, NNRT_DTYPE_F32, shapes_[i], src, n * sizeof(float));
  }
}

void average_over_ranks(backend::Communicator &comm, Context &ctx, const std::vector<Array> &values) {
  size_t total = 0;
  for (const Array &v : values)
    if (v.defined()) total += static_cast<size_t>(v.shape().numel());
  if (total == 0) return;
  std::vector<float> flat(total);
  size_t at = 0;
  for (const Array &v : values) {
    if (!v.defined()) continue;
    size_t n = static_cast<size_t>(v.shape().numel());
    v.copy_to_host(flat.data() + at, n * sizeof(float));
    at += n;
  }
  comm.allreduce_sum(flat.data(), flat.size(), NNRT_DTYPE_F32);
  const float share = 1.0f / static_cast<float>(comm.size());
  for (float &f : flat) f *= share;
  at = 0;
  for (const Array &v : values) {
    if (!v.defined()) continue;
    size_t n = static_cast<size_t>(v.shape().numel());
    ops::copy_into(ctx, ops::from_host(ctx, NNRT_DTYPE_F32, v.shape(), flat.data() + at, n * sizeof(float)), v);
    at += n;
  }
}

uint64_t config_hash(const std::string &text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void check_same_on_every_rank(backend::Communicator &comm, uint64_t value, const char *what) {
  std::vector<uint64_t> all(static_cast<size_t>(comm.size()));
  comm.allgather(&value, sizeof value, all.data());
  std::string differ;
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r] != all[0]) differ += cat(differ.empty() ? "" : ", ", r);
  if (!differ.empty()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "distributed training: rank ", comm.rank(), " of ", comm.size(), ": ", what,
         " differ between ranks: rank(s) ", differ, " do not match rank 0; every rank must run the same ", what);
  }
}

}  // namespace nnrt::train
