// Distributed training across processes and hosts: the trainer's "distributed" option, and the
// gradient buckets that are all-reduced over a communicator while backward still runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/comm/communicator.h"
#include "backend/array.h"
#include "backend/context.h"
#include "core/json_options.h"

namespace nnrt::train {

struct DistributedOptions {
  bool enabled = false;
  std::string comm = "mpi";
  double timeout_s = 60;
  double bucket_mib = 25;
  nnrt_dtype compression = NNRT_DTYPE_F32;  // F16 / BF16: buckets travel in 16 bits
  std::string text;                         // the object as given, for the plugin

  // Reads options.distributed; throws NNRT_ERR_INVALID_ARGUMENT naming a bad key.
  static DistributedOptions read(JsonReader &d);
};

// The example-weighted mean gradient over every rank: each rank adds n_local * its mean gradient
// into buckets (parameters in reverse order, as backward produces them), each bucket is
// all-reduced as soon as it is full, and finish() divides by the total example count.
class GradientBuckets {
 public:
  // `shapes`: one per parameter (index order); `trainable`: which take gradients.
  GradientBuckets(backend::Communicator &comm, const std::vector<Shape> &shapes, const std::vector<bool> &trainable,
                  size_t bucket_bytes, nnrt_dtype compression);

  // Starts a step: the rank's examples and loss sum travel in the first bucket.
  void begin(int64_t examples, double loss_sum);
  // Parameter i's gradient (F32 mean over this rank's examples; undefined: none, counts as 0).
  void add(size_t i, const Array &grad);
  // Adds every parameter not added yet (undefined gradients), waits for every bucket, and returns
  // the mean gradients (F32 arrays on ctx) with the total examples and the mean loss.
  void finish(Context &ctx, std::vector<Array> &grads, int64_t &examples, double &mean_loss);

  size_t bucket_count() const { return buckets_.size(); }
  // Seconds finish() waited for buckets still in flight, over all steps: the communication that
  // backward did not hide.
  double wait_seconds() const { return wait_seconds_; }

 private:
  struct Bucket {
    std::vector<size_t> params;  // in the order they fill the bucket
    std::vector<size_t> offsets; // element offset of each parameter in data
    std::vector<float> data;
    std::vector<uint16_t> half;  // compressed copy in flight
    size_t filled = 0;
    backend::Communicator::Request request = nullptr;
  };
  void start(Bucket &b);
  void start_ready();  // starts the full buckets that are next in order

  backend::Communicator &comm_;
  std::vector<Shape> shapes_;
  nnrt_dtype compression_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, size_t>> where_;  // param -> (bucket, index in bucket.params); SIZE_MAX: none
  std::vector<bool> added_;
  float scale_ = 1;  // this rank's example count
  size_t next_ = 0;  // the first bucket not started yet
  double wait_seconds_ = 0;
};

// The mean over ranks of `values` (F32 arrays, in place): parameters and optimizer state in
// "average" mode, batchnorm statistics in "allreduce" mode.
void average_over_ranks(backend::Communicator &comm, Context &ctx, const std::vector<Array> &values);

// A 64-bit FNV-1a hash of text, for the configuration check across ranks.
uint64_t config_hash(const std::string &text);

// Throws NNRT_ERR_INVALID_ARGUMENT on every rank when the ranks' hashes differ, naming them.
void check_same_on_every_rank(backend::Communicator &comm, uint64_t value, const char *what);

}  // namespace nnrt::train
