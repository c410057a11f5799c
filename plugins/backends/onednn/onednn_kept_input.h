// An input kept in the layout a primitive reads, from call to call, for as long as its bytes do not
// change: a model's weights, reordered once instead of at every prediction.
//
// A convolution reads its weights in a blocked layout of oneDNN's choice and nnrt's are OIHW, so
// each call used to reorder them: about a quarter of a batch-1 LeNet prediction (conv2's 25000
// weights). The op now keeps the reordered copy together with a copy of the bytes it was made from,
// and a call whose input holds the same bytes (one memcmp, several times cheaper than the reorder)
// reuses it. Comparing the bytes, not an address or a counter, notices every change whoever made it:
// a training step, set_param, a restored checkpoint, another model's weights at the same address.
// A changed input costs the comparison (which stops at the first difference) and the reorder that
// was done anyway. Where the host gives the weights a version (args.counter of the kinds that keep
// input 1; nnrt_backend.h, "Ops"), a call with the version its bytes were last found under compares
// nothing: at batch 1 the comparison read every weight twice, a fifth of a ResNet-18 prediction. What the op derives from the bytes (whether they hold NaN or infinities) is kept
// with them.
//
// One op serves every layer whose convolution has the same descriptor (a ResNet's stages repeat
// the same 3x3 convolution in each block), so it keeps one entry per input address, a few of them:
// with one, two such layers took turns replacing it, and every call reordered its weights again
// (ResNet-18, batch 1: 13 weight reorders a prediction, none now).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "onednn_common.h"

namespace nnrt::onednn {

class KeptInput {
 public:
  // What a call reads: the input in the primitive's layout, and its special values (a SpecialValue
  // mask; 0 when not asked for).
  struct Entry;

  // `t` is the input's descriptor, `scan` whether calls need its special values. With
  // `versioned_only`, only calls that give the input a version keep it (and no copy of its bytes is
  // kept to compare): an op that reads the input where it lies at other calls, as a matmul reads a
  // weight being trained, keeps a second layout only of the weights the host vouches for.
  KeptInput(const nnrt_tensor_desc &t, bool scan, bool versioned_only = false);

  // Input `index` of the run through `bridge` (its user-to-primitive reorder): the entry kept for
  // the input's address when the input's bytes are those it was made from, else a new one,
  // reordered now and kept in its place (the least recently used goes beyond max_kept()). With
  // versioned_only, nullptr for a call without a version.
  std::shared_ptr<const Entry> get(const Run &r, int index, const Bridge &bridge) const;

 private:
  nnrt_tensor_desc desc_;
  size_t span_bytes_;  // from element 0 to the last element the descriptor covers
  bool scan_;
  bool versioned_only_;
  // How many entries: a few where each also holds its source bytes (one op serves every layer of
  // one shape: ResNet-50 has up to 6 alike); more for versioned_only, where one op serves the
  // matmuls of every layer of a transformer (BERT-base: 48 of one shape) and an entry beyond the
  // bound would be reordered again at every call. kMaxKeptBytes bounds those, so that the weights
  // of models released since, which stay until used ones replace them, cannot pile up.
  size_t max_kept() const { return versioned_only_ ? 256 : 16; }
  static constexpr size_t kMaxKeptBytes = size_t{1} << 30;
  mutable uint64_t uses_ = 0;  // calls that found or made an entry (under mutex_)
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const Entry>> kept_;  // the most recently made first
};

struct KeptInput::Entry {
  const void *address = nullptr;            // of the input it was made from
  std::unique_ptr<unsigned char[]> source;  // the input's bytes it was made from (none: versioned_only)
  std::shared_ptr<void> inner;              // the reordered copy (64-byte aligned)
  // The host's version of the input under which its bytes were last found to be `source`'s (0:
  // none): a call with that version at this address needs no comparison.
  mutable std::atomic<uint64_t> version{0};
  dnnl::memory memory;                      // over inner, in the primitive's layout
  uint32_t special = 0;
  mutable uint64_t last_use = 0;  // the owner's uses_ at this entry's last use (under its mutex_)
};

}  // namespace nnrt::onednn
