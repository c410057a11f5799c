#include "train/trainer_options.h"

#include "core/error.h"

namespace nnrt::train {

namespace {

constexpr int64_t kMaxWorkers = 64;

OptimizerConfig read_optimizer_options(JsonReader &r) {
  OptimizerConfig config;
  if (r.has("optimizer")) {
    JsonReader opt = r.get_object("optimizer");
    config = read_optimizer(opt);
  } else {
    Json empty = Json::object();
    JsonReader opt(empty, "options.optimizer");
    config = read_optimizer(opt);
  }
  // Regularization and clipping are trainer options that the optimizer rule applies.
  ops::OptimizerRule &rule = config.rule;
  rule.l1 = r.get_number("l1", 0, 0);
  rule.l2 = r.get_number("l2", 0, 0);
  rule.weight_decay = r.get_number("weight_decay", rule.weight_decay, 0);
  rule.clip_value = r.get_number("clip_value", 0, 0);
  return config;
}

Parallel read_parallel(JsonReader &r, Context &ctx) {
  Parallel par;
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
  return par;
}

Precision read_precision(JsonReader &r) {
  Precision p;
  p.name = r.get_string("precision", "f32");
  if (p.name == "mixed_f16") {
    // f16 overflows above 65504 and underflows below 6e-8: gradients need a scale, found dynamically.
    p.compute = NNRT_DTYPE_F16;
    p.initial_scale = 65536;
  } else if (p.name == "mixed_bf16") {
    p.compute = NNRT_DTYPE_BF16;  // f32's exponent range: no scale needed to start with
  } else if (p.name != "f32") {
    fail(NNRT_ERR_INVALID_ARGUMENT, "options.precision: expected \"f32\", \"mixed_f16\" or \"mixed_bf16\", got \"",
         p.name, "\"");
  }
  p.initial_scale = r.get_number("loss_scale", p.initial_scale, 1, 1e30);
  return p;
}

EarlyStopping read_early_stopping(JsonReader &es) {
  EarlyStopping e;
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
  return e;
}

}  // namespace

TrainerOptions TrainerOptions::parse(const char *text, Context &ctx) {
  Json j = parse_json_object(text, "options");
  JsonReader r(j, "options");
  TrainerOptions o;
  o.optimizer = read_optimizer_options(r);
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
  o.parallel = read_parallel(r, ctx);
  o.precision = read_precision(r);
  if (o.parallel.workers > 1 && o.parallel.mode == ParallelMode::average && o.precision.compute != NNRT_DTYPE_F32) {
    // Each replica would keep its own loss scale and skip its own steps: not supported.
    fail(NNRT_ERR_UNSUPPORTED, "options.mode: \"average\" with several workers needs \"precision\": \"f32\", got \"",
         o.precision.name, "\" (use \"mode\": \"allreduce\" for mixed precision)");
  }
  if (r.has("early_stopping")) {
    JsonReader es = r.get_object("early_stopping");
    o.early_stopping = read_early_stopping(es);
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

double TrainerOptions::lr_for_epoch(int32_t epoch) const {
  return has_schedule ? schedule.rate(optimizer.learning_rate, epoch) : optimizer.learning_rate;
}

}  // namespace nnrt::train
