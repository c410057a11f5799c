#include "train/trainer.h"

#include <cmath>
#include <limits>

#include "core/dtype.h"
#include "core/error.h"
#include "core/log.h"
#include "model/layers/output.h"
#include "train/evaluation.h"

namespace nnrt::train {

TrainerOptions TrainerOptions::parse(const char *text, Context &ctx) {
  Json j = parse_json_object(text, "options");
  JsonReader r(j, "options");
  TrainerOptions o;
  if (r.has("optimizer")) {
    JsonReader opt = r.get_object("optimizer");
    o.optimizer = read_optimizer(opt);
  } else {
    Json empty = Json::object();
    JsonReader opt(empty, "options.optimizer");
    o.optimizer = read_optimizer(opt);
  }
  ops::OptimizerRule &rule = o.optimizer.rule;
  rule.l1 = r.get_number("l1", 0, 0);
  rule.l2 = r.get_number("l2", 0, 0);
  rule.weight_decay = r.get_number("weight_decay", rule.weight_decay, 0);
  rule.clip_value = r.get_number("clip_value", 0, 0);
  o.clip_norm = r.get_number("clip_norm", 0, 0);
  if (r.has("schedule")) {
    JsonReader s = r.get_object("schedule");
    o.schedule = Schedule::read(s);
    o.has_schedule = true;
  }
  o.batch_size = r.get_int("batch_size", 64, 1, int64_t(1) << 24);
  o.shuffle = r.get_bool("shuffle", true);
  o.seed = r.has("seed") ? static_cast<uint64_t>(r.get_int("seed", 0, 0)) : ctx.next_seed();
  o.prefetch = static_cast<int32_t>(r.get_int("prefetch", 4, 0, 1024));
  int64_t workers = r.get_int("workers", 1, 1, 4096);
  std::string mode = r.get_string("mode", "allreduce");
  if (mode != "allreduce" && mode != "average") {
    fail(NNRT_ERR_INVALID_ARGUMENT, "options.mode: expected \"allreduce\" or \"average\", got \"", mode, "\"");
  }
  r.get_int("averaging_frequency", 1, 1);
  if (workers > 1) {
    fail(NNRT_ERR_UNSUPPORTED, "options.workers: this version trains with one worker; got ", workers);
  }
  o.precision.name = r.get_string("precision", "f32");
  if (o.precision.name == "mixed_f16") {
    // f16 overflows above 65504 and underflows below 6e-8: gradients need a scale, found dynamically.
    o.precision.compute = NNRT_DTYPE_F16;
    o.precision.initial_scale = 65536;
  } else if (o.precision.name == "mixed_bf16") {
    o.precision.compute = NNRT_DTYPE_BF16;  // f32's exponent range: no scale needed to start with
  } else if (o.precision.name != "f32") {
    fail(NNRT_ERR_INVALID_ARGUMENT, "options.precision: expected \"f32\", \"mixed_f16\" or \"mixed_bf16\", got \"",
         o.precision.name, "\"");
  }
  o.precision.initial_scale = r.get_number("loss_scale", o.precision.initial_scale, 1, 1e30);
  if (r.has("early_stopping")) {
    JsonReader es = r.get_object("early_stopping");
    EarlyStopping &e = o.early_stopping;
    e.enabled = true;
    e.metric = es.get_string("metric", "accuracy");
    if (e.metric != "accuracy" && e.metric != "loss") {
      fail(NNRT_ERR_INVALID_ARGUMENT, es.name("metric"), ": expected \"accuracy\" or \"loss\", got \"", e.metric, "\"");
    }
    e.maximize = e.metric == "accuracy";
    e.patience = es.get_int("patience", 0, 0);
    e.max_epochs = es.get_int("max_epochs", 0, 0);
    e.max_minutes = es.get_number("max_minutes", 0, 0);
    e.min_delta = es.get_number("min_delta", 0, 0);
    e.save_best = es.get_string("save_best", "");
    es.finish();
  }
  if (r.has("distributed")) {
    fail(NNRT_ERR_UNSUPPORTED, "options.distributed: this build has no communicator plugin for distributed training");
  }
  r.finish();
  return o;
}

Trainer::Trainer(std::shared_ptr<model::Model> model, TrainerOptions options)
    : model_(std::move(model)), options_(std::move(options)), loss_scale_(options_.precision.initial_scale) {
  if (!model_->output_layer()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "the model's output (", model_->nodes()[model_->output_node()].layer->where(),
         ") is not an output layer: training needs a layer of type \"output\" with a loss");
  }
  Context &ctx = model_->ctx();
  int32_t states = options_.optimizer.rule.states();
  for (const model::Param &p : model_->params()) {
    bool keep = p.spec.trainable;
    state0_.push_back(keep && states >= 1 ? ops::zeros(ctx, NNRT_DTYPE_F32, p.value.shape()) : Array());
    state1_.push_back(keep && states >= 2 ? ops::zeros(ctx, NNRT_DTYPE_F32, p.value.shape()) : Array());
  }
}

