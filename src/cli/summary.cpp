// nnrt summary: a model's layers, output shapes, parameters and which backend runs each op.
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "data_args.h"

namespace nnrt_cli {

namespace {

struct SummaryFlags {
  ContextFlags context;
  std::string model, model_file;
  bool json = false;
};

// One line per layer: name, type, output shape, parameters and where its forward ops ran.
void print_table(const nlohmann::json &s) {
  std::printf("input %s, backend %s, %s\n\n", s["input"].dump().c_str(), s["backend"].get<std::string>().c_str(),
              s["dtype"].get<std::string>().c_str());
  std::printf("%-12s %-12s %-16s %10s  %s\n", "layer", "type", "output shape", "params", "forward ops (backend)");
  for (const auto &l : s["layers"]) {
    std::string ops;
    for (auto it = l["ops"]["forward"].begin(); it != l["ops"]["forward"].end(); ++it) {
      std::string b;
      for (const auto &x : it.value()) b += (b.empty() ? "" : "+") + x.get<std::string>();
      ops += (ops.empty() ? "" : ", ") + it.key() + " (" + b + ")";
    }
    std::printf("%-12s %-12s %-16s %10lld  %s\n", l["name"].get<std::string>().c_str(), l["type"].get<std::string>().c_str(),
                l["output_shape"].dump().c_str(), l["param_count"].get<long long>(), ops.c_str());
  }
  std::printf("\ntotal parameters %lld (trainable %lld)\n", s["total_params"].get<long long>(),
              s["trainable_params"].get<long long>());
}

void run_summary(const SummaryFlags &f) {
  if (f.model.empty() == f.model_file.empty()) throw std::runtime_error("give --model (a config) or --model-file");
  nnrt::context ctx = make_context(f.context);
  nnrt::model model = f.model.empty() ? open_model(ctx, f.model_file) : model_from_config_or_file(ctx, f.model);
  nlohmann::json s = nlohmann::json::parse(model.summary());
  if (f.json) std::cout << s.dump(2) << "\n";
  else print_table(s);
}

}  // namespace

void register_summary(CLI::App &app) {
  auto f = std::make_shared<SummaryFlags>();
  CLI::App *cmd = app.add_subcommand("summary", "Show a model's layers, shapes, parameters and op placement");
  cmd->add_option("--model", f->model, "Model config (JSON file); a model file is opened as with --model-file")->check(CLI::ExistingFile);
  cmd->add_option("--model-file", f->model_file, "A model saved by nnrt (.safetensors) or an ONNX model (.onnx)")->check(CLI::ExistingFile);
  cmd->add_flag("--json", f->json, "Print the summary as JSON");
  add_context_flags(cmd, &f->context);
  cmd->callback([f] { run_summary(*f); });
}

}  // namespace nnrt_cli
