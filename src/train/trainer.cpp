#include "train/trainer.h"

#include <cmath>
#include <functional>
#include <limits>

#include "core/error.h"
#include "model/layers/output.h"

namespace nnrt::train {

namespace {

// Zero optimizer state for each trainable parameter, where the rule `keeps` one; else undefined.
std::vector<Array> zero_state(const model::Model &m, bool keeps) {
  std::vector<Array> state;
  for (const model::Param &p : m.params()) {
    state.push_back(keeps && p.spec.trainable ? ops::zeros(m.ctx(), NNRT_DTYPE_F32, p.value.shape()) : Array());
  }
  return state;
}

// In mixed precision the precision's dtype, else the context's.
nnrt_dtype compute_dtype(const TrainerOptions &options, const model::Model &m) {
  return options.precision.compute != NNRT_DTYPE_F32 ? options.precision.compute : m.ctx().options().default_dtype;
}

// A model that has an output layer and whose every layer can be trained.
const std::shared_ptr<model::Model> &with_output_layer(const std::shared_ptr<model::Model> &m) {
  m->require_one_input("training");
  for (const model::Node &node : m->nodes()) {
    std::string why = node.layer->why_not_trainable();
    if (!why.empty()) fail(NNRT_ERR_UNSUPPORTED, "the model cannot be trained: ", node.layer->where(), ": ", why);
  }
  if (!m->output_layer()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "the model's output (", m->nodes()[m->output_node()].layer->where(),
         ") is not an output layer: training needs a layer of type \"output\" with a loss");
  }
  return m;
}

}  // namespace

Trainer::Trainer(std::shared_ptr<model::Model> model, TrainerOptions options)
    : model_(with_output_layer(model)),
      options_(std::move(options)),
      compute_dtype_(compute_dtype(options_, *model_)),
      state0_(zero_state(*model_, options_.optimizer.rule.states() >= 1)),
      state1_(zero_state(*model_, options_.optimizer.rule.states() >= 2)),
      replicas_(options_.parallel, *model_, state0_, state1_),
      scaler_(options_.precision, compute_dtype_),
      early_stopper_(options_.early_stopping) {
  if (!options_.distributed.enabled) return;
  ranks_.join(options_.distributed, *model_, options_.canonical);
  std::unique_lock<WriterPreferringSharedMutex> write = model_->lock_for_writing();
  ranks_.broadcast_params(*model_);
  replicas_.sync();
}

void Trainer::check_labels(const Array &y) const {
  const model::OutputLayer &out = *model_->output_layer();
  int64_t n = y.rank() > 0 ? y.dim(0) : 0;
  out.check_target(y, n);
  if (y.dtype() == NNRT_DTYPE_I32 || y.dtype() == NNRT_DTYPE_I64) {
    std::vector<double> labels = ops::to_doubles(y);
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] < 0 || labels[i] >= static_cast<double>(out.units)) {
        // With a label per position, the example is the label's row.
        int64_t example = static_cast<int64_t>(i) / out.positions;
        fail(NNRT_ERR_INVALID_ARGUMENT, "label ", static_cast<int64_t>(labels[i]), " of example ", example,
             out.positions > 1 ? cat(" (position ", static_cast<int64_t>(i) % out.positions, ")") : std::string(),
             " is outside the model's classes [0, ", out.units, ")");
      }
    }
  }
}

double Trainer::step(const Array &x, const Array &y) {
  model_->check_input(x, "step");
  // Predictions read a BOOL input as 0 and 1 (a mask); training examples are numbers.
  if (x.dtype() == NNRT_DTYPE_BOOL) fail(NNRT_ERR_DTYPE, "step: x: expected a numeric array, got bool");
  if (y.rank() == 0 || y.dim(0) != x.dim(0)) {
    fail(NNRT_ERR_SHAPE, "step: x holds ", x.dim(0), " examples but y is ", to_string(y.shape()));
  }
  check_labels(y);
  // With several workers the minibatch is split between them in contiguous slices.
  const int64_t n = x.dim(0), workers = options_.parallel.workers;
  const int64_t per = (n + workers - 1) / workers;
  std::vector<data::Batch> batches;
  for (int64_t begin = 0; begin < n; begin += per) {
    data::Batch b;
    b.n = std::min(per, n - begin);
    b.x = workers == 1 ? x : x.slice(0, begin, b.n);
    b.y = workers == 1 ? y : y.slice(0, begin, b.n);
    batches.push_back(std::move(b));
  }
  double loss = train_step(batches, options_.lr_for_epoch(epochs_done_));
  if (!std::isfinite(loss)) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "the loss is ", loss,
         " (not finite): the inputs hold NaN or Inf, or training diverged; the parameters were not updated");
  }
  examples_seen_ += x.dim(0);
  return loss;
}

