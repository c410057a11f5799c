#include "train/trainer.h"

#include <cmath>
#include <limits>

#include "core/dtype.h"
#include "core/error.h"
#include "core/log.h"
#include "model/layers/output.h"
#include "train/device_load.h"
#include "train/evaluation.h"

namespace nnrt::train {

using Clock = std::chrono::steady_clock;

namespace {
constexpr int64_t kMaxWorkers = 64;
}

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
  Parallel &par = o.parallel;
  par.workers = static_cast<int32_t>(r.get_int("workers", 1, 1, kMaxWorkers));
  std::string mode = r.get_string("mode", "allreduce");
  if (mode == "allreduce") {
    par.mode = ParallelMode::allreduce;
  } else if (mode == "average") {
    par.mode = ParallelMode::average;
  } else {
    fail(NNRT_ERR_INVALID_ARGUMENT, "options.mode: expected \"allreduce\" or \"average\", got \"", mode, "\"");
  }
  par.averaging_frequency = r.get_int("averaging_frequency", 1, 1);
  par.report_score_after_averaging = r.get_bool("report_score_after_averaging", true);
  if (par.workers > 1 && !ctx.device()->host_memory()) {
    fail(NNRT_ERR_UNSUPPORTED, "options.workers: ", par.workers, " workers need one device each, and this version runs ",
         "in-process workers only on a CPU backend (they share its threads); the backend \"", ctx.device()->name(),
         "\" is a device backend: use one rank per device (\"distributed\") instead");
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
  if (par.workers > 1 && par.mode == ParallelMode::average && o.precision.compute != NNRT_DTYPE_F32) {
    // Each replica would keep its own loss scale and skip its own steps: not supported.
    fail(NNRT_ERR_UNSUPPORTED, "options.mode: \"average\" with several workers needs \"precision\": \"f32\", got \"",
         o.precision.name, "\" (use \"mode\": \"allreduce\" for mixed precision)");
  }
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
    JsonReader d = r.get_object("distributed");
    o.distributed = DistributedOptions::read(d);
    o.distributed.text = j.at("distributed").dump();
  }
  r.finish();
  o.canonical = j.dump();
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
  make_replicas();
  if (options_.distributed.enabled) join_group();
}

void Trainer::join_group() {
  const DistributedOptions &d = options_.distributed;
  comm_ = backend::Communicator::open(d.comm, d.text, d.timeout_s);
  if (!comm_->host_memory()) {
    fail(NNRT_ERR_UNSUPPORTED, "options.distributed.comm: the \"", d.comm, "\" communicator moves device memory, and ",
         "this version's trainer all-reduces gradients from host memory: use \"mpi\"");
  }
  // A silent divergence is worse than no training: every rank must build the same model and
  // trainer. The check is itself a collective, so every rank gets the error.
  check_same_on_every_rank(*comm_, config_hash(model_->config().dump() + "\n" + options_.canonical),
                           "model configs and trainer options");
  std::vector<Shape> shapes;
  std::vector<bool> trainable;
  for (const model::Param &p : model_->params()) {
    shapes.push_back(p.value.shape());
    trainable.push_back(p.spec.trainable);
  }
  buckets_ = std::make_unique<GradientBuckets>(*comm_, shapes, trainable,
                                               static_cast<size_t>(d.bucket_mib * 1024 * 1024), d.compression);
  std::unique_lock<WriterPreferringSharedMutex> write(model_->lock());
  broadcast_from_rank0();
  sync_replicas();
}

void Trainer::broadcast_from_rank0() {
  Context &ctx = model_->ctx();
  for (model::Param &p : model_->params()) {
    std::vector<float> host(static_cast<size_t>(p.value.shape().numel()));
    size_t bytes = host.size() * sizeof(float);
    p.value.copy_to_host(host.data(), bytes);
    comm_->broadcast(host.data(), bytes, 0);
    if (comm_->rank() != 0) ops::copy_into(ctx, ops::from_host(ctx, NNRT_DTYPE_F32, p.value.shape(), host.data(), bytes), p.value);
  }
}

void Trainer::average_state_over_ranks(bool all_params) {
  std::vector<Array> values;
  const std::vector<model::Param> &ps = model_->params();
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!all_params && ps[i].spec.trainable) continue;
    values.push_back(ps[i].value);
    if (all_params) {
      values.push_back(state0_[i]);
      values.push_back(state1_[i]);
    }
  }
  if (values.empty()) return;
  average_over_ranks(*comm_, model_->ctx(), values);
  sync_replicas();
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
  double lr = options_.has_schedule ? options_.schedule.rate(options_.optimizer.learning_rate, epochs_done_)
                                    : options_.optimizer.learning_rate;
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
  double loss = train_step(batches, lr);
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

