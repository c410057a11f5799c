// A trainer: the optimizer and its state for one model, the training step and the fit loop with
// progress reporting, cancellation and per-epoch validation.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "model/model.h"
#include "nnrt/nnrt.h"
#include "train/optimizer.h"
#include "train/schedule.h"
#include "train/stop_reason.h"

namespace nnrt::train {

// The seed's EarlyStoppingTrainer: stop when the validation metric stops improving, or after a
// number of epochs or minutes, or on a non-finite score; keep the best model.
struct EarlyStopping {
  bool enabled = false;
  bool maximize = true;     // "accuracy" (higher is better) or "loss" (lower is better)
  std::string metric = "accuracy";
  int64_t patience = 0;     // epochs without improvement before stopping; 0: never for that reason
  int64_t max_epochs = 0;   // 0: no limit
  double max_minutes = 0;   // 0: no limit
  double min_delta = 0;     // the smallest change that counts as an improvement
  std::string save_best;    // path the best model is saved to, "" for none
};

// Mixed precision: compute in f16/bf16 with f32 master weights and dynamic loss scaling.
struct Precision {
  nnrt_dtype compute = NNRT_DTYPE_F32;  // F32 means plain f32 training
  std::string name = "f32";
  double initial_scale = 1;
  int64_t growth_interval = 2000;       // good steps before the scale doubles
};

struct TrainerOptions {
  OptimizerConfig optimizer;
  EarlyStopping early_stopping;
  Precision precision;
  double clip_norm = 0;
  bool has_schedule = false;
  Schedule schedule;
  int64_t batch_size = 64;
  bool shuffle = true;
  uint64_t seed = 0;
  int32_t prefetch = 4;

  // Reads nnrt_trainer_create's options; throws NNRT_ERR_INVALID_ARGUMENT naming a bad key.
  static TrainerOptions parse(const char *json, Context &ctx);
};

struct EpochRecord {
  int32_t epoch = 0;
  double mean_loss = 0, learning_rate = 0, validation_score = 0, seconds = 0;
  bool has_validation = false;
};

class Trainer {
 public:
  Trainer(std::shared_ptr<model::Model> model, TrainerOptions options);

  void set_progress(nnrt_progress_fn fn, void *user) {
    progress_fn_ = fn;
    progress_user_ = user;
  }

  // One step on a batch; returns the batch's loss. Throws nnrt::Error (a non-finite loss leaves the
  // parameters unchanged).
  double step(const Array &x, const Array &y);

  // Returns NNRT_OK or NNRT_ERR_CANCELLED; throws nnrt::Error for bad input and failures.
  nnrt_status fit(const std::shared_ptr<data::Dataset> &train, const std::shared_ptr<data::Dataset> &validation,
                  int32_t epochs);

  void cancel() { cancel_requested_ = true; }
  std::string result() const;

  // Checkpoints (trainer_checkpoint.cpp): the model plus optimizer state and counters. restore()
  // changes nothing unless the whole file is valid and matches this trainer. Throw nnrt::Error.
  void save(const std::string &path) const;
  void restore(const std::string &path);

  model::Model &model() { return *model_; }

 private:
  using Clock = std::chrono::steady_clock;
  // One epoch of fit in progress: what its batches added up to, and the progress report.
  struct EpochRun {
    int32_t epoch = 0;
    double learning_rate = 0, loss_sum = 0;
    int64_t batches = 0, examples = 0;
    Clock::time_point start;
    nnrt_progress progress{};
  };
  // fit's steps: train on every batch of an epoch (stopping early sets stop_reason_), then record
  // it, validate, apply early stopping and report the epoch's end.
  EpochRun train_epoch(const std::shared_ptr<data::Dataset> &train, Clock::time_point fit_start);
  void finish_epoch(EpochRun &run, const std::shared_ptr<data::Dataset> &validation);
  void apply_early_stopping(int32_t epoch, double score);
  void restore_best();  // the best epoch's parameters back into the model
  double learning_rate(int32_t epoch) const;  // the schedule's, or the optimizer's fixed rate
  double train_batch(const Array &x, const Array &y, double lr);
  nnrt_dtype compute_dtype() const;
  // Whether the scaled gradients are all finite (mixed precision); adjusts the loss scale.
  bool gradients_finite(const std::vector<Array> &grads);
  double validation_score(const std::shared_ptr<data::Dataset> &validation) const;
  bool improved(double score) const;
  void keep_best(int32_t epoch, double score);
  void check_labels(const Array &y) const;
  void check_dataset(const data::Dataset &d, const char *what) const;
  bool report(nnrt_progress &p);  // true: the callback asked to stop
  // The optimizer's step count, Adam's and AdaMax's `t`: minibatches less the steps mixed precision
  // skipped for overflow, which (as with PyTorch's GradScaler) never reach the optimizer.
  int64_t optimizer_steps() const { return iteration_ - skipped_steps_; }

  std::shared_ptr<model::Model> model_;
  TrainerOptions options_;
  std::vector<Array> state0_, state1_;  // per parameter; undefined where the rule keeps none
  int64_t iteration_ = 0;               // minibatches trained on, skipped ones included
  int64_t examples_seen_ = 0;
  int32_t epochs_done_ = 0;
  std::atomic<bool> cancel_requested_{false};
  nnrt_progress_fn progress_fn_ = nullptr;
  void *progress_user_ = nullptr;

  // Mixed precision.
  double loss_scale_ = 1;
  int64_t good_steps_ = 0, skipped_steps_ = 0;

  // Early stopping: the best parameters so far (copies), and their epoch and score.
  std::vector<Array> best_params_;
  int32_t best_epoch_ = -1;
  double best_score_ = 0;
  int32_t epochs_since_best_ = 0;

  // For result().
  StopReason stop_reason_ = StopReason::kNotStarted;
  double last_loss_ = 0, last_examples_per_second_ = 0;
  std::vector<EpochRecord> history_;
};

}  // namespace nnrt::train
