// The nnrt command: one file per subcommand, each written against the public header only.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "nnrt/nnrt.h"

namespace nnrt_cli {

// Options every subcommand that makes a context accepts.
struct ContextFlags {
  std::string backend = "auto";
  int threads = 0;  // 0: the library's default
  std::string options_json() const;
};
void add_context_flags(CLI::App *cmd, ContextFlags *flags);

// Throws std::runtime_error with the library's message when a call fails.
void check(nnrt_status status, const char *what);

// Reads a string through the (buf, cap, len) convention.
template <class Fn>
std::string read_string(Fn &&fn) {
  size_t len = 0;
  check(fn(nullptr, 0, &len), "reading a string");
  std::string s(len + 1, '\0');
  check(fn(&s[0], s.size(), &len), "reading a string");
  s.resize(len);
  return s;
}

// "1.5 MiB"
std::string human_bytes(double bytes);

// Prints an evaluation report (nnrt_evaluation_report's JSON) as tables.
void print_evaluation(const nlohmann::json &report, const std::vector<std::string> &class_names);

// Fashion-MNIST's class names, for data that is Fashion-MNIST; empty otherwise.
std::vector<std::string> class_names_for(const std::string &data);

// Reads a JSON option given inline ("{...}") or as a file path.
std::string json_text(const std::string &inline_or_path);

// A model from a file: an ONNX model (.onnx, imported with `onnx_options`, a JSON object or "")
// or one saved by nnrt (.safetensors).
nnrt_model *open_model(nnrt_context *ctx, const std::string &path, const std::string &onnx_options = "");

void register_info(CLI::App &app);
void register_onnx(CLI::App &app);
void register_train(CLI::App &app);
void register_eval(CLI::App &app);
void register_predict(CLI::App &app);
void register_summary(CLI::App &app);

}  // namespace nnrt_cli
