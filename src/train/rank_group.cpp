#include "train/rank_group.h"

#include "backend/ops.h"
#include "core/error.h"

namespace nnrt::train {

void RankGroup::join(const DistributedOptions &d, const model::Model &model, const std::string &trainer_options) {
  comm_ = backend::Communicator::open(d.comm, d.text, d.timeout_s);
  if (!comm_->host_memory()) {
    fail(NNRT_ERR_UNSUPPORTED, "options.distributed.comm: the \"", d.comm, "\" communicator moves device memory, and ",
         "this version's trainer all-reduces gradients from host memory: use \"mpi\"");
  }
  // A silent divergence is worse than no training: every rank must build the same model and
  // trainer. The check is itself a collective, so every rank gets the error.
  check_same_on_every_rank(*comm_, config_hash(model.config().dump() + "\n" + trainer_options),
                           "model configs and trainer options");
  std::vector<Shape> shapes;
  std::vector<bool> trainable;
  for (const model::Param &p : model.params()) {
    shapes.push_back(p.value.shape());
    trainable.push_back(p.spec.trainable);
  }
  buckets_ = std::make_unique<GradientBuckets>(*comm_, shapes, trainable,
                                               static_cast<size_t>(d.bucket_mib * 1024 * 1024), d.compression);
}

void RankGroup::check_same_fit(int64_t train_size, int32_t epochs) {
  if (!comm_) return;
  check_same_on_every_rank(*comm_, static_cast<uint64_t>(train_size), "training set sizes");
  check_same_on_every_rank(*comm_, static_cast<uint64_t>(epochs), "epoch counts given to fit");
}

void RankGroup::broadcast_params(model::Model &model) {
  if (!comm_) return;
  Context &ctx = model.ctx();
  for (model::Param &p : model.params()) {
    std::vector<float> host(static_cast<size_t>(p.value.shape().numel()));
    size_t bytes = host.size() * sizeof(float);
    p.value.copy_to_host(host.data(), bytes);
    comm_->broadcast(host.data(), bytes, 0);
    if (comm_->rank() != 0) ops::copy_into(ctx, ops::from_host(ctx, NNRT_DTYPE_F32, p.value.shape(), host.data(), bytes), p.value);
  }
}

bool RankGroup::average(model::Model &model, const std::vector<Array> &state0, const std::vector<Array> &state1,
                        bool all_params) {
  if (!comm_) return false;
  std::vector<Array> values;
  const std::vector<model::Param> &ps = model.params();
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!all_params && ps[i].spec.trainable) continue;
    values.push_back(ps[i].value);
    if (all_params) {
      values.push_back(state0[i]);
      values.push_back(state1[i]);
    }
  }
  if (values.empty()) return false;
  average_over_ranks(*comm_, model.ctx(), values);
  return true;
}

int RankGroup::any_rank(int requests) {
  if (!comm_) return requests;
  float bits[4] = {};
  for (int k = 0; k < 4; ++k) bits[k] = (requests >> k) & 1 ? 1.f : 0.f;
  comm_->allreduce_sum(bits, 4, NNRT_DTYPE_F32);
  int all = 0;
  for (int k = 0; k < 4; ++k)
    if (bits[k] > 0) all |= 1 << k;
  return all;
}

void RankGroup::share_rank0_score(bool &has_validation, double &score) {
  if (!comm_) return;
  double shared[2] = {has_validation ? 1.0 : 0.0, score};
  comm_->broadcast(shared, sizeof shared, 0);
  has_validation = shared[0] != 0;
  score = shared[1];
}

int64_t RankGroup::steps_per_epoch(int64_t all_batches, int32_t workers) const {
  const int64_t group = static_cast<int64_t>(workers) * size();
  return (all_batches + group - 1) / group;
}

std::vector<int64_t> RankGroup::shard(int64_t all_batches, int32_t workers) const {
  const int64_t group = static_cast<int64_t>(workers) * size();
  const int64_t steps = steps_per_epoch(all_batches, workers);
  std::vector<int64_t> mine;
  for (int64_t st = 0; st < steps; ++st) {
    for (int64_t w = 0; w < workers; ++w) {
      int64_t id = st * group + static_cast<int64_t>(rank()) * workers + w;
      if (id < all_batches) mine.push_back(id);
    }
  }
  return mine;
}

void RankGroup::add_to_result(Json &j) const {
  if (!comm_) return;
  j["rank"] = comm_->rank();
  j["world_size"] = comm_->size();
  j["comm"] = comm_->name();
  if (buckets_) {
    j["allreduce_buckets"] = buckets_->bucket_count();
    j["comm_wait_seconds"] = buckets_->wait_seconds();
  }
}

}  // namespace nnrt::train
