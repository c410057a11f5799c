// A trainer's options (nnrt_trainer_create's JSON): the optimizer and its schedule, early stopping,
// mixed precision, in-process workers and distributed training, as read and checked once.
#pragma once

#include <cstdint>
#include <string>

#include "backend/context.h"
#include "nnrt/nnrt.h"
#include "train/distributed.h"
#include "train/optimizer.h"
#include "train/schedule.h"

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

  // The learning rate of a 0-based epoch: the optimizer's rate, through the schedule if there is one.
  double lr_for_epoch(int32_t epoch) const;
};

}  // namespace nnrt::train
