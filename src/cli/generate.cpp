// nnrt generate: continues a prompt with a byte-level token model (such as examples/gpt.json
// trained on text): the prompt's bytes are its tokens, the generated tokens are printed as bytes
// as they come, and the speed goes to stderr.
#include <chrono>
#include <cstdio>
#include <string>

#include "cli.h"

namespace nnrt_cli {

namespace {

struct GenerateFlags {
  ContextFlags context;
  std::string model_file, prompt, when_full = "slide";
  long tokens = 200, top_k = 0, seed = -1;
  double temperature = 0;
  bool no_cache = false, quiet = false;
};

// Token ids above 255 have no byte: shown as <id>.
void print_token(int64_t token) {
  if (token >= 0 && token < 256) std::fputc(static_cast<int>(token), stdout);
  else std::printf("<%lld>", static_cast<long long>(token));
  std::fflush(stdout);
}

void run_generate(const GenerateFlags &f) {
  nnrt::context ctx = make_context(f.context);
  nnrt::model model = open_model(ctx, f.model_file);
  std::vector<int64_t> prompt(f.prompt.begin(), f.prompt.end());
  for (int64_t &t : prompt) t &= 0xff;  // bytes, not chars (which may be signed)
  nlohmann::json options = {{"temperature", f.temperature}, {"top_k", f.top_k}, {"when_full", f.when_full},
                            {"cache", !f.no_cache}};
  if (f.seed >= 0) options["seed"] = f.seed;
  std::fwrite(f.prompt.data(), 1, f.prompt.size(), stdout);
  auto start = std::chrono::steady_clock::now();
  std::vector<int64_t> out = model.generate(prompt, static_cast<size_t>(f.tokens), options.dump(), [](int64_t token) {
    print_token(token);
    return false;
  });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\n");
  if (!f.quiet) {
    std::fprintf(stderr, "generated %zu tokens in %.3f s: %.1f tokens/s (%s)\n", out.size(), seconds,
                 static_cast<double>(out.size()) / seconds,
                 f.no_cache ? "the whole window recomputed for every token" : "key/value cache");
  }
}

}  // namespace

void register_generate(CLI::App &app) {
  auto f = std::make_shared<GenerateFlags>();
  CLI::App *cmd = app.add_subcommand("generate", "Continue a text prompt with a byte-level token model");
  cmd->add_option("--model-file", f->model_file, "A token model saved by nnrt (.safetensors), e.g. a trained examples/gpt.json")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--prompt", f->prompt, "The text to continue (its bytes are the first tokens)")->required();
  cmd->add_option("--tokens", f->tokens, "How many tokens (bytes) to generate")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--temperature", f->temperature, "0: greedy; above 0: sample from softmax(scores / temperature)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-k", f->top_k, "Sample among the k most likely tokens (0: all)")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", f->seed, "The seed of the draws (default: drawn from the context's seed)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--when-full", f->when_full, "When the model's window is full: slide, stop or error")
      ->capture_default_str()
      ->check(CLI::IsMember({"slide", "stop", "error"}));
  cmd->add_flag("--no-cache", f->no_cache, "Recompute the whole window for every token instead of using the key/value cache");
  cmd->add_flag("--quiet", f->quiet, "Do not print the speed to stderr");
  add_context_flags(cmd, &f->context);
  cmd->callback([f] { run_generate(*f); });
}

}  // namespace nnrt_cli