void Trainer::check_labels(const Array &y) const {
  const model::OutputLayer &out = *model_->output_layer();
  int64_t n = y.rank() > 0 ? y.dim(0) : 0;
  out.check_target(y, n);
  if (y.dtype() == NNRT_DTYPE_I32 || y.dtype() == NNRT_DTYPE_I64) {
    std::vector<double> labels = ops::to_doubles(y);
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] < 0 || labels[i] >= static_cast<double>(out.units)) {
        fail(NNRT_ERR_INVALID_ARGUMENT, "label ", static_cast<int64_t>(labels[i]), " of example ", i,
             " is outside the model's classes [0, ", out.units, ")");
      }
    }
  }
}

double Trainer::step(const Array &x, const Array &y) {
  model_->check_input(x, "step");
  if (y.rank() == 0 || y.dim(0) != x.dim(0)) {
    fail(NNRT_ERR_SHAPE, "step: x holds ", x.dim(0), " examples but y is ", to_string(y.shape()));
  }
  check_labels(y);
  double loss = train_batch(x, y, learning_rate(epochs_done_));
  if (!std::isfinite(loss)) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "the loss is ", loss,
         " (not finite): the inputs hold NaN or Inf, or training diverged; the parameters were not updated");
  }
  examples_seen_ += x.dim(0);
  return loss;
}

nnrt_dtype Trainer::compute_dtype() const {
  return options_.precision.compute != NNRT_DTYPE_F32 ? options_.precision.compute
                                                       : model_->ctx().options().default_dtype;
}

double Trainer::train_batch(const Array &x, const Array &y, double lr) {
  model::Model &m = *model_;
  Context &ctx = m.ctx();
  const model::OutputLayer &out = *m.output_layer();
  nnrt_dtype dtype = compute_dtype();
  bool mixed = dtype != NNRT_DTYPE_F32;
  // Exclusive: the forward pass updates batchnorm statistics and the step updates the weights.
  std::unique_lock<std::shared_mutex> write(m.lock());
  model::Pass pass{ctx, true, static_cast<uint64_t>(iteration_), dtype, {}};
  // In mixed precision the layers see half-precision copies of the f32 master weights.
  std::vector<Array> params = m.params_as(dtype);
  model::Activations acts = m.forward(pass, {model::as_dtype(ctx, x, dtype)}, params);
  const model::Saved &saved = acts.saved[m.output_node()];
  double loss = ops::item(out.loss(pass, saved, y));
  last_loss_ = loss;
  if (!std::isfinite(loss)) return loss;  // no update: the caller decides what a bad score means
  Array dz = out.loss_gradient(pass, saved, y, mixed ? loss_scale_ : 1.0);
  std::vector<Array> grads = m.backward(pass, acts, params, m.output_node(), dz);

  std::vector<model::Param> &ps = m.params();
  for (size_t i = 0; i < ps.size(); ++i) {
    if (grads[i].defined()) grads[i] = model::as_dtype(ctx, grads[i], NNRT_DTYPE_F32);
  }
  double scale = mixed ? loss_scale_ : 1.0;
  double grad_scale = 1 / scale;
  if (mixed || options_.clip_norm > 0) {
    double sq = 0;
    for (const Array &g : grads)
      if (g.defined()) sq += ops::item(ops::reduce(ctx, NNRT_REDUCE_SUM_SQUARES, g, ops::all_axes(g.rank()), false));
    if (mixed) {
      if (!std::isfinite(sq)) {
        // Overflow in half precision: skip this step and try again with a smaller scale.
        loss_scale_ = std::max(1.0, loss_scale_ / 2);
        good_steps_ = 0;
        ++skipped_steps_;
        ++iteration_;  // a minibatch seen, but no optimizer step: Adam's t does not move
        return loss;
      }
      if (++good_steps_ >= options_.precision.growth_interval && options_.precision.compute == NNRT_DTYPE_F16) {
        loss_scale_ = std::min(loss_scale_ * 2, 16777216.0);
        good_steps_ = 0;
      }
    }
    double norm = std::sqrt(sq) / scale;
    if (options_.clip_norm > 0 && norm > options_.clip_norm) grad_scale *= options_.clip_norm / (norm + 1e-6);
  }
  ++iteration_;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!ps[i].spec.trainable || !grads[i].defined()) continue;
    ops::optimizer_update(ctx, options_.optimizer.rule, grads[i], ps[i].value, state0_[i].defined() ? &state0_[i] : nullptr,
                          state1_[i].defined() ? &state1_[i] : nullptr, lr, optimizer_steps(), grad_scale);
  }
  return loss;
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
    if (d.num_classes() > out.units) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "fit: the ", what, " dataset has labels up to ", d.num_classes() - 1,
           " but the model has ", out.units, " classes");
    }
  } else if (d.target_shape().numel() != out.units) {
    fail(NNRT_ERR_SHAPE, "fit: the ", what, " dataset's targets are ", to_string(d.target_shape()), " but the model has ",
         out.units, " outputs");
  }
}

