#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "cli.h"
#include "data_args.h"

namespace nnrt_cli {

std::string ContextFlags::options_json() const {
  nlohmann::json j = nlohmann::json::object();
  if (backend != "auto") j["backend"] = backend;
  if (threads > 0) j["threads"] = threads;
  return j.dump();
}

void add_context_flags(CLI::App *cmd, ContextFlags *flags) {
  cmd->add_option("--backend", flags->backend, "Backend: auto, reference, onednn, cudnn, or a plugin's name")
      ->capture_default_str();
  cmd->add_option("--threads", flags->threads, "Worker threads (default: NNRT_NUM_THREADS, else all CPUs)")
      ->check(CLI::Range(1, 4096));
}

nnrt::context make_context(const ContextFlags &flags) { return nnrt::context(flags.options_json()); }

std::string human_bytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::vector<int64_t> model_input(const nnrt::model &m) {
  return nlohmann::json::parse(m.summary())["input"].get<std::vector<int64_t>>();
}

void print_evaluation(const nlohmann::json &r, const std::vector<std::string> &names) {
  if (!r.contains("confusion_matrix")) {
    std::printf("examples %lld  MSE %.6g  MAE %.6g  R2 %.4f\n", r["examples"].get<long long>(), r["mse"].get<double>(),
                r["mae"].get<double>(), r["r2"].is_number() ? r["r2"].get<double>() : NAN);
    return;
  }
  if (r.contains("perplexity")) {
    // A language model: a table and a matrix of every token (256 bytes) would say less than these.
    std::printf("perplexity %.3f (loss %.4f per token), next-token accuracy %.4f on %lld examples (%lld tokens)\n",
                r["perplexity"].get<double>(), r["loss"].get<double>(), r["accuracy"].get<double>(),
                r["examples"].get<long long>(), r["labels"].get<long long>());
    return;
  }
  std::printf("accuracy %.4f on %lld examples\n\n", r["accuracy"].get<double>(), r["examples"].get<long long>());
  std::printf("%-14s %9s %9s %9s %8s\n", "class", "precision", "recall", "f1", "support");
  for (const auto &c : r["per_class"]) {
    size_t k = c["class"].get<size_t>();
    std::string name = k < names.size() ? names[k] : std::to_string(k);
    std::printf("%-14s %9.4f %9.4f %9.4f %8lld\n", name.c_str(), c["precision"].get<double>(), c["recall"].get<double>(),
                c["f1"].get<double>(), c["support"].get<long long>());
  }
  for (const char *avg : {"macro_avg", "weighted_avg"}) {
    std::printf("%-14s %9.4f %9.4f %9.4f\n", avg, r[avg]["precision"].get<double>(), r[avg]["recall"].get<double>(),
                r[avg]["f1"].get<double>());
  }
  std::printf("\nconfusion matrix (rows: true class, columns: predicted)\n");
  for (const auto &row : r["confusion_matrix"]) {
    for (const auto &v : row) std::printf("%6lld", v.get<long long>());
    std::printf("\n");
  }
}

std::vector<std::string> class_names_for(const std::string &data) {
  if (data != "fashion-mnist" && data != "fashion_mnist") return {};
  return {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
}

std::string json_text(const std::string &v) { return !v.empty() && v[0] == '{' ? v : read_file(v); }

bool is_onnx(const std::string &path) { return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0; }

nnrt::model open_model(const nnrt::context &ctx, const std::string &path, const std::string &onnx_options) {
  return is_onnx(path) ? nnrt::model::import_onnx(ctx, path, onnx_options) : nnrt::model::load(ctx, path);
}

nnrt::model model_from_config_or_file(const nnrt::context &ctx, const std::string &path, const std::string &onnx_options) {
  if (is_onnx(path)) return nnrt::model::import_onnx(ctx, path, onnx_options);
  unsigned char head[9] = {};
  std::ifstream f(path, std::ios::binary);
  f.read(reinterpret_cast<char *>(head), sizeof head);
  const size_t got = static_cast<size_t>(f.gcount());
  f.seekg(0, std::ios::end);
  const uint64_t size = static_cast<uint64_t>(f.tellg());
  // safetensors: the JSON header's length (8 bytes, little-endian), then the header. A config's
  // first 8 bytes are text, a length far past the file's end.
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | head[i];
  if (got == sizeof head && head[8] == '{' && header <= size - 8) return nnrt::model::load(ctx, path);
  // An ONNX ModelProto starts with its ir_version: field 1, a varint (tag byte 0x08).
  if (got > 0 && head[0] == 0x08) return nnrt::model::import_onnx(ctx, path, onnx_options);
  size_t first = 0;
  while (first < got && std::isspace(head[first])) ++first;
  if (first < got && head[first] != '{') {
    throw std::runtime_error(path + " is not a model config (JSON), a saved model (.safetensors) or an ONNX model "
                             "(.onnx): its first byte is " + std::to_string(head[first]));
  }
  return nnrt::model(ctx, read_file(path));
}

}  // namespace nnrt_cli
