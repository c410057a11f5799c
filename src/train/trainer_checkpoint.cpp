// Trainer checkpoints: a model checkpoint plus the optimizer state (tensors
// "optim.<param>.state0" / "state1"), early stopping's best parameters ("optim.<param>.best"), and
// the counters that make training continue exactly where it stopped (nnrt.trainer, a JSON string).
#include <cmath>
#include <limits>

#include "core/error.h"
#include "model/model_tensors.h"
#include "model/param_storage.h"
#include "train/trainer.h"

namespace nnrt::train {

namespace {

// What nnrt.trainer holds. The optimizer's hyperparameters are not in it: they come from the
// restoring trainer's options, so a run can be resumed with, say, a lower learning rate.
struct SavedState {
  std::string optimizer;
  int32_t states = 0;  // state arrays per trained parameter; differs with e.g. SGD momentum
  int64_t iteration = 0, examples_seen = 0;
  int32_t epochs_done = 0;
  uint64_t seed = 0;         // the shuffle seed: each epoch's order follows from (seed, epoch)
  double learning_rate = 0;  // at the time of saving, for people reading the file
  StopReason stop_reason = StopReason::kNotStarted;
  double last_loss = 0, examples_per_second = 0;
  std::vector<EpochRecord> history;
  // Mixed precision's dynamic loss scale.
  double loss_scale = 1;
  int64_t good_steps = 0, skipped_steps = 0;
  // Early stopping: the best epoch so far (-1: none; then no "optim.<param>.best" tensors).
  int32_t best_epoch = -1;
  double best_score = 0;
  int32_t epochs_since_best = 0;
};

std::string state_name(const std::string &param, int k) { return cat(model::kOptimizerPrefix, param, ".state", k); }
std::string best_name(const std::string &param) { return cat(model::kOptimizerPrefix, param, ".best"); }

// JSON has no NaN or Inf: a non-finite loss (an "invalid score" stop) is written as null.
Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json to_json(const SavedState &s) {
  Json history = Json::array();
  for (const EpochRecord &r : s.history) {
    history.push_back({{"epoch", r.epoch},
                       {"loss", number_or_null(r.mean_loss)},
                       {"learning_rate", r.learning_rate},
                       {"validation_score", r.has_validation ? number_or_null(r.validation_score) : Json(nullptr)},
                       {"seconds", r.seconds}});
  }
  return {{"optimizer", s.optimizer},
          {"states", s.states},
          {"iteration", s.iteration},
          {"examples_seen", s.examples_seen},
          {"epochs_done", s.epochs_done},
          {"seed", s.seed},
          {"learning_rate", s.learning_rate},
          {"stop_reason", stop_reason_name(s.stop_reason)},
          {"last_loss", number_or_null(s.last_loss)},
          {"examples_per_second", s.examples_per_second},
          {"history", history},
          {"loss_scale", s.loss_scale},
          {"good_steps", s.good_steps},
          {"skipped_steps", s.skipped_steps},
          {"best_epoch", s.best_epoch},
          {"best_score", number_or_null(s.best_score)},
          {"epochs_since_best", s.epochs_since_best}};
}

const Json &required(JsonReader &r, const std::string &key) {
  if (!r.has(key)) fail(NNRT_ERR_INVALID_ARGUMENT, r.name(key), " is required");
  return r.raw(key);
}

double number_or_nan(JsonReader &r, const std::string &key) {
  const Json &v = required(r, key);
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number())
    fail(NNRT_ERR_INVALID_ARGUMENT, r.name(key), ": expected a number or null, got ", json_excerpt(v));
  return v.get<double>();
}

EpochRecord read_epoch(const Json &j, const std::string &where) {
  JsonReader r(j, where);
  EpochRecord e;
  e.epoch = static_cast<int32_t>(r.require_int("epoch", 0, INT32_MAX));
  e.mean_loss = number_or_nan(r, "loss");
  e.learning_rate = r.get_number("learning_rate", 0);
  e.has_validation = !required(r, "validation_score").is_null();
  e.validation_score = number_or_nan(r, "validation_score");
  e.seconds = r.get_number("seconds", 0, 0);
  r.finish();
  return e;
}

// Reads nnrt.trainer strictly; whatever is wrong is damage to the file: NNRT_ERR_CORRUPT.
SavedState read_state(const std::string &text, const std::string &what) {
  try {
    Json j = parse_json_object(text.c_str(), io::kTrainerKey);
    JsonReader r(j, io::kTrainerKey);
    SavedState s;
    s.optimizer = r.require_string("optimizer");
    s.states = static_cast<int32_t>(r.require_int("states", 0, 2));
    s.iteration = r.require_int("iteration", 0);
    s.examples_seen = r.require_int("examples_seen", 0);
    s.epochs_done = static_cast<int32_t>(r.require_int("epochs_done", 0, INT32_MAX));
    const Json &seed = required(r, "seed");
    if (!seed.is_number_unsigned()) {
      fail(NNRT_ERR_INVALID_ARGUMENT, r.name("seed"), ": expected a non-negative integer, got ", json_excerpt(seed));
    }
    s.seed = seed.get<uint64_t>();
    s.learning_rate = r.get_number("learning_rate", 0);
    std::string stop_reason = r.require_string("stop_reason");
    std::optional<StopReason> reason = stop_reason_from_name(stop_reason);
    if (!reason) fail(NNRT_ERR_INVALID_ARGUMENT, r.name("stop_reason"), ": \"", stop_reason, "\" is not a stop reason");
    s.stop_reason = *reason;
    s.last_loss = number_or_nan(r, "last_loss");
    s.examples_per_second = r.get_number("examples_per_second", 0, 0);
    const Json &history = required(r, "history");
    if (!history.is_array())
      fail(NNRT_ERR_INVALID_ARGUMENT, r.name("history"), ": expected a list, got ", json_excerpt(history));
    for (size_t i = 0; i < history.size(); ++i)
      s.history.push_back(read_epoch(history[i], cat(r.name("history"), "[", i, "]")));
    s.loss_scale = r.get_number("loss_scale", 1, 0);
    s.good_steps = r.require_int("good_steps", 0);
    s.skipped_steps = r.require_int("skipped_steps", 0, s.iteration);  // skipped steps are iterations too
    s.best_epoch = static_cast<int32_t>(r.require_int("best_epoch", -1, INT32_MAX));
    s.best_score = number_or_nan(r, "best_score");
    s.epochs_since_best = static_cast<int32_t>(r.require_int("epochs_since_best", 0, INT32_MAX));
    r.finish();
    return s;
  } catch (const Error &e) {
    fail(NNRT_ERR_CORRUPT, what, ": ", e.what());
  } catch (const Json::exception &e) {  // e.g. a number too large for a double
    fail(NNRT_ERR_CORRUPT, what, ": ", io::kTrainerKey, " is not valid JSON (", e.what(), ")");
  }
}

// Where two configs differ, for the message: "/layers/0/filters: the file has 20, the model 10".
std::string first_difference(const Json &file, const Json &model) {
  Json patch = Json::diff(model, file);
  if (patch.empty()) return "";
  const Json &op = patch.front();
  std::string path = op.value("path", "");
  Json::json_pointer pointer(path);
  std::string in_file = file.contains(pointer) ? json_excerpt(file.at(pointer)) : "nothing";
  std::string in_model = model.contains(pointer) ? json_excerpt(model.at(pointer)) : "nothing";
  return cat(path.empty() ? "/" : path, ": the file has ", in_file, ", this trainer's model ", in_model);
}

// The arrays a restore puts in place, all made before anything changes.
struct RestoredArrays {
  std::vector<Array> params, state0, state1, best;
};

// Reads every parameter and state tensor the trainer needs (`kept0` / `kept1`: whether it keeps
// state k for each parameter) and refuses any "optim.*" tensor it would not use.
RestoredArrays read_arrays(const io::Checkpoint &checkpoint, const model::Model &m, const std::vector<Array> &kept0,
                           const std::vector<Array> &kept1, const SavedState &s, const std::string &what) {
  Context &ctx = m.ctx();
  std::vector<const io::TensorRecord *> records = model::match_params(checkpoint, m, what);
  const std::vector<model::Param> &ps = m.params();
  RestoredArrays out;
  out.state0.resize(ps.size());
  out.state1.resize(ps.size());
  size_t expected = 0;
  auto take = [&](const std::string &name, const Shape &shape, const char *kind) {
    const io::TensorRecord *r = checkpoint.find(name);
    if (!r) fail(NNRT_ERR_CORRUPT, what, ": ", kind, " \"", name, "\" is missing");
    model::check_record(*r, shape, what);
    ++expected;
    return model::array_from_record(ctx, *r);
  };
  for (size_t i = 0; i < ps.size(); ++i) {
    const Shape &shape = ps[i].value.shape();
    out.params.push_back(model::param_storage(ctx, model::array_from_record(ctx, *records[i])));
    if (kept0[i].defined()) out.state0[i] = take(state_name(ps[i].name, 0), shape, "the optimizer state");
    if (kept1[i].defined()) out.state1[i] = take(state_name(ps[i].name, 1), shape, "the optimizer state");
    if (s.best_epoch >= 0) out.best.push_back(take(best_name(ps[i].name), shape, "early stopping's best value"));
  }
  size_t found = 0;
  std::string prefix = model::kOptimizerPrefix;
  for (const io::TensorRecord &t : checkpoint.tensors) found += t.name.compare(0, prefix.size(), prefix) == 0;
  if (found != expected) {
    fail(NNRT_ERR_CORRUPT, what, ": it holds ", found, " \"", prefix, "*\" tensors; its ", s.optimizer, " optimizer",
         s.best_epoch >= 0 ? " and early stopping keep " : " keeps ", expected, " for this model");
  }
  return out;
}

}  // namespace