bool Trainer::report(nnrt_progress &p) { return progress_fn_ && progress_fn_(&p, progress_user_) != 0; }

double Trainer::validation_score(const std::shared_ptr<data::Dataset> &validation) const {
  const EarlyStopping &es = options_.early_stopping;
  if (es.enabled && es.metric == "loss") return mean_loss(*model_, validation);
  return evaluate(*model_, validation).score();
}

bool Trainer::improved(double score) const {
  if (best_epoch_ < 0) return true;
  const EarlyStopping &es = options_.early_stopping;
  return es.maximize ? score > best_score_ + es.min_delta : score < best_score_ - es.min_delta;
}

void Trainer::keep_best(int32_t epoch, double score) {
  best_epoch_ = epoch;
  best_score_ = score;
  epochs_since_best_ = 0;
  Context &ctx = model_->ctx();
  best_params_.clear();
  for (const model::Param &p : model_->params()) best_params_.push_back(ops::cast(ctx, p.value, NNRT_DTYPE_F32));
  if (!options_.early_stopping.save_best.empty()) model_->save(options_.early_stopping.save_best);
}

double Trainer::learning_rate(int32_t epoch) const {
  return options_.has_schedule ? options_.schedule.rate(options_.optimizer.learning_rate, epoch)
                               : options_.optimizer.learning_rate;
}

nnrt_status Trainer::fit(const std::shared_ptr<data::Dataset> &train, const std::shared_ptr<data::Dataset> &validation,
                         int32_t epochs) {
  if (epochs < 0) fail(NNRT_ERR_INVALID_ARGUMENT, "fit: epochs must be >= 0, got ", epochs);
  check_dataset(*train, "training");
  if (validation) check_dataset(*validation, "validation");
  const EarlyStopping &es = options_.early_stopping;
  stop_reason_ = StopReason::kCompleted;
  auto fit_start = Clock::now();
  for (int32_t e = 0; e < epochs && stop_reason_ == StopReason::kCompleted; ++e) {
    if (es.enabled && es.max_epochs > 0 && epochs_done_ >= es.max_epochs) {
      stop_reason_ = StopReason::kMaxEpochs;
      break;
    }
    EpochRun run = train_epoch(train, fit_start);
    // An epoch cut short counts only when time ran out after it had trained on something.
    bool whole = stop_reason_ == StopReason::kCompleted || (stop_reason_ == StopReason::kMaxTime && run.batches > 0);
    if (whole) finish_epoch(run, validation);
  }
  // With early stopping the model ends on its best epoch, as the seed's EarlyStoppingTrainer returns.
  if (es.enabled && !best_params_.empty() && stop_reason_ != StopReason::kCancelled) restore_best();
  return stop_reason_ == StopReason::kCancelled ? NNRT_ERR_CANCELLED : NNRT_OK;
}

