// Generation from a token model (nnrt_model_generate): the options, and the loop that feeds the
// prompt, chooses each token (sampler.h), feeds it back (decoder.h) and slides the window when it
// is full. nnrt.h documents the behaviour.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/model.h"

namespace nnrt::model {

struct GenerateOptions {
  enum class WhenFull { kSlide, kStop, kError };
  double temperature = 0;
  int64_t top_k = 0;
  uint64_t seed = 0;
  std::vector<int64_t> stop;
  WhenFull when_full = WhenFull::kSlide;
  bool cache = true;

  // Reads the JSON options (NULL: the defaults); the seed defaults to one drawn from the context.
  // Throws NNRT_ERR_INVALID_ARGUMENT naming a bad or unknown key.
  static GenerateOptions parse(const char *json, Context &ctx);
};

// Returns up to max_tokens tokens continuing `prompt`; `on_token` (may be empty) sees each and
// returns true to stop. Checks the prompt against the model; holds the model's lock shared.
std::vector<int64_t> generate(const Model &m, const std::vector<int64_t> &prompt, size_t max_tokens,
                              const GenerateOptions &options, const std::function<bool(int64_t)> &on_token);

}  // namespace nnrt::model