WorkerGradients Trainer::worker_gradients(size_t worker, const std::vector<Array> &params, const data::Batch &b,
                                          GradientBuckets *send) {
  model::Model &m = *model_;
  Context &ctx = m.ctx();
  const model::OutputLayer &out = *m.output_layer();
  // Each worker its own dropout masks: the step counter is spread over the workers.
  uint64_t step = static_cast<uint64_t>(iteration_) * static_cast<uint64_t>(options_.parallel.workers) + worker;
  model::Pass pass{ctx, true, step, compute_dtype_, {}};
  model::Activations acts = m.forward(pass, {model::as_dtype(ctx, b.x, compute_dtype_)}, params);
  const model::Saved &saved = acts.saved[m.output_node()];
  WorkerGradients g;
  g.n = b.n;
  g.loss = ops::item(out.loss(pass, saved, b.y));
  if (send) send->begin(g.n, g.loss * static_cast<double>(g.n));
  if (!std::isfinite(g.loss)) return g;  // no update: the caller decides what a bad score means
  Array dz = out.loss_gradient(pass, saved, b.y, scaler_.scale());
  std::function<void(size_t, const Array &)> on_grad;
  if (send) {
    // Each gradient leaves for the other ranks as soon as backward has made it.
    on_grad = [&](size_t i, const Array &grad) {
      send->add(i, grad.defined() ? model::as_dtype(ctx, grad, NNRT_DTYPE_F32) : grad);
    };
  }
  g.grads = m.backward(pass, acts, params, m.output_node(), dz, on_grad);
  for (Array &grad : g.grads)
    if (grad.defined()) grad = model::as_dtype(ctx, grad, NNRT_DTYPE_F32);
  return g;
}

double Trainer::train_step(const std::vector<data::Batch> &batches, double lr) {
  model::Model &m = *model_;
  Context &ctx = m.ctx();
  const Parallel &par = options_.parallel;
  // Exclusive: the forward pass updates batchnorm statistics and the step updates the weights.
  std::unique_lock<WriterPreferringSharedMutex> write = m.lock_for_writing();
  // In mixed precision the layers see half-precision copies of the f32 master weights.
  std::vector<Array> shared = m.params_as(compute_dtype_);
  const size_t k = batches.size();
  // One worker on one rank sends its gradients while backward runs; otherwise the workers'
  // gradients are combined first and then sent.
  GradientBuckets *buckets = ranks_.buckets();
  GradientBuckets *overlap = par.mode == ParallelMode::allreduce && k == 1 ? buckets : nullptr;
  std::vector<WorkerGradients> work(k);
  auto run = [&](size_t w) {
    work[w] = worker_gradients(w, replicas_.params_for(w, compute_dtype_, shared), batches[w], overlap);
  };
  if (k == 1) {
    run(0);
  } else if (k > 1) {
    // The workers share the context's threads: each is one task of the pool, and the ops inside
    // it spread over whichever threads are free. On the pool's own threads, since they run ops.
    ctx.pool().parallel_for_own_threads(static_cast<int64_t>(k), 1, [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) run(static_cast<size_t>(w));
    });
  }
  int64_t n = 0;
  double loss_sum = 0;
  for (const WorkerGradients &g : work) {
    n += g.n;
    loss_sum += g.loss * static_cast<double>(g.n);
  }
  double loss = n > 0 ? loss_sum / static_cast<double>(n) : last_loss_;
  bool finite = std::isfinite(loss);

  std::vector<model::Param> &ps = m.params();
  std::vector<Array> values;
  for (const model::Param &p : ps) values.push_back(p.value);
  if (par.mode == ParallelMode::allreduce) {
    std::vector<Array> grads;
    if (finite && k > 0) grads = combine_gradients(ctx, work, n);
    if (buckets) {
      if (!overlap) {
        buckets->begin(n, loss_sum);
        for (size_t i = 0; i < grads.size(); ++i) buckets->add(i, grads[i]);
      }
      int64_t total = 0;
      buckets->finish(ctx, grads, total, loss);  // every rank gets the same loss and gradients
    }
    last_loss_ = loss;
    if (!std::isfinite(loss)) return loss;
    apply_update(grads, values, state0_, state1_, lr);
    ++iteration_;
    replicas_.average(false);  // the batchnorm statistics each worker gathered
    average_over_ranks(false);
    return loss;
  }
  // "average": every worker with a batch updates its own replica.
  last_loss_ = loss;
  if (!finite) return loss;
  for (size_t w = 0; w < k; ++w) {
    if (w == 0) {
      apply_update(work[0].grads, values, state0_, state1_, lr);
    } else {
      Replica &r = replicas_.of_worker(w);
      apply_update(work[w].grads, r.params, r.state0, r.state1, lr);
    }
  }
  ++iteration_;
  if (++steps_since_average_ >= par.averaging_frequency) average_everything();
  if (!par.report_score_after_averaging && k > 0) last_loss_ = loss = work[0].loss;
  return loss;
}

