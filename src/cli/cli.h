// The nnrt command: one file per subcommand, each written against the public API only, through
// nnrt.hpp (whose handles release themselves, and whose nnrt::error main() reports).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "nnrt/nnrt.hpp"

namespace nnrt_cli {

// Options every subcommand that makes a context accepts.
struct ContextFlags {
  std::string backend = "auto";
  int threads = 0;  // 0: the library's default
  std::string options_json() const;
};
// The context these flags ask for.
nnrt::context make_context(const ContextFlags &flags);
void add_context_flags(CLI::App *cmd, ContextFlags *flags);

// "1.5 MiB"
std::string human_bytes(double bytes);

// The model's per-example input shape (its summary's "input").
std::vector<int64_t> model_input(const nnrt::model &m);

// Prints an evaluation report (nnrt_evaluation_report's JSON) as tables; a language model's (one with
// a perplexity) as one line.
void print_evaluation(const nlohmann::json &report, const std::vector<std::string> &class_names);

// Fashion-MNIST's class names, for data that is Fashion-MNIST; empty otherwise.
std::vector<std::string> class_names_for(const std::string &data);

// Reads a JSON option given inline ("{...}") or as a file path.
std::string json_text(const std::string &inline_or_path);

// A model from a file: an ONNX model (.onnx, imported with `onnx_options`, a JSON object or "")
// or one saved by nnrt (.safetensors).
nnrt::model open_model(const nnrt::context &ctx, const std::string &path, const std::string &onnx_options = "");
bool is_onnx(const std::string &path);
// A model from --model: a JSON config file, or a model file (safetensors or ONNX, told by its first
// bytes or its .onnx name) opened as open_model opens it, so that a model file given to --model
// works as with --model-file. A file that is none of these is refused with a message that says so
// (not with the JSON parser's complaint about its bytes).
nnrt::model model_from_config_or_file(const nnrt::context &ctx, const std::string &path,
                                      const std::string &onnx_options = "");

void register_info(CLI::App &app);
void register_onnx(CLI::App &app);
void register_train(CLI::App &app);
void register_eval(CLI::App &app);
void register_predict(CLI::App &app);
void register_summary(CLI::App &app);
void register_generate(CLI::App &app);
void register_quantize(CLI::App &app);

}  // namespace nnrt_cli
