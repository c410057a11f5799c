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
#include "train/distributed.h"
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

// Data parallelism inside one process (DL4J's ParallelWrapper): `workers` replicas of the model,
// each fed its own batches from one shared iterator.
enum class ParallelMode {
  allreduce,  // gradients combined every step: N workers at batch b train as 1 worker at batch N*b
  average,    // each replica steps alone; parameters and optimizer state averaged periodically
};

struct Parallel {
  int32_t workers = 1;
  ParallelMode mode = ParallelMode::allreduce;
  int64_t averaging_frequency = 1;          // steps between averagings ("average" mode)
  bool report_score_after_averaging = true;  // the reported loss: mean over workers, else worker 0's
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
  Parallel parallel;
  DistributedOptions distributed;
  std::string canonical;  // the options as parsed, key-sorted: what the ranks compare

  // Reads nnrt_trainer_create's options; throws NNRT_ERR_INVALID_ARGUMENT naming a bad key.
  static TrainerOptions parse(const char *json, Context &ctx);
};

struct EpochRecord {
  int32_t epoch = 0;
  double mean_loss = 0, learning_rate = 0, validation_score = 0, seconds = 0;
  bool has_validation = false;
};

// One worker's share of a step: its loss and f32 gradients (mean over its n examples).
struct WorkerGradients {
  std::vector<Array> grads;
  double loss = 0;
  int64_t n = 0;
};

// A worker's own copies (workers 1..N-1; worker 0 is the model and the trainer's state). In
// "allreduce" mode only the non-trainable state (batchnorm statistics) is copied, since every worker
// reads the same weights; in "average" mode every parameter and the optimizer state.
struct Replica {
  std::vector<Array> params, state0, state1;
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
  int32_t rank() const { return comm_ ? comm_->rank() : 0; }
  int32_t world_size() const { return comm_ ? comm_->size() : 1; }

 private:
  // One step over up to `workers` batches (one per worker); returns the loss reported for it.
  double train_step(const std::vector<data::Batch> &batches, double lr);
  // Forward and backward of one worker; with `send`, each gradient also goes into the buckets as
  // soon as it is made.
  WorkerGradients worker_gradients(size_t worker, const std::vector<Array> &params, const data::Batch &b,
                                   nnrt_dtype dtype, GradientBuckets *send);
  // The example-weighted mean of the workers' gradients.
  std::vector<Array> combine(const std::vector<WorkerGradients> &work, int64_t n) const;
  // Clipping, the mixed-precision overflow check and the optimizer update of one set of parameters.
  // Returns false when the step was skipped (overflow).
  bool apply_update(std::vector<Array> &grads, const std::vector<Array> &values, std::vector<Array> &state0,
                    std::vector<Array> &state1, double lr);
  // The parameters worker w computes with, in `dtype` where the layer computes in it.
  std::vector<Array> worker_params(size_t w, nnrt_dtype dtype, const std::vector<Array> &shared) const;
  void make_replicas();
  void sync_replicas();         // every replica := the model (and the trainer's optimizer state)
  void average_replicas(bool all_params);  // the model := the mean over workers, then sync_replicas()
  // Distributed: join the group, check every rank runs the same config, take rank 0's parameters.
  void join_group();
  void broadcast_from_rank0();  // every parameter := rank 0's
  void average_state_over_ranks(bool all_params);
  // The step's stop requests of every rank: bit 0 callback, bit 1 cancel, bit 2 time limit.
  int stop_requests(int mine);
  nnrt_dtype compute_dtype() const;
  // Whether the scaled gradients are all finite (mixed precision); adjusts the loss scale.
  bool gradients_finite(const std::vector<Array> &grads);
  double validation_score(const std::shared_ptr<data::Dataset> &validation) const;
  bool improved(double score) const;
  void keep_best(int32_t epoch, double score);
  void check_labels(const Array &y) const;
  void check_dataset(const data::Dataset &d, const char *what) const;
  bool report(nnrt_progress &p);  // true: the callback asked to stop
  // The optimizer's step count, Adam's and AdaMax's `t`: steps less the ones mixed precision
  // skipped for overflow, which (as with PyTorch's GradScaler) never reach the optimizer.
  int64_t optimizer_steps() const { return iteration_ - skipped_steps_; }

  std::shared_ptr<model::Model> model_;
  TrainerOptions options_;
  std::vector<Array> state0_, state1_;  // per parameter; undefined where the rule keeps none
  std::vector<Replica> replicas_;       // workers 1..N-1
  std::shared_ptr<backend::Communicator> comm_;  // distributed training only
  std::unique_ptr<GradientBuckets> buckets_;
  int64_t steps_since_average_ = 0;
  int64_t iteration_ = 0;               // steps trained, skipped ones included
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
