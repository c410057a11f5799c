#include "model/generate.h"

#include <algorithm>
#include <shared_mutex>

#include "core/error.h"
#include "model/decoder.h"
#include "model/sampler.h"

namespace nnrt::model {

GenerateOptions GenerateOptions::parse(const char *json, Context &ctx) {
  const Json parsed = parse_json_object(json, "options");  // the reader keeps a reference to it
  JsonReader r(parsed, "options");
  GenerateOptions o;
  o.temperature = r.get_number("temperature", 0, 0);
  o.top_k = r.get_int("top_k", 0, 0);
  o.seed = r.has("seed") ? static_cast<uint64_t>(r.get_int("seed", 0, 0)) : ctx.next_seed();
  o.stop = r.get_int_list("stop", {});
  const std::string full = r.get_string("when_full", "slide");
  if (full == "slide") o.when_full = WhenFull::kSlide;
  else if (full == "stop") o.when_full = WhenFull::kStop;
  else if (full == "error") o.when_full = WhenFull::kError;
  else fail(NNRT_ERR_INVALID_ARGUMENT, "options.when_full: expected \"slide\", \"stop\" or \"error\", got \"", full, "\"");
  o.cache = r.get_bool("cache", true);
  r.finish();
  return o;
}

namespace {

void check_tokens(const std::vector<int64_t> &tokens, const TokenModel &t, const char *what) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= t.vocab) {
      fail(NNRT_ERR_INVALID_ARGUMENT, what, "[", i, "] is ", tokens[i], ": token ids of this model are 0 .. ", t.vocab - 1);
    }
  }
}

}  // namespace

std::vector<int64_t> generate(const Model &m, const std::vector<int64_t> &prompt, size_t max_tokens,
                              const GenerateOptions &options, const std::function<bool(int64_t)> &on_token) {
  std::shared_lock<WriterPreferringSharedMutex> read(m.lock());
  Decoder decoder(m, options.cache);
  const TokenModel &t = decoder.info();
  const int64_t window = t.window, n = static_cast<int64_t>(prompt.size());
  if (prompt.empty()) fail(NNRT_ERR_INVALID_ARGUMENT, "the prompt is empty; generation needs at least one token to continue");
  if (n > window) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "the prompt has ", n, " tokens, more than the ", window, " positions the model sees");
  }
  check_tokens(prompt, t, "prompt");
  check_tokens(options.stop, t, "options.stop");
  // The last token is never fed back, so n + max_tokens - 1 positions are needed.
  if (options.when_full == GenerateOptions::WhenFull::kError && max_tokens > 0 &&
      static_cast<uint64_t>(n) + max_tokens - 1 > static_cast<uint64_t>(window)) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "a prompt of ", n, " tokens and ", max_tokens, " new ones need ", n + static_cast<int64_t>(max_tokens) - 1,
         " positions, more than the model's ", window, " (options.when_full is \"error\")");
  }
  std::vector<int64_t> out;
  if (max_tokens == 0) return out;
  TokenSampler sampler(options.temperature, options.top_k, options.seed);
  std::vector<double> scores = decoder.append(prompt.data(), n);
  for (;;) {
    const int64_t token = sampler.next(scores);
    out.push_back(token);
    bool stop = on_token && on_token(token);
    stop = stop || std::find(options.stop.begin(), options.stop.end(), token) != options.stop.end();
    if (stop || out.size() == max_tokens) break;
    if (decoder.length() < window) {
      scores = decoder.append(&token, 1);
      continue;
    }
    if (options.when_full == GenerateOptions::WhenFull::kStop) break;
    // Slide: the positions restart from 0, so the cache cannot be shifted; the last half of the
    // window (with the new token) runs again as a prompt.
    const int64_t keep = std::max<int64_t>(1, window / 2);
    std::vector<int64_t> kept(decoder.tokens().end() - (keep - 1), decoder.tokens().end());
    kept.push_back(token);
    decoder.reset();
    scores = decoder.append(kept.data(), keep);
  }
  return out;
}

}  // namespace nnrt::model
