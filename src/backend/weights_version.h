// Versions of an op's weights (nnrt_backend.h, "Ops": args.counter of CONV2D, CONV2D_INT8, MATMUL
// and MATMUL_INT8). A backend that keeps what it derived from the weights (the oneDNN plugin keeps
// convolution and matmul weights reordered into its layout) must otherwise compare their bytes at every call to
// notice a change: at batch 1 that comparison read every weight twice more, a fifth of a ResNet-18
// prediction. With a version it compares nothing while address and version stay the same.
//
// The host vouches only for what cannot change unseen: a model's parameters, read while the model's
// lock is held shared. Every write to parameters holds that lock exclusively, and each exclusive
// unlock draws a new generation (core/shared_mutex.h), which is the version. Arrays the caller or
// a layer made, and parameters read in training, get 0: no promise.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/array.h"

namespace nnrt::backend {

// Vouches, on this thread for its lifetime, that the storages in `stable` keep their bytes while
// `version` (nonzero) stays the version (scopes nest; the innermost wins).
class WeightsVersionScope {
 public:
  WeightsVersionScope(uint64_t version, std::vector<const Storage *> stable);
  ~WeightsVersionScope();
  WeightsVersionScope(const WeightsVersionScope &) = delete;
  WeightsVersionScope &operator=(const WeightsVersionScope &) = delete;

 private:
  uint64_t version_;
  std::vector<const Storage *> stable_;
  const WeightsVersionScope *previous_;
  friend uint64_t weights_version(const Storage *s);
};

// The version vouched for on this thread for the weights in `s`, or 0.
uint64_t weights_version(const Storage *s);

// Whether ops of `kind` read args.counter as their weights' (input 1's) version.
bool takes_weights_version(int32_t kind);

}  // namespace nnrt::backend
