// nnrt eval: evaluates a saved model on a dataset (the test split for IDX folders).
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "data_args.h"

namespace nnrt_cli {

namespace {

struct EvalFlags {
  ContextFlags context;
  std::string model_file, data = "fashion-mnist", test;
  bool json = false;
};

void run_eval(const EvalFlags &f) {
  nnrt::context ctx = make_context(f.context);
  nnrt::model model = open_model(ctx, f.model_file);
  DataSpecs specs = resolve_data(f.data, f.test, 0, model_input(model));
  nnrt::dataset data = nnrt::dataset::load(ctx, specs.test.empty() ? specs.train : specs.test);
  nlohmann::json r = nlohmann::json::parse(model.evaluate(data).report());
  if (f.json) {
    std::cout << r.dump(2) << "\n";
  } else {
    print_evaluation(r, class_names_for(f.data));
    if (r.contains("accuracy")) std::printf("test_accuracy=%.4f\n", r["accuracy"].get<double>());
  }
}

}  // namespace

void register_eval(CLI::App &app) {
  auto f = std::make_shared<EvalFlags>();
  CLI::App *cmd = app.add_subcommand("eval", "Evaluate a saved model on a dataset");
  cmd->add_option("--model-file", f->model_file, "A model saved by nnrt (.safetensors) or an ONNX model (.onnx)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--data", f->data, "fashion-mnist, a folder of IDX files (its test split), a .csv file or a spec")
      ->capture_default_str();
  cmd->add_option("--test", f->test, "Evaluate on this data instead (a .csv file, an IDX folder or a spec)");
  cmd->add_flag("--json", f->json, "Print the evaluation report as JSON");
  add_context_flags(cmd, &f->context);
  cmd->callback([f] { run_eval(*f); });
}

}  // namespace nnrt_cli
