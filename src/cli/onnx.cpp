// nnrt import / nnrt export: ONNX models to and from nnrt's own files.
#include <cstdio>

#include "cli/cli.h"

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
  nnrt_context *ctx = nullptr;
  check(nnrt_context_create(f.context.options_json().c_str(), &ctx), "creating a context");
  std::string options = f.options.empty() ? "" : json_text(f.options);
  nnrt_model *model = open_model(ctx, f.input, options);
  int64_t params = 0;
  check(nnrt_model_param_count(model, &params), "counting parameters");
  check(nnrt_model_save(model, f.output.c_str()), ("saving " + f.output).c_str());
  std::printf("imported %s: %lld parameters, saved to %s\n", f.input.c_str(), static_cast<long long>(params),
              f.output.c_str());
  nnrt_model_release(model);
  nnrt_context_release(ctx);
}

void run_export(const ExportFlags &f) {
  if (f.model.empty() == f.model_file.empty()) throw std::runtime_error("give --model (a config) or --model-file");
  nnrt_context *ctx = nullptr;
  check(nnrt_context_create(f.context.options_json().c_str(), &ctx), "creating a context");
  nnrt_model *model = nullptr;
  if (!f.model.empty()) check(nnrt_model_create(ctx, json_text(f.model).c_str(), &model), ("building " + f.model).c_str());
  else model = open_model(ctx, f.model_file);
  check(nnrt_model_export_onnx(model, f.output.c_str()), ("exporting to " + f.output).c_str());
  std::printf("exported to %s (ONNX opset 17, batch dim \"N\")\n", f.output.c_str());
  nnrt_model_release(model);
  nnrt_context_release(ctx);
}

}  // namespace

void register_onnx(CLI::App &app) {
  auto fi = std::make_shared<ImportFlags>();
  CLI::App *imp = app.add_subcommand("import", "Import an ONNX model and save it as an nnrt model (.safetensors)");
  imp->add_option("model", fi->input, "The ONNX model (.onnx)")->required()->check(CLI::ExistingFile);
  imp->add_option("-o,--output", fi->output, "The nnrt model to write (.safetensors)")->required();
  imp->add_option("--options", fi->options,
                  "Import options, JSON inline or a file: {\"batch\": true, \"input\": [...], \"loss\": \"nll\"}");
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
