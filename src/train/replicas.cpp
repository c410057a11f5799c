#include "train/replicas.h"

namespace nnrt::train {

std::vector<Array> combine_gradients(Context &ctx, const std::vector<WorkerGradients> &work, int64_t n) {
  std::vector<Array> grads = work[0].grads;
  if (work.size() == 1) return grads;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    Array sum = ops::scale(ctx, grads[i], static_cast<double>(work[0].n) / static_cast<double>(n));
    for (size_t w = 1; w < work.size(); ++w) {
      if (work[w].grads.empty() || !work[w].grads[i].defined()) continue;
      sum = ops::add(ctx, sum, ops::scale(ctx, work[w].grads[i], static_cast<double>(work[w].n) / static_cast<double>(n)));
    }
    grads[i] = sum;
  }
  return grads;
}

Replicas::Replicas(const Parallel &parallel, model::Model &model, const std::vector<Array> &state0,
                   const std::vector<Array> &state1)
    : mode_(parallel.mode),
      model_(model),
      state0_(state0),
      state1_(state1),
      replicas_(static_cast<size_t>(parallel.workers - 1)) {
  sync();
}

void Replicas::sync() {
  Context &ctx = model_.ctx();
  const std::vector<model::Param> &ps = model_.params();
  bool all = mode_ == ParallelMode::average;
  auto copy = [&](const Array &src) { return src.defined() ? ops::cast(ctx, src, src.dtype()) : Array(); };
  for (Replica &r : replicas_) {
    r.params.assign(ps.size(), Array());
    r.state0.assign(ps.size(), Array());
    r.state1.assign(ps.size(), Array());
    for (size_t i = 0; i < ps.size(); ++i) {
      if (all || !ps[i].spec.trainable) r.params[i] = copy(ps[i].value);
      if (all) {
        r.state0[i] = copy(state0_[i]);
        r.state1[i] = copy(state1_[i]);
      }
    }
  }
}

void Replicas::average(bool all_params) {
  if (replicas_.empty()) return;
  Context &ctx = model_.ctx();
  std::vector<model::Param> &ps = model_.params();
  const double share = 1.0 / static_cast<double>(replicas_.size() + 1);
  // mean = (worker 0 + sum of replicas) / workers, written into worker 0's own array.
  auto average = [&](const Array &mine, auto member, size_t i) {
    if (!mine.defined()) return;
    Array sum = mine;
    for (const Replica &r : replicas_) sum = ops::add(ctx, sum, (r.*member)[i]);
    ops::unary_into(ctx, NNRT_UNARY_LINEAR, sum, mine, share);
  };
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!all_params && ps[i].spec.trainable) continue;
    average(ps[i].value, &Replica::params, i);
    if (all_params) {
      average(state0_[i], &Replica::state0, i);
      average(state1_[i], &Replica::state1, i);
    }
  }
  // Copy the means back into the replicas' own arrays.
  for (Replica &r : replicas_) {
    for (size_t i = 0; i < ps.size(); ++i) {
      if (r.params[i].defined()) ops::copy_into(ctx, ps[i].value, r.params[i]);
      if (r.state0[i].defined()) ops::copy_into(ctx, state0_[i], r.state0[i]);
      if (r.state1[i].defined()) ops::copy_into(ctx, state1_[i], r.state1[i]);
    }
  }
}

std::vector<Array> Replicas::params_for(size_t w, nnrt_dtype dtype, const std::vector<Array> &shared) const {
  if (w == 0) return shared;
  const Replica &r = replicas_[w - 1];
  if (mode_ == ParallelMode::average) return model_.params_as(dtype, r.params);
  std::vector<Array> params = shared;  // the same weights; the worker's own statistics
  for (size_t i = 0; i < params.size(); ++i)
    if (r.params[i].defined()) params[i] = r.params[i];
  return params;
}

}  // namespace nnrt::train
