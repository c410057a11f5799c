// nnrt predict: runs a saved model on examples of a dataset and prints (or writes as CSV) the
// predicted class and its probability, or the outputs.
#include <cstdio>
#include <fstream>
#include <vector>

#include "cli/cli.h"
#include "cli/data_args.h"

namespace nnrt_cli {

namespace {

struct PredictFlags {
  ContextFlags context;
  std::string model_file, data = "fashion-mnist", test, output;
  long start = 0, count = 10;
};

void run_predict(const PredictFlags &f) {
  nnrt_context *ctx = nullptr;
  check(nnrt_context_create(f.context.options_json().c_str(), &ctx), "creating a context");
  nnrt_model *model = nullptr;
  model = open_model(ctx, f.model_file);
  DataSpecs specs = resolve_data(f.data, f.test, 0);
  nnrt_dataset *data = load_dataset(ctx, specs.test.empty() ? specs.train : specs.test);
  int64_t size = 0;
  check(nnrt_dataset_size(data, &size), "reading the dataset size");
  int64_t count = f.count < 0 || f.start + f.count > size ? size - f.start : f.count;
  nnrt_array *x = nullptr, *labels = nullptr, *y = nullptr;
  check(nnrt_dataset_examples(ctx, data, f.start, count, &x, &labels), "reading examples");
  check(nnrt_model_predict(model, x, &y), "predicting");
  int64_t shape[NNRT_MAX_DIMS];
  int32_t ndim = 0;
  check(nnrt_array_info(y, nullptr, &ndim, shape), "reading the output");
  int64_t outputs = 1;
  for (int32_t i = 1; i < ndim; ++i) outputs *= shape[i];
  std::vector<float> out(static_cast<size_t>(count * outputs));
  check(nnrt_array_to_host(y, out.data(), out.size() * sizeof(float)), "reading the output");
  nnrt_dtype label_type;
  check(nnrt_array_info(labels, &label_type, nullptr, nullptr), "reading labels");
  std::vector<int64_t> truth;
  if (label_type == NNRT_DTYPE_I64) {
    truth.resize(static_cast<size_t>(count));
    check(nnrt_array_to_host(labels, truth.data(), truth.size() * sizeof(int64_t)), "reading labels");
  }
  std::vector<std::string> names = class_names_for(f.data);
  std::ofstream csv;
  if (!f.output.empty()) {
    csv.open(f.output);
    if (!csv) throw std::runtime_error("cannot write " + f.output);
    csv << "example,predicted,probability" << (truth.empty() ? "" : ",label") << "\n";
  }
  int64_t right = 0;
  for (int64_t i = 0; i < count; ++i) {
    const float *row = out.data() + i * outputs;
    int64_t best = 0;
    for (int64_t k = 1; k < outputs; ++k)
      if (row[k] > row[best]) best = k;
    if (!truth.empty() && truth[static_cast<size_t>(i)] == best) ++right;
    if (csv.is_open()) {
      csv << f.start + i << "," << best << "," << row[best];
      if (!truth.empty()) csv << "," << truth[static_cast<size_t>(i)];
      csv << "\n";
    } else {
      std::string name = best < static_cast<int64_t>(names.size()) ? " (" + names[static_cast<size_t>(best)] + ")" : "";
      std::printf("example %lld: class %lld%s, p = %.4f", static_cast<long long>(f.start + i), static_cast<long long>(best),
                  name.c_str(), row[best]);
      if (!truth.empty()) std::printf(", label %lld%s", static_cast<long long>(truth[static_cast<size_t>(i)]),
                                      truth[static_cast<size_t>(i)] == best ? "" : "  <- wrong");
      std::printf("\n");
    }
  }
  if (!truth.empty()) std::printf("%lld of %lld right\n", static_cast<long long>(right), static_cast<long long>(count));
  nnrt_array_release(y);
  nnrt_array_release(labels);
  nnrt_array_release(x);
  nnrt_dataset_release(data);
  nnrt_model_release(model);
  nnrt_context_release(ctx);
}

}  // namespace

void register_predict(CLI::App &app) {
  auto f = std::make_shared<PredictFlags>();
  CLI::App *cmd = app.add_subcommand("predict", "Run a saved model on examples of a dataset");
  cmd->add_option("--model-file", f->model_file, "A model saved by nnrt (.safetensors) or an ONNX model (.onnx)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--data", f->data, "fashion-mnist, a folder of IDX files (its test split), a .csv file or a spec")
      ->capture_default_str();
  cmd->add_option("--test", f->test, "Predict on this data instead");
  cmd->add_option("--start", f->start, "First example")->capture_default_str()->check(CLI::Range(0L, 1L << 40));
  cmd->add_option("--count", f->count, "Examples (-1: all from --start)")->capture_default_str();
  cmd->add_option("--output", f->output, "Write predictions as CSV to this file");
  add_context_flags(cmd, &f->context);
  cmd->callback([f] { run_predict(*f); });
}

}  // namespace nnrt_cli