void Trainer::save(const std::string &path) const {
  // With ranks every rank holds the same state: rank 0 alone writes, so that ranks sharing a
  // folder never write one file at once.
  if (rank() != 0) return;
  model::Model &m = *model_;
  SavedState s;
  s.optimizer = options_.optimizer.type;
  s.states = options_.optimizer.rule.states();
  s.iteration = iteration_;
  s.examples_seen = examples_seen_;
  s.epochs_done = epochs_done_;
  s.seed = options_.seed;
  s.learning_rate = options_.lr_for_epoch(epochs_done_);
  s.stop_reason = stop_reason_;
  s.last_loss = last_loss_;
  s.examples_per_second = last_examples_per_second_;
  s.history = history_;
  s.loss_scale = scaler_.state().scale;
  s.good_steps = scaler_.state().good_steps;
  s.skipped_steps = scaler_.state().skipped_steps;
  const EarlyStopper::State &best = early_stopper_.state();
  s.best_epoch = best.best_params.empty() ? -1 : best.best_epoch;
  s.best_score = best.best_score;
  s.epochs_since_best = best.epochs_since_best;

  io::Checkpoint checkpoint;
  checkpoint.metadata[io::kConfigKey] = m.config().dump(-1, ' ', false, Json::error_handler_t::replace);
  checkpoint.metadata[io::kTrainerKey] = to_json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  {
    // Parameters and states as of one moment: a step updates them under the exclusive lock.
    std::shared_lock<WriterPreferringSharedMutex> read(m.lock());
    checkpoint.tensors = model::param_records(m);
    const std::vector<model::Param> &ps = m.params();
    auto add = [&](const std::string &name, const Array &a) {
      checkpoint.tensors.push_back(model::record_from_array(m.ctx(), name, a));
    };
    for (size_t i = 0; i < ps.size(); ++i) {
      if (state0_[i].defined()) add(state_name(ps[i].name, 0), state0_[i]);
      if (state1_[i].defined()) add(state_name(ps[i].name, 1), state1_[i]);
      if (!best.best_params.empty()) add(best_name(ps[i].name), best.best_params[i]);
    }
  }
  io::write_checkpoint(path, checkpoint);
}

