// Trainer::fit: epochs of steps over a dataset, with progress reports, cancellation, stop requests
// that every rank agrees on, per-epoch validation and early stopping.
#include <chrono>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/log.h"
#include "model/layers/output.h"
#include "train/device_load.h"
#include "train/trainer.h"

namespace nnrt::train {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What a rank asks for after a step, as bits; every rank acts on what any rank asked.
enum StopRequest { kStopCallback = 1, kStopCancel = 2, kStopTime = 4, kStopInvalid = 8 };

}  // namespace

// One epoch of a fit in progress: its step count and learning rate, running totals and the
// progress record reported after each step and at its end.
struct Trainer::Epoch {
  Epoch(int32_t number, double lr, int64_t all_batches, int64_t steps, Clock::time_point fit_start,
        const backend::Device &device)
      : number(number), lr(lr), all_batches(all_batches), steps(steps), fit_start(fit_start), device_load(device) {
    progress.struct_size = sizeof progress;
    progress.epoch = number;
    progress.batches_per_epoch = steps;
    progress.validation_score = std::numeric_limits<double>::quiet_NaN();
  }

  int32_t number;
  double lr;
  int64_t all_batches;  // of the epoch's permutation, over all ranks
  int64_t steps;        // each takes one batch per worker on every rank
  Clock::time_point fit_start, start;
  double loss_sum = 0;
  int64_t batches = 0, examples = 0;  // steps recorded, examples they trained on
  nnrt_progress progress{};
  DeviceLoad device_load;
};

nnrt_status Trainer::fit(const std::shared_ptr<data::Dataset> &train, const std::shared_ptr<data::Dataset> &validation,
                         int32_t epochs) {
  check_fit(*train, validation.get(), epochs);
  stop_reason_ = StopReason::kCompleted;
  const auto fit_start = Clock::now();
  start_fit(train->size(), epochs);
  const int64_t all_batches = data::BatchIterator::epoch_batches(train->size(), options_.batch_size);
  for (int32_t e = 0; e < epochs; ++e) {
    if (early_stopper_.epoch_limit_reached(epochs_done_)) {
      stop_reason_ = StopReason::kMaxEpochs;
      break;
    }
    Epoch epoch(epochs_done_, options_.lr_for_epoch(epochs_done_), all_batches,
                ranks_.steps_per_epoch(all_batches, options_.parallel.workers), fit_start,
                *model_->context_ptr()->device());
    if (!train_epoch(epoch, train)) break;
    end_epoch(epoch, validation);
    if (stop_reason_ != StopReason::kCompleted) break;
  }
  if (stop_reason_ == StopReason::kCancelled) return NNRT_ERR_CANCELLED;
  // With early stopping the model ends on its best epoch, as the seed's EarlyStoppingTrainer returns.
  if (early_stopper_.has_best()) {
    std::unique_lock<WriterPreferringSharedMutex> write = model_->lock_for_writing();
    early_stopper_.restore_best(*model_);
    replicas_.sync();
  }
  return NNRT_OK;
}

void Trainer::check_fit(const data::Dataset &train, const data::Dataset *validation, int32_t epochs) const {
  if (epochs < 0) fail(NNRT_ERR_INVALID_ARGUMENT, "fit: epochs must be >= 0, got ", epochs);
  check_dataset(train, "training");
  if (validation) check_dataset(*validation, "validation");
}

void Trainer::start_fit(int64_t train_size, int32_t epochs) {
  // Every rank must walk the same epochs: the same data, the same number of calls.
  ranks_.check_same_fit(train_size, epochs);
  // Training starts from the model as it is now (set_param, restore or an earlier fit); with
  // ranks, from rank 0's.
  std::unique_lock<WriterPreferringSharedMutex> write = model_->lock_for_writing();
  ranks_.broadcast_params(*model_);
  replicas_.sync();
  steps_since_average_ = 0;
}

void Trainer::check_dataset(const data::Dataset &d, const char *what) const {
  if (d.size() == 0) fail(NNRT_ERR_INVALID_ARGUMENT, "fit: the ", what, " dataset is empty");
  if (d.example_shape() != model_->input_shapes()[0]) {
    fail(NNRT_ERR_SHAPE, "fit: the ", what, " dataset's examples are ", to_string(d.example_shape()),
         " but the model's input is ", to_string(model_->input_shapes()[0]));
  }
  const model::OutputLayer &out = *model_->output_layer();
  if (d.has_class_labels()) {
    if (!out.class_loss()) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "fit: the ", what, " dataset has class labels, but the loss \"", out.loss_name,
           "\" needs float targets");
    }
    if (d.label_shape() != out.label_shape()) {
      fail(NNRT_ERR_SHAPE, "fit: the ", what, " dataset's examples have class labels shaped ", to_string(d.label_shape()),
           " but the model's output ", out.where(), " takes ", to_string(out.label_shape()),
           out.label_shape().rank == 0 ? " (one per example)" : " (one per position)");
    }
    if (d.num_classes() > out.units) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "fit: the ", what, " dataset has labels up to ", d.num_classes() - 1,
           " but the model has ", out.units, " classes");
    }
  } else if (out.positions > 1 ? d.target_shape() != out.out_shape : d.target_shape().numel() != out.units) {
    if (out.positions > 1) {
      fail(NNRT_ERR_SHAPE, "fit: the ", what, " dataset's targets are ", to_string(d.target_shape()),
           " but the model's outputs are ", to_string(out.out_shape));
    }
    fail(NNRT_ERR_SHAPE, "fit: the ", what, " dataset's targets are ", to_string(d.target_shape()), " but the model has ",
         out.units, " outputs");
  }
}

