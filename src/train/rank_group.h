// The ranks of distributed training as the trainer sees them (options.distributed): joining the
// group, rank 0's parameters and decisions for every rank, averaging over ranks, and each rank's
// share of an epoch's batches. A trainer without "distributed" is a group of one, where every
// collective does nothing, so that the training loop reads the same either way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/comm/communicator.h"
#include "core/json_options.h"
#include "model/model.h"
#include "train/distributed.h"

namespace nnrt::train {

class RankGroup {
 public:
  RankGroup() = default;  // alone: rank 0 of 1

  // Opens the communicator of `options`, checks that every rank builds the same model and trainer
  // (the model's config and `trainer_options`, the canonical options text), and makes the
  // gradient buckets for the model's parameters. Throws nnrt::Error on every rank when they differ.
  void join(const DistributedOptions &options, const model::Model &model, const std::string &trainer_options);

  bool distributed() const { return comm_ != nullptr; }
  int32_t rank() const { return comm_ ? comm_->rank() : 0; }
  int32_t size() const { return comm_ ? comm_->size() : 1; }
  // The buckets gradients are all-reduced in; null alone.
  GradientBuckets *buckets() { return buckets_.get(); }

  // Throws NNRT_ERR_INVALID_ARGUMENT on every rank unless every rank's fit walks the same epochs:
  // the same training set size and epoch count.
  void check_same_fit(int64_t train_size, int32_t epochs);
  // Every parameter of `model` := rank 0's. The caller holds the model's write lock.
  void broadcast_params(model::Model &model);
  // The mean over ranks of the model's non-trainable parameters (batchnorm statistics), or with
  // `all_params` of every parameter and the optimizer state `state0` / `state1`, in place. Returns
  // whether anything was averaged (never alone).
  bool average(model::Model &model, const std::vector<Array> &state0, const std::vector<Array> &state1,
               bool all_params);
  // The union (bitwise or) of every rank's `requests` bits, so that all act on any rank's request.
  int any_rank(int requests);
  // Every rank takes rank 0's validation score, so that all stop on the same epoch.
  void share_rank0_score(bool &has_validation, double &score);

  // An epoch's steps when each takes `workers` batches on every rank, out of `all_batches`.
  int64_t steps_per_epoch(int64_t all_batches, int32_t workers) const;
  // This rank's batches of the epoch's permutation: step s takes the next size() * workers
  // batches, rank r the r-th group of `workers` of them (disjoint shards, the same number of steps
  // on every rank; a rank left without a batch in the last step takes part with no examples).
  std::vector<int64_t> shard(int64_t all_batches, int32_t workers) const;

  // The group's entries of nnrt_trainer_result (rank, world_size, comm, buckets); none alone.
  void add_to_result(Json &result) const;

 private:
  std::shared_ptr<backend::Communicator> comm_;
  std::unique_ptr<GradientBuckets> buckets_;
};

}  // namespace nnrt::train
