#include "model/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace nnrt::model {

TokenSampler::TokenSampler(double temperature, int64_t top_k, uint64_t seed)
    : temperature_(temperature), top_k_(top_k), random_(seed) {}

int64_t TokenSampler::next(const std::vector<double> &scores) {
  for (double s : scores)
    if (std::isnan(s)) fail(NNRT_ERR_INVALID_ARGUMENT, "the model's scores for the next token are NaN (diverged parameters?)");
  // Highest first, the lower id first among equal scores: greedy takes the first.
  std::vector<int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  const size_t k = top_k_ > 0 && static_cast<size_t>(top_k_) < order.size() ? static_cast<size_t>(top_k_) : order.size();
  auto higher = [&](int64_t a, int64_t b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); };
  if (temperature_ == 0) return *std::min_element(order.begin(), order.end(), higher);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), higher);
  // Weights relative to the highest score, so that exp never overflows.
  std::vector<double> weight(k);
  double total = 0;
  for (size_t i = 0; i < k; ++i) total += weight[i] = std::exp((scores[order[i]] - scores[order[0]]) / temperature_);
  const double u = static_cast<double>(random_.next() >> 11) * 0x1p-53 * total;
  double sum = 0;
  for (size_t i = 0; i < k; ++i) {
    sum += weight[i];
    if (u < sum) return order[i];
  }
  return order[k - 1];  // u rounded up to the total
}

}  // namespace nnrt::model