void Trainer::make_replicas() {
  replicas_.assign(static_cast<size_t>(options_.parallel.workers - 1), Replica{});
  sync_replicas();
}

void Trainer::sync_replicas() {
  Context &ctx = model_->ctx();
  const std::vector<model::Param> &ps = model_->params();
  bool all = options_.parallel.mode == ParallelMode::average;
  auto copy = [&](const Array &src) { return src.defined() ? ops::cast(ctx, src, src.dtype()) : Array(); };
  for (Replica &r : replicas_) {
    r.params.assign(ps.size(), Array());
    r.state0.assign(ps.size(), Array());
    r.state1.assign(ps.size(), Array());
    for (size_t i = 0; i < ps.size(); ++i) {
      if (all || !ps[i].spec.trainable) r.params[i] = copy(ps[i].value);
      if (all) {
        r.state0[i] = copy(state0_[i]);
        r.state1[i] = copy(state1_[i]);
      }
    }
  }
}

void Trainer::average_replicas(bool all_params) {
  if (replicas_.empty()) return;
  Context &ctx = model_->ctx();
  std::vector<model::Param> &ps = model_->params();
  const double share = 1.0 / static_cast<double>(replicas_.size() + 1);
  // mean = (model + sum of replicas) / workers, written into the model's own array.
  auto average = [&](const Array &mine, auto member, size_t i) {
    if (!mine.defined()) return;
    Array sum = mine;
    for (const Replica &r : replicas_) sum = ops::add(ctx, sum, (r.*member)[i]);
    ops::unary_into(ctx, NNRT_UNARY_LINEAR, sum, mine, share);
  };
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!all_params && ps[i].spec.trainable) continue;
    average(ps[i].value, &Replica::params, i);
    if (all_params) {
      average(state0_[i], &Replica::state0, i);
      average(state1_[i], &Replica::state1, i);
    }
  }
  // Copy the means back into the replicas' own arrays.
  for (Replica &r : replicas_) {
    for (size_t i = 0; i < ps.size(); ++i) {
      if (r.params[i].defined()) ops::copy_into(ctx, ps[i].value, r.params[i]);
      if (r.state0[i].defined()) ops::copy_into(ctx, state0_[i], r.state0[i]);
      if (r.state1[i].defined()) ops::copy_into(ctx, state1_[i], r.state1[i]);
    }
  }
}

std::vector<Array> Trainer::worker_params(size_t w, nnrt_dtype dtype, const std::vector<Array> &shared) const {
  if (w == 0) return shared;
  const Replica &r = replicas_[w - 1];
  if (options_.parallel.mode == ParallelMode::average) return model_->params_as(dtype, r.params);
  std::vector<Array> params = shared;  // the same weights; the worker's own statistics
  for (size_t i = 0; i < params.size(); ++i)
    if (r.params[i].defined()) params[i] = r.params[i];
  return params;
}

WorkerGradients Trainer::worker_gradients(size_t worker, const std::vector<Array> &params, const data::Batch &b,
                                          nnrt_dtype dtype, GradientBuckets *send) {
  model::Model &m = *model_;
  Context &ctx = m.ctx();
  const model::OutputLayer &out = *m.output_layer();
  bool mixed = dtype != NNRT_DTYPE_F32;
  // Each worker its own dropout masks: the step counter is spread over the workers.
  uint64_t step = static_cast<uint64_t>(iteration_) * static_cast<uint64_t>(options_.parallel.workers) + worker;
  model::Pass pass{ctx, true, step, dtype, {}};
  model::Activations acts = m.forward(pass, {model::as_dtype(ctx, b.x, dtype)}, params);
  const model::Saved &saved = acts.saved[m.output_node()];
  WorkerGradients g;
  g.n = b.n;
  g.loss = ops::item(out.loss(pass, saved, b.y));
  if (send) send->begin(g.n, g.loss * static_cast<double>(g.n));
  if (!std::isfinite(g.loss)) return g;  // no update: the caller decides what a bad score means
  Array dz = out.loss_gradient(pass, saved, b.y, mixed ? loss_scale_ : 1.0);
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

std::vector<Array> Trainer::combine(const std::vector<WorkerGradients> &work, int64_t n) const {
  Context &ctx = model_->ctx();
  std::vector<Array> grads = work[0].grads;
  if (work.size() == 1) return grads;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    Array sum = ops::scale(ctx, grads[i], static_cast<double>(work[0].n) / static_cast<double>(n));
    for (size_t w = 1; w < work.size(); ++w) {
      if (work[w].grads.empty() || !work[w].grads[i].defined()) continue;
      sum = ops::add(ctx, sum, ops::scale(ctx, work[w].grads[i], static_cast<double>(work[w].n) / static_cast<double>(n)));
    }
    grads[i] = sum;
  }
  return grads;
}

