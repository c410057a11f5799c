// nnrt predict: runs a saved model on examples of a dataset and prints (or writes as CSV) the
// predicted class and its probability, or the outputs.
#include <cstdio>
#include <fstream>
#include <vector>

#include "cli.h"
#include "data_args.h"

namespace nnrt_cli {

namespace {

struct PredictFlags {
  ContextFlags context;
  std::string model_file, data = "fashion-mnist", test, output;
  long start = 0, count = 10;
};

// The examples to predict, their labels (class indices; empty for float targets) and the model's
// outputs for them, row by row.
struct Predictions {
  int64_t start = 0, count = 0, outputs = 1;
  std::vector<float> rows;     // count x outputs
  std::vector<int64_t> truth;  // count, or empty
  const float *row(int64_t i) const { return rows.data() + i * outputs; }
};

Predictions predict_examples(const PredictFlags &f, const nnrt::context &ctx, const nnrt::model &model,
                             const nnrt::dataset &data) {
  Predictions p;
  int64_t size = data.size();
  p.start = f.start;
  p.count = f.count < 0 || f.start + f.count > size ? size - f.start : f.count;
  std::pair<nnrt::array, nnrt::array> examples = data.examples(ctx, f.start, p.count);
  nnrt::array y = model.predict(examples.first);
  std::vector<int64_t> shape = y.shape();
  for (size_t i = 1; i < shape.size(); ++i) p.outputs *= shape[i];
  p.rows = y.to_vector<float>();
  if (examples.second.dtype() == NNRT_DTYPE_I64) p.truth = examples.second.to_vector<int64_t>();
  return p;
}

int64_t best_class(const float *row, int64_t outputs) {
  int64_t best = 0;
  for (int64_t k = 1; k < outputs; ++k)
    if (row[k] > row[best]) best = k;
  return best;
}

void write_csv(const Predictions &p, const std::string &path) {
  std::ofstream csv(path);
  if (!csv) throw std::runtime_error("cannot write " + path);
  csv << "example,predicted,probability" << (p.truth.empty() ? "" : ",label") << "\n";
  for (int64_t i = 0; i < p.count; ++i) {
    int64_t best = best_class(p.row(i), p.outputs);
    csv << p.start + i << "," << best << "," << p.row(i)[best];
    if (!p.truth.empty()) csv << "," << p.truth[static_cast<size_t>(i)];
    csv << "\n";
  }
}

void print_lines(const Predictions &p, const std::vector<std::string> &names) {
  for (int64_t i = 0; i < p.count; ++i) {
    int64_t best = best_class(p.row(i), p.outputs);
    std::string name = best < static_cast<int64_t>(names.size()) ? " (" + names[static_cast<size_t>(best)] + ")" : "";
    std::printf("example %lld: class %lld%s, p = %.4f", static_cast<long long>(p.start + i), static_cast<long long>(best),
                name.c_str(), p.row(i)[best]);
    if (!p.truth.empty()) {
      int64_t label = p.truth[static_cast<size_t>(i)];
      std::printf(", label %lld%s", static_cast<long long>(label), label == best ? "" : "  <- wrong");
    }
    std::printf("\n");
  }
}

void print_right(const Predictions &p) {
  if (p.truth.empty()) return;
  int64_t right = 0;
  for (int64_t i = 0; i < p.count; ++i) right += p.truth[static_cast<size_t>(i)] == best_class(p.row(i), p.outputs);
  std::printf("%lld of %lld right\n", static_cast<long long>(right), static_cast<long long>(p.count));
}

void run_predict(const PredictFlags &f) {
  nnrt::context ctx = make_context(f.context);
  nnrt::model model = open_model(ctx, f.model_file);
  DataSpecs specs = resolve_data(f.data, f.test, 0, model_input(model));
  nnrt::dataset data = nnrt::dataset::load(ctx, specs.test.empty() ? specs.train : specs.test);
  Predictions p = predict_examples(f, ctx, model, data);
  if (f.output.empty()) print_lines(p, class_names_for(f.data));
  else write_csv(p, f.output);
  print_right(p);
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
