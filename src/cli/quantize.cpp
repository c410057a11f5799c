// nnrt quantize: an int8 copy of a saved or ONNX model for inference (nnrt_model_quantize),
// calibrated on the first examples of a dataset's training split, saved for nnrt eval and predict.
#include <cstdio>

#include "cli.h"
#include "data_args.h"

namespace nnrt_cli {

namespace {

struct QuantizeFlags {
  ContextFlags context;
  std::string model_file, data = "fashion-mnist", save, options;
  long limit = 1024;
};

void run_quantize(const QuantizeFlags &f) {
  nnrt::context ctx = make_context(f.context);
  nnrt::model model = open_model(ctx, f.model_file);
  DataSpecs specs = resolve_data(f.data, "none", f.limit, model_input(model));
  nnrt::dataset calibration = nnrt::dataset::load(ctx, specs.train);
  nnrt::model quantized = model.quantize(calibration, f.options.empty() ? "" : json_text(f.options));
  int layers = 0;
  const nlohmann::json summary = nlohmann::json::parse(quantized.summary());
  for (const auto &layer : summary["layers"])
    if (layer["attributes"].contains("int8")) ++layers;
  quantized.save(f.save);
  std::printf("quantized %d layers to int8, calibrated on %ld examples\nsaved %s\n", layers,
              static_cast<long>(calibration.size()), f.save.c_str());
}

}  // namespace

void register_quantize(CLI::App &app) {
  auto f = std::make_shared<QuantizeFlags>();
  CLI::App *cmd = app.add_subcommand("quantize", "Make an int8 copy of a model for inference, calibrated on examples");
  cmd->add_option("--model-file", f->model_file, "A model saved by nnrt (.safetensors) or an ONNX model (.onnx)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--data", f->data, "Calibration examples: fashion-mnist, a folder of IDX files (its training split), "
                                     "a .csv file or a dataset spec (JSON)")
      ->capture_default_str();
  cmd->add_option("--limit", f->limit, "Read the first N examples of --data")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--options", f->options,
                  "nnrt_model_quantize's options: inline JSON or a file ({\"batches\", \"batch_size\", \"weight_bits\", "
                  "\"exclude\"})");
  cmd->add_option("--save", f->save, "Where to save the int8 model (.safetensors)")->required();
  add_context_flags(cmd, &f->context);
  cmd->callback([f] { run_quantize(*f); });
}

}  // namespace nnrt_cli