double Trainer::train_step(const std::vector<data::Batch> &batches, double lr) {
  model::Model &m = *model_;
  Context &ctx = m.ctx();
  nnrt_dtype dtype = compute_dtype();
  const Parallel &par = options_.parallel;
  // Exclusive: the forward pass updates batchnorm statistics and the step updates the weights.
  std::unique_lock<WriterPreferringSharedMutex> write(m.lock());
  // In mixed precision the layers see half-precision copies of the f32 master weights.
  std::vector<Array> shared = m.params_as(dtype);
  const size_t k = batches.size();
  // One worker on one rank sends its gradients while backward runs; otherwise the workers'
  // gradients are combined first and then sent.
  GradientBuckets *overlap = comm_ && par.mode == ParallelMode::allreduce && k == 1 ? buckets_.get() : nullptr;
  std::vector<WorkerGradients> work(k);
  auto run = [&](size_t w) {
    work[w] = worker_gradients(w, worker_params(w, dtype, shared), batches[w], dtype, overlap);
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
    // The gradient of the whole step's mean loss: the workers' means weighted by their examples.
    std::vector<Array> grads;
    if (finite && k > 0) grads = combine(work, n);
    if (comm_) {
      if (!overlap) {
        buckets_->begin(n, loss_sum);
        for (size_t i = 0; i < grads.size(); ++i) buckets_->add(i, grads[i]);
      }
      int64_t total = 0;
      buckets_->finish(ctx, grads, total, loss);  // every rank gets the same loss and gradients
    }
    last_loss_ = loss;
    if (!std::isfinite(loss)) return loss;
    apply_update(grads, values, state0_, state1_, lr);
    ++iteration_;
    average_replicas(false);  // the batchnorm statistics each worker gathered
    if (comm_) average_state_over_ranks(false);
    return loss;
  }
  // "average": every worker with a batch updates its own replica.
  last_loss_ = loss;
  if (!finite) return loss;
  for (size_t w = 0; w < k; ++w) {
    if (w == 0) {
      apply_update(work[0].grads, values, state0_, state1_, lr);
    } else {
      Replica &r = replicas_[w - 1];
      apply_update(work[w].grads, r.params, r.state0, r.state1, lr);
    }
  }
  ++iteration_;
  if (++steps_since_average_ >= par.averaging_frequency) {
    average_replicas(true);
    if (comm_) average_state_over_ranks(true);
    steps_since_average_ = 0;
  }
  if (!par.report_score_after_averaging && k > 0) last_loss_ = loss = work[0].loss;
  return loss;
}

bool Trainer::apply_update(std::vector<Array> &grads, const std::vector<Array> &values, std::vector<Array> &state0,
                           std::vector<Array> &state1, double lr) {
  Context &ctx = model_->ctx();
  const std::vector<model::Param> &ps = model_->params();
  bool mixed = compute_dtype() != NNRT_DTYPE_F32;
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
        return false;
      }
      if (++good_steps_ >= options_.precision.growth_interval && options_.precision.compute == NNRT_DTYPE_F16) {
        loss_scale_ = std::min(loss_scale_ * 2, 16777216.0);
        good_steps_ = 0;
      }
    }
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
  // With ranks every rank holds the same model: rank 0 alone writes it.
  if (!options_.early_stopping.save_best.empty() && rank() == 0) model_->save(options_.early_stopping.save_best);
}

int Trainer::stop_requests(int mine) {
  if (!comm_) return mine;
  float bits[4] = {};
  for (int k = 0; k < 4; ++k) bits[k] = (mine >> k) & 1 ? 1.f : 0.f;
  comm_->allreduce_sum(bits, 4, NNRT_DTYPE_F32);
  int all = 0;
  for (int k = 0; k < 4; ++k)
    if (bits[k] > 0) all |= 1 << k;
  return all;
}

namespace {
enum StopBits { kStopCallback = 1, kStopCancel = 2, kStopTime = 4, kStopInvalid = 8 };
}