void Trainer::restore(const std::string &path) {
  std::string what = cat("checkpoint '", path, "'");
  model::Model &m = *model_;
  io::Checkpoint checkpoint = io::read_checkpoint(path, m.ctx().options().map_checkpoints);

  // Everything is checked, and every new array made, before anything changes.
  Json config = model::checkpoint_config(checkpoint, what);
  if (config != m.config()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, what, " was saved from a different model config (",
         first_difference(config, m.config()), "); a trainer restores only checkpoints of its own model's config");
  }
  auto trainer_json = checkpoint.metadata.find(io::kTrainerKey);
  if (trainer_json == checkpoint.metadata.end()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, what, " holds a model but no training state (\"", io::kTrainerKey,
         "\"): it was saved by nnrt_model_save; load it with nnrt_model_load, or save with nnrt_trainer_save");
  }
  SavedState s = read_state(trainer_json->second, what);
  const OptimizerConfig &optimizer = options_.optimizer;
  if (s.optimizer != optimizer.type) {
    fail(NNRT_ERR_INVALID_ARGUMENT, what, " was saved by a trainer with optimizer \"", s.optimizer,
         "\"; this trainer's optimizer is \"", optimizer.type, "\"");
  }
  if (s.states != optimizer.rule.states()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, what, ": its ", s.optimizer, " optimizer keeps ", s.states,
         " state arrays per parameter, this trainer's keeps ", optimizer.rule.states(),
         " (are the optimizer settings, e.g. momentum, different?)");
  }
  RestoredArrays arrays = read_arrays(checkpoint, m, state0_, state1_, s, what);

  // Commit: moves and swaps only, which cannot fail, so the trainer is never left half restored.
  {
    std::unique_lock<WriterPreferringSharedMutex> write(m.lock());
    std::vector<model::Param> &params = m.params();
    for (size_t i = 0; i < params.size(); ++i) params[i].value = std::move(arrays.params[i]);
    state0_.swap(arrays.state0);
    state1_.swap(arrays.state1);
    replicas_.sync();  // every data-parallel worker continues from the restored state
  }
  iteration_ = s.iteration;
  examples_seen_ = s.examples_seen;
  epochs_done_ = s.epochs_done;
  options_.seed = s.seed;
  stop_reason_ = s.stop_reason;
  last_loss_ = s.last_loss;
  last_examples_per_second_ = s.examples_per_second;
  history_.swap(s.history);
  scaler_.set_state({s.loss_scale, s.good_steps, s.skipped_steps});
  early_stopper_.set_state({std::move(arrays.best), s.best_epoch, s.best_score, s.epochs_since_best});
}

}  // namespace nnrt::train
