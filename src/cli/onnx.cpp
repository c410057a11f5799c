// nnrt import / nnrt export: ONNX models to and from nnrt's own files.
#include <cstdio>

#include "cli.h"

namespace nnrt_cli {

namespace {

struct ImportFlags {
  ContextFlags context;
  std::string input, output, options;
};

struct ExportFlags {
  ContextFlags context;
  std::string model, model_file, output;
};

void run_import(const ImportFlags &f) {
  nnrt::context ctx = make_context(f.context);
  nnrt::model model = open_model(ctx, f.input, f.options.empty() ? "" : json_text(f.options));
  model.save(f.output);
  std::printf("imported %s: %lld parameters, saved to %s\n", f.input.c_str(),
              static_cast<long long>(model.param_count()), f.output.c_str());
}

void run_export(const ExportFlags &f) {
  if (f.model.empty() == f.model_file.empty()) throw std::runtime_error("give --model (a config) or --model-file");
  nnrt::context ctx = make_context(f.context);
  nnrt::model model = f.model.empty() ? open_model(ctx, f.model_file) : nnrt::model(ctx, json_text(f.model));
  model.export_onnx(f.output);
  std::printf("exported to %s (ONNX opset 17, batch dim \"N\")\n", f.output.c_str());
}

}  // namespace

void register_onnx(CLI::App &app) {
  auto fi = std::make_shared<ImportFlags>();
  CLI::App *imp = app.add_subcommand("import", "Import an ONNX model and save it as an nnrt model (.safetensors)");
  imp->add_option("model", fi->input, "The ONNX model (.onnx)")->required()->check(CLI::ExistingFile);
  imp->add_option("-o,--output", fi->output, "The nnrt model to write (.safetensors)")->required();
  imp->add_option("--options", fi->options,
                  "Import options, JSON inline or a file: {\"batch\": true, \"batch_axis\": 0, \"input\": [...], \"loss\": \"nll\"}");
  add_context_flags(imp, &fi->context);
  imp->callback([fi] { run_import(*fi); });

  auto fe = std::make_shared<ExportFlags>();
  CLI::App *exp = app.add_subcommand("export", "Export an nnrt model (or a config) as ONNX");
  exp->add_option("--model", fe->model, "Model config (JSON file): its initial weights are exported")
      ->check(CLI::ExistingFile);
  exp->add_option("--model-file", fe->model_file, "A model saved by nnrt (.safetensors) or an ONNX model")
      ->check(CLI::ExistingFile);
  exp->add_option("-o,--output", fe->output, "The ONNX file to write (.onnx)")->required();
  add_context_flags(exp, &fe->context);
  exp->callback([fe] { run_export(*fe); });
}

}  // namespace nnrt_cli