nnrt_status Trainer::fit(const std::shared_ptr<data::Dataset> &train, const std::shared_ptr<data::Dataset> &validation,
                         int32_t epochs) {
  if (epochs < 0) fail(NNRT_ERR_INVALID_ARGUMENT, "fit: epochs must be >= 0, got ", epochs);
  check_dataset(*train, "training");
  if (validation) check_dataset(*validation, "validation");
  const EarlyStopping &es = options_.early_stopping;
  nnrt_dtype dtype = compute_dtype();
  stop_reason_ = StopReason::kCompleted;
  nnrt_status status = NNRT_OK;
  auto fit_start = Clock::now();
  const int32_t workers = options_.parallel.workers;
  if (comm_) {
    // Every rank must walk the same epochs: the same data, the same number of calls.
    check_same_on_every_rank(*comm_, static_cast<uint64_t>(train->size()), "training set sizes");
    check_same_on_every_rank(*comm_, static_cast<uint64_t>(epochs), "epoch counts given to fit");
  }
  {
    // Training starts from the model as it is now (set_param, restore or an earlier fit); with
    // ranks, from rank 0's.
    std::unique_lock<WriterPreferringSharedMutex> write(model_->lock());
    if (comm_) broadcast_from_rank0();
    sync_replicas();
    steps_since_average_ = 0;
  }

  for (int32_t e = 0; e < epochs; ++e) {
    int32_t epoch = epochs_done_;
    if (es.enabled && es.max_epochs > 0 && epoch >= es.max_epochs) {
      stop_reason_ = StopReason::kMaxEpochs;
      break;
    }
    double lr = options_.has_schedule ? options_.schedule.rate(options_.optimizer.learning_rate, epoch)
                                      : options_.optimizer.learning_rate;
    // Each epoch its own permutation, fixed by (seed, epoch): resuming reproduces the order. With
    // ranks, step s of the epoch takes the next ranks * workers batches of that permutation, rank r
    // the r-th group of `workers` of them: disjoint shards, reshuffled every epoch, and the same
    // number of steps on every rank (a rank left without a batch in the last step takes part with
    // no examples).
    const int64_t all_batches = data::BatchIterator::epoch_batches(train->size(), options_.batch_size);
    const int64_t group = static_cast<int64_t>(workers) * world_size();
    const int64_t steps = (all_batches + group - 1) / group;
    std::vector<int64_t> shard;
    for (int64_t st = 0; st < steps && comm_; ++st) {
      for (int64_t w = 0; w < workers; ++w) {
        int64_t id = st * group + static_cast<int64_t>(rank()) * workers + w;
        if (id < all_batches) shard.push_back(id);
      }
    }
    data::BatchIterator batches(train, model_->context_ptr(), options_.batch_size, options_.shuffle,
                                options_.seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(epoch + 1),
                                options_.prefetch * workers, dtype, comm_ ? &shard : nullptr);
    auto start = Clock::now();
    double loss_sum = 0;
    int64_t batch_index = 0, epoch_examples = 0;
    data::Batch b;
    nnrt_progress p{};
    DeviceLoad device_load(*model_->context_ptr()->device());
    p.struct_size = sizeof p;
    p.epoch = epoch;
    p.batches_per_epoch = steps;
    p.validation_score = std::numeric_limits<double>::quiet_NaN();
    for (int64_t st = 0; st < steps; ++st) {
      if (!comm_ && cancel_requested_.exchange(false)) {
        stop_reason_ = StopReason::kCancelled;
        status = NNRT_ERR_CANCELLED;
        break;
      }
      // One batch per worker; the last step of an epoch may have fewer (with ranks, none).
      std::vector<data::Batch> step_batches;
      while (static_cast<int32_t>(step_batches.size()) < workers && batches.next(b)) step_batches.push_back(std::move(b));
      int64_t step_examples = 0;
      for (const data::Batch &sb : step_batches) step_examples += sb.n;
      double loss = train_step(step_batches, lr);
      int mine = 0;
      if (!std::isfinite(loss)) {
        mine |= kStopInvalid;
      } else {
        loss_sum += loss;
        epoch_examples += step_examples;
        examples_seen_ += step_examples;
        double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        p.iteration = iteration_;
        p.examples_seen = examples_seen_;
        p.loss = loss;
        p.learning_rate = lr;
        p.examples_per_second = seconds > 0 ? static_cast<double>(epoch_examples) / seconds : 0;
        p.epoch_end = 0;
        p.batch = batch_index++;
        device_load.fill(p);
        if (report(p)) mine |= kStopCallback;
        // With ranks, rank 0's clock decides, so that every rank stops on the same step.
        if (es.enabled && es.max_minutes > 0 && rank() == 0 &&
            std::chrono::duration<double>(Clock::now() - fit_start).count() > es.max_minutes * 60) {
          mine |= kStopTime;
        }
      }
      if (comm_ && cancel_requested_.exchange(false)) mine |= kStopCancel;
      int stop = stop_requests(mine);
      if (stop & kStopCancel) {
        stop_reason_ = StopReason::kCancelled;
        status = NNRT_ERR_CANCELLED;
      } else if (stop & kStopInvalid) {
        log::warn(cat("epoch ", epoch, ", step ", st, ": the loss is not finite", comm_ ? " on some rank" : "",
                      "; training stops (invalid score)"));
        stop_reason_ = StopReason::kInvalidScore;
      } else if (stop & kStopCallback) {
        stop_reason_ = StopReason::kCallback;
      } else if (stop & kStopTime) {
        stop_reason_ = StopReason::kMaxTime;
      }
      if (stop) break;
    }
    if (stop_reason_ != StopReason::kCompleted && stop_reason_ != StopReason::kMaxTime) break;
    if (stop_reason_ == StopReason::kMaxTime && batch_index == 0) break;
    if (options_.parallel.mode == ParallelMode::average && (steps_since_average_ > 0 || comm_)) {
      // Validation, early stopping and checkpoints see the averaged model.
      std::unique_lock<WriterPreferringSharedMutex> write(model_->lock());
      average_replicas(true);
      if (comm_) average_state_over_ranks(true);
      steps_since_average_ = 0;
    }

    EpochRecord rec;
    rec.epoch = epoch;
    rec.mean_loss = batch_index ? loss_sum / static_cast<double>(batch_index) : 0;
    rec.learning_rate = lr;
    rec.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    last_examples_per_second_ = rec.seconds > 0 ? static_cast<double>(epoch_examples) / rec.seconds : 0;
    // Every rank given a validation set evaluates it, at the same time as rank 0, so that none
    // waits long in the broadcast below; rank 0's score is the one that counts.
    if (validation) {
      rec.validation_score = validation_score(validation);
      rec.has_validation = true;
    } else if (es.enabled) {
      rec.validation_score = es.maximize ? -rec.mean_loss : rec.mean_loss;  // training loss stands in
    }
    if (comm_) {
      // Rank 0 evaluates and decides: every rank takes its score, so all stop on the same epoch.
      double shared[2] = {rec.has_validation ? 1.0 : 0.0, rec.validation_score};
      comm_->broadcast(shared, sizeof shared, 0);
      rec.has_validation = shared[0] != 0;
      rec.validation_score = shared[1];
    }
    history_.push_back(rec);
    ++epochs_done_;
    p.epoch_end = 1;
    p.validation_score = rec.has_validation ? rec.validation_score : std::numeric_limits<double>::quiet_NaN();
    p.examples_per_second = last_examples_per_second_;
    if (rank() == 0) {
      log::info(cat("epoch ", epoch, ": loss ", rec.mean_loss, ", ", last_examples_per_second_, " examples/s",
                    rec.has_validation ? cat(", validation ", rec.validation_score) : ""));
    }
    if (es.enabled) {
      double score = rec.validation_score;
      if (!std::isfinite(score)) {
        stop_reason_ = StopReason::kInvalidScore;
      } else if (improved(score)) {
        keep_best(epoch, score);
      } else if (es.patience > 0 && ++epochs_since_best_ >= es.patience) {
        stop_reason_ = StopReason::kPatience;
      }
    }
    device_load.fill(p);
    if (stop_requests(report(p) ? kStopCallback : 0)) stop_reason_ = StopReason::kCallback;
    if (stop_reason_ != StopReason::kCompleted) break;
  }
  // With early stopping the model ends on its best epoch, as the seed's EarlyStoppingTrainer returns.
  if (es.enabled && !best_params_.empty() && status == NNRT_OK) {
    std::unique_lock<WriterPreferringSharedMutex> write(model_->lock());
    std::vector<model::Param> &ps = model_->params();
    for (size_t i = 0; i < ps.size(); ++i) ops::copy_into(model_->ctx(), best_params_[i], ps[i].value);
    sync_replicas();
  }
  return status;
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
  j["workers"] = options_.parallel.workers;
  if (comm_) {
    j["rank"] = comm_->rank();
    j["world_size"] = comm_->size();
    j["comm"] = comm_->name();
    if (buckets_) {
      j["allreduce_buckets"] = buckets_->bucket_count();
      j["comm_wait_seconds"] = buckets_->wait_seconds();
    }
  }
  j["mode"] = options_.parallel.mode == ParallelMode::allreduce ? "allreduce" : "average";
  j["last_loss"] = last_loss_;
  j["examples_per_second"] = last_examples_per_second_;
  j["history"] = history;
  return j.dump();
}

}  // namespace nnrt::train
