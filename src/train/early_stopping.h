// Early stopping during a fit (options.early_stopping): the epoch and time limits, the score an
// epoch is judged by, patience, and a copy of the best parameters so far, which the model gets back
// when the fit ends (as the seed's EarlyStoppingTrainer returns its best model).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "data/dataset.h"
#include "model/model.h"
#include "train/stop_reason.h"
#include "train/trainer_options.h"

namespace nnrt::train {

class EarlyStopper {
 public:
  explicit EarlyStopper(EarlyStopping config) : config_(std::move(config)) {}

  const EarlyStopping &config() const { return config_; }
  bool enabled() const { return config_.enabled; }

  // Whether the 0-based `epoch` is at or past max_epochs, so that the fit stops before it.
  bool epoch_limit_reached(int32_t epoch) const;
  // Whether max_minutes have passed, `seconds` after the fit started.
  bool out_of_time(double seconds) const;

  // The validation set's score: the mean loss with the metric "loss", else evaluate()'s score.
  double validation_score(const model::Model &model, const std::shared_ptr<data::Dataset> &validation) const;
  // Without a validation set the training loss stands in, signed as the metric compares.
  double training_loss_score(double mean_loss) const;

  // Judges a finished epoch by its score: a better one is kept (and written to save_best when
  // `write_best`); returns the reason to stop (a non-finite score, patience run out), or nothing
  // to go on.
  std::optional<StopReason> end_epoch(int32_t epoch, double score, const model::Model &model, bool write_best);

  // Whether a best model is kept (early stopping is on and an epoch was judged).
  bool has_best() const { return config_.enabled && !state_.best_params.empty(); }
  // Copies the best parameters into the model (has_best() only). The caller holds the model's
  // write lock.
  void restore_best(model::Model &model) const;

  // What a checkpoint keeps.
  struct State {
    std::vector<Array> best_params;  // F32 copies; empty before the first epoch is judged
    int32_t best_epoch = -1;
    double best_score = 0;
    int32_t epochs_since_best = 0;
  };
  const State &state() const { return state_; }
  void set_state(State s) { state_ = std::move(s); }

 private:
  bool improved(double score) const;
  void keep_best(int32_t epoch, double score, const model::Model &model, bool write_best);

  EarlyStopping config_;
  State state_;
};

}  // namespace nnrt::train
