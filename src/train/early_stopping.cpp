#include "train/early_stopping.h"

#include <cmath>

#include "train/evaluation.h"

namespace nnrt::train {

bool EarlyStopper::epoch_limit_reached(int32_t epoch) const {
  return config_.enabled && config_.max_epochs > 0 && epoch >= config_.max_epochs;
}

bool EarlyStopper::out_of_time(double seconds) const {
  return config_.enabled && config_.max_minutes > 0 && seconds > config_.max_minutes * 60;
}

double EarlyStopper::validation_score(const model::Model &model,
                                      const std::shared_ptr<data::Dataset> &validation) const {
  if (config_.enabled && config_.metric == "loss") return mean_loss(model, validation);
  return evaluate(model, validation).score();
}

double EarlyStopper::training_loss_score(double mean_loss) const {
  return config_.maximize ? -mean_loss : mean_loss;
}

std::optional<StopReason> EarlyStopper::end_epoch(int32_t epoch, double score, const model::Model &model,
                                                  bool write_best) {
  if (!config_.enabled) return std::nullopt;
  if (!std::isfinite(score)) return StopReason::kInvalidScore;
  if (improved(score)) {
    keep_best(epoch, score, model, write_best);
  } else if (config_.patience > 0 && ++state_.epochs_since_best >= config_.patience) {
    return StopReason::kPatience;
  }
  return std::nullopt;
}

void EarlyStopper::restore_best(model::Model &model) const {
  std::vector<model::Param> &ps = model.params();
  for (size_t i = 0; i < ps.size(); ++i) ops::copy_into(model.ctx(), state_.best_params[i], ps[i].value);
}

bool EarlyStopper::improved(double score) const {
  if (state_.best_epoch < 0) return true;
  return config_.maximize ? score > state_.best_score + config_.min_delta
                          : score < state_.best_score - config_.min_delta;
}

void EarlyStopper::keep_best(int32_t epoch, double score, const model::Model &model, bool write_best) {
  state_.best_epoch = epoch;
  state_.best_score = score;
  state_.epochs_since_best = 0;
  Context &ctx = model.ctx();
  state_.best_params.clear();
  for (const model::Param &p : model.params()) state_.best_params.push_back(ops::cast(ctx, p.value, NNRT_DTYPE_F32));
  if (!config_.save_best.empty() && write_best) model.save(config_.save_best);
}

}  // namespace nnrt::train
