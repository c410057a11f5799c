// A trainer: the optimizer and its state for one model, the training step (trainer.cpp), the fit
// loop with progress reporting, cancellation and per-epoch validation (trainer_fit.cpp), and
// checkpoints (trainer_checkpoint.cpp). Its other jobs have rooms of their own: the options
// (trainer_options.h), mixed precision's loss scale (loss_scaler.h), early stopping
// (early_stopping.h), in-process workers (replicas.h) and the ranks of distributed training
// (rank_group.h).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "model/model.h"
#include "nnrt/nnrt.h"
#include "train/early_stopping.h"
#include "train/loss_scaler.h"
#include "train/rank_group.h"
#include "train/replicas.h"
#include "train/stop_reason.h"
#include "train/trainer_options.h"

namespace nnrt::train {

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

  // Distributed training: this process's rank and the world size (0 and 1 without "distributed").
  int32_t rank() const { return ranks_.rank(); }
  int32_t world_size() const { return ranks_.size(); }

 private:
  struct Epoch;  // one epoch of a fit in progress (trainer_fit.cpp)

  // The step (trainer.cpp).
  // One step over up to `workers` batches (one per worker); returns the loss reported for it.
  double train_step(const std::vector<data::Batch> &batches, double lr);
  // Forward and backward of one worker; with `send`, each gradient also goes into the buckets as
  // soon as it is made.
  WorkerGradients worker_gradients(size_t worker, const std::vector<Array> &params, const data::Batch &b,
                                   GradientBuckets *send);
  // Clipping, the mixed-precision overflow check and the optimizer update of one set of parameters.
  // Returns false when the step was skipped (overflow).
  bool apply_update(std::vector<Array> &grads, const std::vector<Array> &values, std::vector<Array> &state0,
                    std::vector<Array> &state1, double lr);
  // The mean over ranks (see RankGroup::average), then into every replica.
  void average_over_ranks(bool all_params);
  // "average" mode: every parameter and the optimizer state := the mean over workers and ranks.
  void average_everything();
  void check_labels(const Array &y) const;

  // The fit loop (trainer_fit.cpp).
  void check_fit(const data::Dataset &train, const data::Dataset *validation, int32_t epochs) const;
  // Checks that every rank fits alike, and starts every worker and rank from this model.
  void start_fit(int64_t train_size, int32_t epochs);
  void check_dataset(const data::Dataset &d, const char *what) const;
  // Runs an epoch's steps; false when the fit stops before the epoch is recorded.
  bool train_epoch(Epoch &epoch, const std::shared_ptr<data::Dataset> &train);
  // After a step with a finite loss: its totals and progress report; returns this rank's stop requests.
  int record_step(Epoch &epoch, const std::vector<data::Batch> &batches, double loss);
  // After an epoch's steps: averaging, validation, the record, the log, early stopping, the report.
  void end_epoch(Epoch &epoch, const std::shared_ptr<data::Dataset> &validation);
  bool report(nnrt_progress &p);  // true: the callback asked to stop

  // The optimizer's step count, Adam's and AdaMax's `t`: steps less the ones mixed precision
  // skipped for overflow, which (as with PyTorch's GradScaler) never reach the optimizer.
  int64_t optimizer_steps() const { return iteration_ - scaler_.skipped_steps(); }

  std::shared_ptr<model::Model> model_;
  TrainerOptions options_;
  nnrt_dtype compute_dtype_;            // what the layers compute in
  std::vector<Array> state0_, state1_;  // per parameter; undefined where the rule keeps none
  Replicas replicas_;                   // workers 1..N-1 (worker 0: the model and the state above)
  RankGroup ranks_;                     // alone without "distributed"
  LossScaler scaler_;
  EarlyStopper early_stopper_;
  int64_t steps_since_average_ = 0;
  int64_t iteration_ = 0;               // steps trained, skipped ones included
  int64_t examples_seen_ = 0;
  int32_t epochs_done_ = 0;
  std::atomic<bool> cancel_requested_{false};
  nnrt_progress_fn progress_fn_ = nullptr;
  void *progress_user_ = nullptr;

  // For result().
  StopReason stop_reason_ = StopReason::kNotStarted;
  double last_loss_ = 0, last_examples_per_second_ = 0;
  std::vector<EpochRecord> history_;
};

}  // namespace nnrt::train