bool Trainer::apply_update(std::vector<Array> &grads, const std::vector<Array> &values, std::vector<Array> &state0,
                           std::vector<Array> &state1, double lr) {
  Context &ctx = model_->ctx();
  const std::vector<model::Param> &ps = model_->params();
  double scale = scaler_.scale();
  double grad_scale = 1 / scale;
  if (scaler_.active() || options_.clip_norm > 0) {
    double sq = 0;
    for (const Array &g : grads)
      if (g.defined()) sq += ops::item(ops::reduce(ctx, NNRT_REDUCE_SUM_SQUARES, g, ops::all_axes(g.rank()), false));
    if (scaler_.active() && !scaler_.accept(sq)) return false;  // overflow: skipped
    double norm = std::sqrt(sq) / scale;
    if (options_.clip_norm > 0 && norm > options_.clip_norm) grad_scale *= options_.clip_norm / (norm + 1e-6);
  }
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!ps[i].spec.trainable || !grads[i].defined()) continue;
    ops::optimizer_update(ctx, options_.optimizer.rule, grads[i], values[i], state0[i].defined() ? &state0[i] : nullptr,
                          state1[i].defined() ? &state1[i] : nullptr, lr, optimizer_steps() + 1, grad_scale);
  }
  return true;
}

void Trainer::average_over_ranks(bool all_params) {
  if (ranks_.average(*model_, state0_, state1_, all_params)) replicas_.sync();
}

void Trainer::average_everything() {
  replicas_.average(true);
  average_over_ranks(true);
  steps_since_average_ = 0;
}

std::string Trainer::result() const {
  Json j;
  j["epochs"] = epochs_done_;
  j["iterations"] = iteration_;
  j["stop_reason"] = stop_reason_name(stop_reason_);
  Json history = Json::array();
  int32_t best_epoch = -1;
  double best = -std::numeric_limits<double>::infinity();
  for (const EpochRecord &r : history_) {
    Json h = {{"epoch", r.epoch}, {"loss", r.mean_loss}, {"learning_rate", r.learning_rate}, {"seconds", r.seconds}};
    h["validation_score"] = r.has_validation ? Json(r.validation_score) : Json(nullptr);
    history.push_back(h);
    if (r.has_validation && r.validation_score > best) {
      best = r.validation_score;
      best_epoch = r.epoch;
    }
  }
  if (early_stopper_.enabled()) {
    best_epoch = early_stopper_.state().best_epoch;
    best = early_stopper_.state().best_score;
    j["metric"] = early_stopper_.config().metric;
  }
  j["best_epoch"] = best_epoch >= 0 ? Json(best_epoch) : Json(nullptr);
  j["best_score"] = best_epoch >= 0 ? Json(best) : Json(nullptr);
  j["precision"] = options_.precision.name;
  if (options_.precision.compute != NNRT_DTYPE_F32) {
    j["loss_scale"] = scaler_.state().scale;
    j["skipped_steps"] = scaler_.skipped_steps();
  }
  j["workers"] = options_.parallel.workers;
  ranks_.add_to_result(j);
  j["mode"] = options_.parallel.mode == ParallelMode::allreduce ? "allreduce" : "average";
  j["last_loss"] = last_loss_;
  j["examples_per_second"] = last_examples_per_second_;
  j["history"] = history;
  return j.dump();
}

}  // namespace nnrt::train
