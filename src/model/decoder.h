// Running a token model one position at a time, for generation (nnrt_model_generate).
//
// A token model reads a window of T token ids ([T], only through embedding layers) and gives
// scores over V tokens at every position ([T, V]). A Decoder feeds it one sequence, growing from
// the left, and returns the scores at the newest position:
//   - cached (the default): each layer runs only on the new positions. Per-position layers run
//     their forward() on [1, n, ...]; attention and position embeddings (StepKind::kCached) run
//     forward_step() with the state they keep between calls, the key/value cache. The prompt is
//     one call (n positions), each new token another (one position).
//   - recomputed: every call runs the whole window, padded to T, through every layer's forward()
//     and reads the newest position. What the cached path must equal, and the way to run a model
//     whose layers have no incremental path.
// A Decoder is used by one thread; the caller holds the model's lock shared while it runs.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"

namespace nnrt::model {

// What makes a model a token model; throws NNRT_ERR_INVALID_ARGUMENT saying what does not fit.
struct TokenModel {
  int64_t window = 0;  // T: the positions it sees
  int64_t vocab = 0;   // V: token ids are 0 .. V - 1
  // True when the scores are the output layer's pre-activation (the logits under its softmax).
  bool pre_activation = false;
  static TokenModel of(const Model &m);
};

class Decoder {
 public:
  // With `cached`, throws NNRT_ERR_UNSUPPORTED naming the first layer that cannot run
  // incrementally, and why.
  Decoder(const Model &m, bool cached);

  // Appends n >= 1 tokens (ids already checked against the vocabulary) to the sequence, which must
  // stay within the window, and returns the V scores at the last of them.
  std::vector<double> append(const int64_t *tokens, int64_t n);
  // Forgets the sequence (and the cache): the next append starts again at position 0.
  void reset();

  int64_t length() const { return static_cast<int64_t>(tokens_.size()); }
  const std::vector<int64_t> &tokens() const { return tokens_; }
  const TokenModel &info() const { return info_; }

 private:
  // Runs the graph on `x` [1, n] (positions start .. start + n - 1; with `stepped` false, the
  // whole padded window from 0) and returns the scores at row `row` of the output.
  std::vector<double> run(const Array &x, int64_t start, bool stepped, int64_t row);

  const Model &model_;
  TokenModel info_;
  bool cached_;
  nnrt_dtype dtype_;
  std::vector<Array> params_;       // in the dtype activations are computed in
  std::vector<StepState> states_;   // per node: the kCached layers' caches
  std::vector<StepKind> kinds_;     // per node
  std::vector<int64_t> tokens_;     // the sequence so far
};

}  // namespace nnrt::model
