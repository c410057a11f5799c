// The layer configurations every layer test runs: each layer kind with the options that change its
// arithmetic (stride, padding, dilation, groups, fused and unfused activations, ...).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "backend/array.h"
#include "backend/context.h"

namespace nnrt::model::testing {

enum class InputKind {
  kNormal,        // normal(0, 1)
  kDistinct,      // no ties, for max pooling
  kIndices,       // I64 indices in [0, vocab)
  kFloatIndices,  // the same, as whole-number floats (what a model passes on)
};

struct LayerCase {
  std::string name;           // the test's name
  std::string config;         // the layer's JSON
  std::vector<Shape> inputs;  // per example
  int64_t batch = 2;
  InputKind kind = InputKind::kNormal;
  int64_t vocab = 0;  // for index inputs
};

const std::vector<LayerCase> &layer_cases();

// gtest prints a case by its name.
inline void PrintTo(const LayerCase &c, std::ostream *os) { *os << c.name; }

// The inputs of a case for a batch, in `dtype` (float inputs) on ctx.
std::vector<Array> make_inputs(Context &ctx, const LayerCase &c, nnrt_dtype dtype, uint64_t seed);

}  // namespace nnrt::model::testing
