// nnrt train: trains a model from a JSON config on a dataset, with progress, evaluation, a
// checkpoint and an HTML report.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cli.h"
#include "data_args.h"
#include "progress.h"
#include "report.h"

namespace nnrt_cli {

namespace {

struct TrainFlags {
  ContextFlags context;
  std::string model, data = "fashion-mnist", test, trainer, save, report, distributed, loss = "nll";
  int epochs = 1;
  int workers = 0;  // 0: as the trainer options say
  long limit = 0;
  bool quiet = false;
};

// The trainer options: --trainer's JSON with --workers and --distributed merged in (a value given
// both ways must agree).
std::string trainer_options(const TrainFlags &f) {
  std::string given = f.trainer.empty() ? "{}" : json_text(f.trainer);
  nlohmann::json o = nlohmann::json::parse(given, nullptr, false);
  if (!o.is_object()) return given;  // nnrt reports what is wrong with it
  if (f.workers > 0) {
    if (o.contains("workers") && o["workers"] != f.workers) {
      throw std::runtime_error("--workers " + std::to_string(f.workers) +
                               " disagrees with the trainer options' \"workers\": " + o["workers"].dump());
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

// What a training run works with, made in this order.
struct Session {
  explicit Session(const TrainFlags &f)
      : ctx(make_context(f.context)),
        describe(nlohmann::json::parse(ctx.describe())),
        // An ONNX model fine-tunes: its final Gemm (and softmax) becomes the output layer.
        model(is_onnx(f.model) ? open_model(ctx, f.model, nlohmann::json{{"loss", f.loss}}.dump())
                               : model_from_config_or_file(ctx, f.model)),
        params(model.param_count()),
        // After the model: a text's windows are as long as its input.
        specs(resolve_data(f.data, f.test, f.limit, model_input(model))),
        train(nnrt::dataset::load(ctx, specs.train)),
        test(specs.test.empty() ? nnrt::dataset() : nnrt::dataset::load(ctx, specs.test)),
        n_train(train.size()),
        n_test(test ? test.size() : 0),
        trainer(model, trainer_options(f)),
        rank(trainer.rank()) {}

  nnrt::context ctx;
  nlohmann::json describe;  // nnrt_context_describe
  nnrt::model model;
  int64_t params;
  DataSpecs specs;
  nnrt::dataset train, test;  // test is empty without a test set
  int64_t n_train, n_test;
  nnrt::trainer trainer;
  std::pair<int32_t, int32_t> rank;  // this process's rank and the world size (distributed training)
};

// "distributed: 2 ranks over mpi (Open MPI v4.1.4)": the world size, and the communicator the trainer
// options name with the version its plugin reports.
void print_distributed(const TrainFlags &f, const Session &s) {
  nlohmann::json options = nlohmann::json::parse(trainer_options(f), nullptr, false);
  std::string comm;
  if (options.is_object() && options.contains("distributed") && options["distributed"].is_object() &&
      options["distributed"].contains("comm") && options["distributed"]["comm"].is_string()) {
    comm = options["distributed"]["comm"].get<std::string>();
  }
  std::string version;
  const nlohmann::json describe = nlohmann::json::parse(s.ctx.describe());  // comms loaded by now
  for (const auto &c : describe["comms"]) {
    if (c["name"] == comm && c["loaded"] == true) version = c["version"].get<std::string>();
  }
  std::printf("distributed: %d ranks%s%s\n", s.rank.second, comm.empty() ? "" : (" over " + comm).c_str(),
              version.empty() ? "" : (" (" + version + ")").c_str());
}

void print_header(const TrainFlags &f, const Session &s) {
  std::printf("nnrt %s on %s (%d threads): %s, %lld parameters\n", nnrt::version_string(),
              s.describe["backend"].get<std::string>().c_str(), s.describe["threads"].get<int>(), f.model.c_str(),
              static_cast<long long>(s.params));
  std::printf("data: %s: %lld training examples, %lld test examples\n", s.specs.description.c_str(),
              static_cast<long long>(s.n_train), static_cast<long long>(s.n_test));
}

// Trains with a progress view (Ctrl-C stops at the next batch); returns nnrt_trainer_result.
nlohmann::json fit(const TrainFlags &f, Session &s, ProgressView &view) {
  ProgressView::catch_interrupt();
  s.trainer.set_progress([&view](const nnrt_progress &p) { return view.update(p) != 0; });
  s.trainer.fit(s.train, s.test ? &s.test : nullptr, f.epochs);
  view.end_line();  // stopped mid-epoch: what follows starts on a line of its own (a failure: ~ProgressView)
  nlohmann::json result = nlohmann::json::parse(s.trainer.result());
  if (!f.quiet && result["stop_reason"] != "completed") {
    std::printf("training stopped early: %s\n", result["stop_reason"].get<std::string>().c_str());
  }
  return result;
}

// Evaluates on the test set and prints it; returns nnrt_evaluation_report (null without a test set).
nlohmann::json evaluate(const Session &s, const std::vector<std::string> &names) {
  if (!s.test) return nullptr;
  nlohmann::json evaluation = nlohmann::json::parse(s.model.evaluate(s.test).report());
  std::printf("\n");
  print_evaluation(evaluation, names);
  return evaluation;
}

bool has_accuracy(const nlohmann::json &evaluation) {
  return evaluation.is_object() && evaluation.contains("accuracy");
}

bool has_perplexity(const nlohmann::json &evaluation) {
  return evaluation.is_object() && evaluation.contains("perplexity");
}

void write_report(const TrainFlags &f, const Session &s, const nlohmann::json &result, const nlohmann::json &evaluation,
                  const ProgressView &view, const std::vector<std::string> &names, double seconds) {
  ReportInput r;
  r.title = "nnrt training report: " + f.model;
  r.run = {{"nnrt", nnrt::version_string()},
           {"backend", s.describe["backend"]},
           {"threads", s.describe["threads"]},
           {"model", f.model},
           {"parameters", s.params},
           {"data", s.specs.description},
           {"training examples", s.n_train},
           {"test examples", s.n_test},
           {"epochs", result["epochs"]},
           {s.specs.tokens_per_example ? "tokens per second (last epoch)" : "images per second (last epoch)",
            std::round(result["examples_per_second"].get<double>() * std::max<int64_t>(1, s.specs.tokens_per_example))},
           {"wall time (s)", std::round(seconds * 10) / 10}};
  if (has_accuracy(evaluation)) r.run["test accuracy"] = evaluation["accuracy"];
  if (has_perplexity(evaluation)) r.run["test perplexity"] = evaluation["perplexity"];
  r.language_model = s.specs.tokens_per_example > 0;
  r.summary = nlohmann::json::parse(s.model.summary());
  r.result = result;
  r.evaluation = evaluation;
  r.batch_losses = view.loss_curve();
  r.class_names = names;
  write_text_file(f.report, render_report(r));
  std::printf("report: %s\n", f.report.c_str());
}

void run_train(const TrainFlags &f) {
  auto started = std::chrono::steady_clock::now();
  // Ctrl-C: the training so far is saved (when --save asks), then the command exits with 130, as a
  // shell does for a process SIGINT stopped, so that scripts can tell it from a finished run.
  bool interrupted = false;
  {
    Session s(f);
    // With ranks, rank 0 alone prints, evaluates and writes; every rank trains.
    if (s.rank.first != 0) {
      ProgressView view(f.epochs, true);
      TrainFlags quiet = f;
      quiet.quiet = true;
      fit(quiet, s, view);
      return;
    }
    if (!f.quiet) {
      if (s.rank.second > 1) print_distributed(f, s);
      print_header(f, s);
    }
    ProgressView view(f.epochs, f.quiet);
    view.language_model(s.specs.tokens_per_example);
    nlohmann::json result = fit(f, s, view);
    interrupted = ProgressView::interrupted();
    std::vector<std::string> names = class_names_for(f.data);
    nlohmann::json evaluation = interrupted ? nlohmann::json() : evaluate(s, names);
    if (!f.save.empty()) {
      s.trainer.save(f.save);
      std::printf("\nsaved %s\n", f.save.c_str());
    }
    if (!f.report.empty() && !interrupted) {
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      write_report(f, s, result, evaluation, view, names, seconds);
    }
    if (has_accuracy(evaluation)) std::printf("test_accuracy=%.4f\n", evaluation["accuracy"].get<double>());
    if (has_perplexity(evaluation)) std::printf("test_perplexity=%.4f\n", evaluation["perplexity"].get<double>());
  }
  if (interrupted) {
    std::fprintf(stderr, "nnrt: training interrupted (SIGINT)%s\n", f.save.empty() ? "" : "; the model was saved");
    std::fflush(stdout);
    std::exit(130);
  }
}

}  // namespace

void register_train(CLI::App &app) {
  auto f = std::make_shared<TrainFlags>();
  CLI::App *cmd = app.add_subcommand("train", "Train a model on a dataset, then evaluate it on the test set");
  cmd->add_option("--model", f->model, "Model config (JSON file), or an ONNX model (.onnx) to fine-tune")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--loss", f->loss, "With an ONNX model: the loss to train it with (nll, mse, l1, bce)")
      ->capture_default_str();
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