Trainer::EpochRun Trainer::train_epoch(const std::shared_ptr<data::Dataset> &train, Clock::time_point fit_start) {
  const EarlyStopping &es = options_.early_stopping;
  EpochRun run;
  run.epoch = epochs_done_;
  run.learning_rate = learning_rate(run.epoch);
  run.start = Clock::now();
  // Each epoch its own permutation, fixed by (seed, epoch): resuming reproduces the order.
  data::BatchIterator batches(train, model_->context_ptr(), options_.batch_size, options_.shuffle,
                              options_.seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(run.epoch + 1),
                              options_.prefetch, compute_dtype());
  nnrt_progress &p = run.progress;
  p.struct_size = sizeof p;
  p.epoch = run.epoch;
  p.batches_per_epoch = batches.batches();
  p.validation_score = std::numeric_limits<double>::quiet_NaN();
  data::Batch b;
  while (true) {
    if (cancel_requested_.exchange(false)) {
      stop_reason_ = StopReason::kCancelled;
      break;
    }
    if (!batches.next(b)) break;
    double loss = train_batch(b.x, b.y, run.learning_rate);
    if (!std::isfinite(loss)) {
      log::warn(cat("epoch ", run.epoch, ", batch ", run.batches, ": the loss is ", loss, "; training stops (invalid score)"));
      stop_reason_ = StopReason::kInvalidScore;
      break;
    }
    run.loss_sum += loss;
    run.examples += b.n;
    examples_seen_ += b.n;
    double seconds = std::chrono::duration<double>(Clock::now() - run.start).count();
    p.iteration = iteration_;
    p.examples_seen = examples_seen_;
    p.loss = loss;
    p.learning_rate = run.learning_rate;
    p.examples_per_second = seconds > 0 ? static_cast<double>(run.examples) / seconds : 0;
    p.epoch_end = 0;
    p.batch = run.batches++;
    if (report(p)) {
      stop_reason_ = StopReason::kCallback;
      break;
    }
    if (es.enabled && es.max_minutes > 0 &&
        std::chrono::duration<double>(Clock::now() - fit_start).count() > es.max_minutes * 60) {
      stop_reason_ = StopReason::kMaxTime;
      break;
    }
  }
  return run;
}

void Trainer::finish_epoch(EpochRun &run, const std::shared_ptr<data::Dataset> &validation) {
  const EarlyStopping &es = options_.early_stopping;
  EpochRecord rec;
  rec.epoch = run.epoch;
  rec.mean_loss = run.batches ? run.loss_sum / static_cast<double>(run.batches) : 0;
  rec.learning_rate = run.learning_rate;
  rec.seconds = std::chrono::duration<double>(Clock::now() - run.start).count();
  last_examples_per_second_ = rec.seconds > 0 ? static_cast<double>(run.examples) / rec.seconds : 0;
  if (validation) {
    rec.validation_score = validation_score(validation);
    rec.has_validation = true;
  } else if (es.enabled) {
    rec.validation_score = es.maximize ? -rec.mean_loss : rec.mean_loss;  // training loss stands in
  }
  history_.push_back(rec);
  ++epochs_done_;
  log::info(cat("epoch ", rec.epoch, ": loss ", rec.mean_loss, ", ", last_examples_per_second_, " examples/s",
                rec.has_validation ? cat(", validation ", rec.validation_score) : ""));
  if (es.enabled) apply_early_stopping(rec.epoch, rec.validation_score);
  nnrt_progress &p = run.progress;
  p.epoch_end = 1;
  p.validation_score = rec.has_validation ? rec.validation_score : std::numeric_limits<double>::quiet_NaN();
  p.examples_per_second = last_examples_per_second_;
  if (report(p)) stop_reason_ = StopReason::kCallback;
}

void Trainer::apply_early_stopping(int32_t epoch, double score) {
  if (!std::isfinite(score)) {
    stop_reason_ = StopReason::kInvalidScore;
  } else if (improved(score)) {
    keep_best(epoch, score);
  } else if (options_.early_stopping.patience > 0 && ++epochs_since_best_ >= options_.early_stopping.patience) {
    stop_reason_ = StopReason::kPatience;
  }
}

void Trainer::restore_best() {
  std::unique_lock<std::shared_mutex> write(model_->lock());
  std::vector<model::Param> &ps = model_->params();
  for (size_t i = 0; i < ps.size(); ++i) ops::copy_into(model_->ctx(), best_params_[i], ps[i].value);
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
  if (options_.early_stopping.enabled) {
    best_epoch = best_epoch_;
    best = best_score_;
    j["metric"] = options_.early_stopping.metric;
  }
  j["best_epoch"] = best_epoch >= 0 ? Json(best_epoch) : Json(nullptr);
  j["best_score"] = best_epoch >= 0 ? Json(best) : Json(nullptr);
  j["precision"] = options_.precision.name;
  if (options_.precision.compute != NNRT_DTYPE_F32) {
    j["loss_scale"] = loss_scale_;
    j["skipped_steps"] = skipped_steps_;
  }
  j["last_loss"] = last_loss_;
  j["examples_per_second"] = last_examples_per_second_;
  j["history"] = history;
  return j.dump();
}

}  // namespace nnrt::train