bool Trainer::train_epoch(Epoch &epoch, const std::shared_ptr<data::Dataset> &train) {
  const int32_t workers = options_.parallel.workers;
  // Each epoch its own permutation, fixed by (seed, epoch): resuming reproduces the order. With
  // ranks, each takes its own shard of it.
  std::vector<int64_t> shard;
  if (ranks_.distributed()) shard = ranks_.shard(epoch.all_batches, workers);
  data::BatchIterator batches(train, model_->context_ptr(), options_.batch_size, options_.shuffle,
                              options_.seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(epoch.number + 1),
                              options_.prefetch * workers, compute_dtype_, ranks_.distributed() ? &shard : nullptr);
  epoch.start = Clock::now();
  data::Batch b;
  for (int64_t st = 0; st < epoch.steps; ++st) {
    // Alone, a cancel stops before the next step; with ranks, every rank takes the step first and
    // all stop together after it.
    if (!ranks_.distributed() && cancel_requested_.exchange(false)) {
      stop_reason_ = StopReason::kCancelled;
      break;
    }
    // One batch per worker; the last step of an epoch may have fewer (with ranks, none).
    std::vector<data::Batch> step_batches;
    while (static_cast<int32_t>(step_batches.size()) < workers && batches.next(b)) step_batches.push_back(std::move(b));
    double loss = train_step(step_batches, epoch.lr);
    int mine = std::isfinite(loss) ? record_step(epoch, step_batches, loss) : kStopInvalid;
    if (ranks_.distributed() && cancel_requested_.exchange(false)) mine |= kStopCancel;
    int stop = ranks_.any_rank(mine);
    if (stop & kStopCancel) {
      stop_reason_ = StopReason::kCancelled;
    } else if (stop & kStopInvalid) {
      log::warn(cat("epoch ", epoch.number, ", step ", st, ": the loss is not finite",
                    ranks_.distributed() ? " on some rank" : "", "; training stops (invalid score)"));
      stop_reason_ = StopReason::kInvalidScore;
    } else if (stop & kStopCallback) {
      stop_reason_ = StopReason::kCallback;
    } else if (stop & kStopTime) {
      stop_reason_ = StopReason::kMaxTime;
    }
    if (stop) break;
  }
  // Out of time, the epoch that ran steps is still recorded (and judged).
  if (stop_reason_ == StopReason::kMaxTime) return epoch.batches > 0;
  return stop_reason_ == StopReason::kCompleted;
}

int Trainer::record_step(Epoch &epoch, const std::vector<data::Batch> &batches, double loss) {
  int64_t examples = 0;
  for (const data::Batch &b : batches) examples += b.n;
  epoch.loss_sum += loss;
  epoch.examples += examples;
  examples_seen_ += examples;
  double seconds = seconds_since(epoch.start);
  nnrt_progress &p = epoch.progress;
  p.iteration = iteration_;
  p.examples_seen = examples_seen_;
  p.loss = loss;
  p.learning_rate = epoch.lr;
  p.examples_per_second = seconds > 0 ? static_cast<double>(epoch.examples) / seconds : 0;
  p.epoch_end = 0;
  p.batch = epoch.batches++;
  epoch.device_load.fill(p);
  int mine = report(p) ? kStopCallback : 0;
  // With ranks, rank 0's clock decides, so that every rank stops on the same step.
  if (rank() == 0 && early_stopper_.out_of_time(seconds_since(epoch.fit_start))) mine |= kStopTime;
  return mine;
}

void Trainer::end_epoch(Epoch &epoch, const std::shared_ptr<data::Dataset> &validation) {
  if (options_.parallel.mode == ParallelMode::average && (steps_since_average_ > 0 || ranks_.distributed())) {
    // Validation, early stopping and checkpoints see the averaged model.
    std::unique_lock<WriterPreferringSharedMutex> write = model_->lock_for_writing();
    average_everything();
  }
  EpochRecord rec;
  rec.epoch = epoch.number;
  rec.mean_loss = epoch.batches ? epoch.loss_sum / static_cast<double>(epoch.batches) : 0;
  rec.learning_rate = epoch.lr;
  rec.seconds = seconds_since(epoch.start);
  last_examples_per_second_ = rec.seconds > 0 ? static_cast<double>(epoch.examples) / rec.seconds : 0;
  // Every rank given a validation set evaluates it, at the same time as rank 0, so that none
  // waits long for rank 0's score, the one that counts.
  if (validation) {
    rec.validation_score = early_stopper_.validation_score(*model_, validation);
    rec.has_validation = true;
  } else if (early_stopper_.enabled()) {
    rec.validation_score = early_stopper_.training_loss_score(rec.mean_loss);
  }
  ranks_.share_rank0_score(rec.has_validation, rec.validation_score);
  history_.push_back(rec);
  ++epochs_done_;
  nnrt_progress &p = epoch.progress;
  p.epoch_end = 1;
  p.validation_score = rec.has_validation ? rec.validation_score : std::numeric_limits<double>::quiet_NaN();
  p.examples_per_second = last_examples_per_second_;
  if (rank() == 0) {
    log::info(cat("epoch ", epoch.number, ": loss ", rec.mean_loss, ", ", last_examples_per_second_, " examples/s",
                  rec.has_validation ? cat(", validation ", rec.validation_score) : ""));
  }
  // With ranks every rank holds the same model: rank 0 alone writes the best one.
  std::optional<StopReason> stop = early_stopper_.end_epoch(epoch.number, rec.validation_score, *model_, rank() == 0);
  if (stop) stop_reason_ = *stop;
  epoch.device_load.fill(p);
  if (ranks_.any_rank(report(p) ? kStopCallback : 0)) stop_reason_ = StopReason::kCallback;
}

bool Trainer::report(nnrt_progress &p) { return progress_fn_ && progress_fn_(&p, progress_user_) != 0; }

}  // namespace nnrt::train
