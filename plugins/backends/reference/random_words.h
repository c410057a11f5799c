// kernels::philox_word(seed, i) for increasing i, computing each Philox block of four words once
// instead of once per word. Used by RANDOM and DROPOUT; gives exactly philox_word's values.
#pragma once

#include <stdint.h>

#include "nnrt/kernels/philox.h"

namespace nnrt::reference {

class PhiloxWords {
 public:
  explicit PhiloxWords(uint64_t seed) : seed_(seed) {}

  uint32_t word(uint64_t index) {
    const uint64_t block = index >> 2;
    if (!valid_ || block != block_) {
      words_ = kernels::philox4x32_10(seed_, block);
      block_ = block;
      valid_ = true;
    }
    return words_.v[index & 3u];
  }

 private:
  uint64_t seed_, block_ = 0;
  bool valid_ = false;
  kernels::Philox4 words_{};
};

}  // namespace nnrt::reference
