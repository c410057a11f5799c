// Data parallelism inside one process (options "workers" and "mode"): the replicas of workers
// 1..N-1, the parameters each worker computes with, the averaging that keeps them together, and
// the mean of the workers' gradients. Worker 0 is the model itself with the trainer's optimizer
// state.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"
#include "train/trainer_options.h"

namespace nnrt::train {

// One worker's share of a step: its loss and f32 gradients (mean over its n examples).
struct WorkerGradients {
  std::vector<Array> grads;
  double loss = 0;
  int64_t n = 0;
};

// The example-weighted mean of the workers' gradients: the gradient of the whole step's mean loss.
std::vector<Array> combine_gradients(Context &ctx, const std::vector<WorkerGradients> &work, int64_t n);

// A worker's own copies, per parameter (undefined where the worker shares worker 0's). In
// "allreduce" mode only the non-trainable state (batchnorm statistics) is copied, since every worker
// reads the same weights; in "average" mode every parameter and the optimizer state.
struct Replica {
  std::vector<Array> params, state0, state1;
};

class Replicas {
 public:
  // `model`, `state0`, `state1`: worker 0's parameters and optimizer state, which outlive this.
  // Makes the replicas as copies of them.
  Replicas(const Parallel &parallel, model::Model &model, const std::vector<Array> &state0,
           const std::vector<Array> &state1);

  // Every replica := worker 0 (after a restore, a broadcast or a new fit).
  void sync();
  // Worker 0 := the mean over the workers (of the non-trainable parameters only, unless
  // `all_params`: then of every parameter and the optimizer state), copied back into the replicas.
  void average(bool all_params);

  // The parameters worker `w` computes with: `shared` (worker 0's, in the compute dtype) with the
  // worker's own copies in place, cast to `dtype` where the layer computes in it.
  std::vector<Array> params_for(size_t w, nnrt_dtype dtype, const std::vector<Array> &shared) const;
  // Worker w's replica, for w in 1..workers-1.
  Replica &of_worker(size_t w) { return replicas_[w - 1]; }

 private:
  ParallelMode mode_;
  model::Model &model_;
  const std::vector<Array> &state0_, &state1_;
  std::vector<Replica> replicas_;  // workers 1..N-1
};

}  // namespace nnrt::train
