#include "data/shuffle.h"

#include <numeric>
#include <utility>

namespace nnrt::data {

uint64_t RandomWords::next() {
  if (used_ == 2) {
    words_ = kernels::philox4x32_10(seed_, block_++);
    used_ = 0;
  }
  const uint32_t *w = words_.v + 2 * used_++;
  return (static_cast<uint64_t>(w[0]) << 32) | w[1];
}

uint64_t RandomWords::below(uint64_t bound) {
  // Words below `floor` would make the low residues more likely than the high ones: 2^64 mod
  // bound of them, the smallest, are drawn again.
  const uint64_t floor = (0 - bound) % bound;
  for (;;) {
    uint64_t w = next();
    if (w >= floor) return w % bound;
  }
}

std::vector<int64_t> identity_order(int64_t n) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  return order;
}

std::vector<int64_t> shuffled_order(int64_t n, uint64_t seed) {
  std::vector<int64_t> order = identity_order(n);
  RandomWords random(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    int64_t j = static_cast<int64_t>(random.below(static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace nnrt::data
