// nnrt train: trains a model from a JSON config on a dataset, with progress, evaluation, a
// checkpoint and an HTML report.
#include <chrono>
#include <cstdio>

#include "cli/cli.h"
#include "cli/data_args.h"
#include "cli/progress.h"
#include "cli/report.h"

namespace nnrt_cli {

namespace {

struct TrainFlags {
  ContextFlags context;
  std::string model, data = "fashion-mnist", test, trainer, save, report;
  std::string distributed;
  int epochs = 1;
  int workers = 0;  // 0: as the trainer options say
  long limit = 0;
  bool quiet = false;
};

int on_progress(const nnrt_progress *p, void *user) { return static_cast<ProgressView *>(user)->update(*p); }

// The trainer options: --trainer's JSON with --workers and --distributed merged in (a value given
// both ways must agree).
std::string trainer_options(const TrainFlags &f) {
  nlohmann::json o = nlohmann::json::parse(f.trainer.empty() ? "{}" : json_text(f.trainer), nullptr, false);
  if (!o.is_object()) return f.trainer.empty() ? "{}" : json_text(f.trainer);  // nnrt reports what is wrong
  if (f.workers > 0) {
    if (o.contains("workers") && o["workers"] != f.workers) {
      throw std::runtime_error("--workers " + std::to_string(f.workers) + " disagrees with the trainer options' \"workers\": " +
                     o["workers"].dump());
    }
    o["workers"] = f.workers;
  }
  if (!f.distributed.empty()) {
    if (o.contains("distributed") && !o["distributed"].is_object()) return o.dump();  // nnrt reports the type
    if (o.contains("distributed") && o["distributed"].contains("comm") && o["distributed"]["comm"] != f.distributed) {
      throw std::runtime_error("--distributed " + f.distributed + " disagrees with the trainer options' \"distributed\": " +
                     o["distributed"].dump());
    }
    o["distributed"]["comm"] = f.distributed;
  }
  return o.dump();
}

void run_train(const TrainFlags &f) {
  auto started = std::chrono::steady_clock::now();
  nnrt_context *ctx = nullptr;
  check(nnrt_context_create(f.context.options_json().c_str(), &ctx), "creating a context");
  nlohmann::json describe = nlohmann::json::parse(
      read_string([&](char *b, size_t c, size_t *l) { return nnrt_context_describe(ctx, b, c, l); }));
  DataSpecs specs = resolve_data(f.data, f.test, f.limit);
  nnrt_dataset *train = load_dataset(ctx, specs.train);
  nnrt_dataset *test = specs.test.empty() ? nullptr : load_dataset(ctx, specs.test);
  int64_t n_train = 0, n_test = 0;
  check(nnrt_dataset_size(train, &n_train), "reading the dataset size");
  if (test) check(nnrt_dataset_size(test, &n_test), "reading the dataset size");

  nnrt_model *model = nullptr;
  check(nnrt_model_create(ctx, read_file(f.model).c_str(), &model), ("building the model from " + f.model).c_str());
  int64_t params = 0;
  check(nnrt_model_param_count(model, &params), "counting parameters");
  nnrt_trainer *trainer = nullptr;
  std::string options = trainer_options(f);
  check(nnrt_trainer_create(model, options.c_str(), &trainer), "creating the trainer");
  int32_t rank = 0, world = 1;
  check(nnrt_trainer_rank(trainer, &rank, &world), "reading the rank");
  // With ranks, rank 0 alone prints; every rank trains and evaluates alike.
  const bool quiet = f.quiet || rank != 0;
  if (!quiet) {
    if (world > 1) std::printf("distributed: %d ranks (%s)\n", world, f.distributed.c_str());
    std::printf("nnrt %s on %s (%d threads): %s, %lld parameters\n", nnrt_version_string(),
                describe["backend"].get<std::string>().c_str(), describe["threads"].get<int>(), f.model.c_str(),
                static_cast<long long>(params));
    std::printf("data: %s: %lld training examples, %lld test examples\n", specs.description.c_str(),
                static_cast<long long>(n_train), static_cast<long long>(n_test));
  }
  ProgressView view(f.epochs, quiet);
  ProgressView::catch_interrupt();
  check(nnrt_trainer_set_progress(trainer, on_progress, &view), "setting the progress callback");
  check(nnrt_trainer_fit(trainer, train, test, f.epochs), "training");
  nlohmann::json result = nlohmann::json::parse(
      read_string([&](char *b, size_t c, size_t *l) { return nnrt_trainer_result(trainer, b, c, l); }));
  if (!quiet && result["stop_reason"] != "completed") {
    std::printf("training stopped early: %s\n", result["stop_reason"].get<std::string>().c_str());
  }

  nlohmann::json evaluation;
  std::vector<std::string> names = class_names_for(f.data);
  if (test && rank == 0) {
    nnrt_evaluation *e = nullptr;
    check(nnrt_model_evaluate(model, test, &e), "evaluating");
    evaluation = nlohmann::json::parse(
        read_string([&](char *b, size_t c, size_t *l) { return nnrt_evaluation_report(e, b, c, l); }));
    nnrt_evaluation_release(e);
    std::printf("\n");
    print_evaluation(evaluation, names);
  }
  if (!f.save.empty() && rank == 0) {
    check(nnrt_trainer_save(trainer, f.save.c_str()), ("saving " + f.save).c_str());
    std::printf("\nsaved %s\n", f.save.c_str());
  }
  if (!f.report.empty() && rank == 0) {
    ReportInput r;
    r.title = "nnrt training report: " + f.model;
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    r.run = {{"nnrt", nnrt_version_string()},
             {"backend", describe["backend"]},
             {"threads", describe["threads"]},
             {"model", f.model},
             {"parameters", params},
             {"data", specs.description},
             {"training examples", n_train},
             {"test examples", n_test},
             {"epochs", result["epochs"]},
             {"images per second (last epoch)", std::round(result["examples_per_second"].get<double>())},
             {"wall time (s)", std::round(seconds * 10) / 10}};
    if (evaluation.is_object() && evaluation.contains("accuracy")) r.run["test accuracy"] = evaluation["accuracy"];
    r.summary = nlohmann::json::parse(
        read_string([&](char *b, size_t c, size_t *l) { return nnrt_model_summary(model, b, c, l); }));
    r.result = result;
    r.evaluation = evaluation;
    r.batch_losses = view.loss_curve();
    r.class_names = names;
    write_text_file(f.report, render_report(r));
    std::printf("report: %s\n", f.report.c_str());
  }
  if (evaluation.is_object() && evaluation.contains("accuracy")) {
    std::printf("test_accuracy=%.4f\n", evaluation["accuracy"].get<double>());
  }
  nnrt_trainer_release(trainer);
  nnrt_model_release(model);
  nnrt_dataset_release(test);
  nnrt_dataset_release(train);
  nnrt_context_release(ctx);
}

}  // namespace

void register_train(CLI::App &app) {
  auto f = std::make_shared<TrainFlags>();
  CLI::App *cmd = app.add_subcommand("train", "Train a model on a dataset, then evaluate it on the test set");
  cmd->add_option("--model", f->model, "Model config (JSON file)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--data", f->data, "fashion-mnist, a folder of IDX files, a .csv file or a dataset spec (JSON)")
      ->capture_default_str();
  cmd->add_option("--test", f->test, "Test data (default: the IDX folder's t10k files; \"none\" for none)");
  cmd->add_option("--epochs", f->epochs, "Epochs")->capture_default_str()->check(CLI::Range(0, 1000000));
  cmd->add_option("--trainer", f->trainer, "Trainer options: a JSON file or inline JSON");
  cmd->add_option("--save", f->save, "Save the trained model and trainer state to this .safetensors file");
  cmd->add_option("--report", f->report, "Write an HTML report (curves, confusion matrix, summary) to this file");
  cmd->add_option("--limit", f->limit, "Train on the first N examples only")->check(CLI::Range(0L, 1L << 40));
  cmd->add_option("--workers", f->workers, "Data-parallel workers in this process (the trainer option \"workers\")")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--distributed", f->distributed,
                  "Train as one rank of a group started by a launcher, e.g. mpirun -np 2 nnrt train ... "
                  "--distributed mpi (the trainer option \"distributed\": {\"comm\": ...})");
  cmd->add_flag("--quiet", f->quiet, "No progress output");
  add_context_flags(cmd, &f->context);
  cmd->callback([f] { run_train(*f); });
}

}  // namespace nnrt_cli
