// Choosing the next token from a token model's scores (nnrt_model_generate): greedy, or a seeded
// draw from softmax(scores / temperature) over the top-k scores.
//
// The draws come from data::RandomWords (Philox, a pure function of the seed), one 53-bit uniform
// per token, so one seed names one sequence of tokens for given scores.
#pragma once

#include <cstdint>
#include <vector>

#include "data/shuffle.h"

namespace nnrt::model {

class TokenSampler {
 public:
  // temperature 0: greedy; top_k 0: every token.
  TokenSampler(double temperature, int64_t top_k, uint64_t seed);

  // The chosen token id. Throws NNRT_ERR_INVALID_ARGUMENT when a score is NaN.
  int64_t next(const std::vector<double> &scores);

 private:
  double temperature_;
  int64_t top_k_;
  data::RandomWords random_;
};

}  // namespace nnrt::model
