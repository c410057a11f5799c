// What the model tests share: contexts by backend name, layers built from JSON, arrays from host
// values, parameters as a model would pass them, and the gradient check by central differences.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/context.h"
#include "model/layer.h"

namespace nnrt::model::testing {

// A context on the named backend ("reference", "onednn"), or nullptr when none can be made here
// (the plugin is not built or does not load).
std::shared_ptr<Context> make_context(const std::string &backend);

// A layer made from a config such as {"type": "conv2d", "filters": 3, "kernel": 3} and built for
// inputs of the given per-example shapes.
struct BuiltLayer {
  std::unique_ptr<Layer> layer;
  Shape out_shape;  // per example
};
BuiltLayer build_layer(const Json &config, const std::vector<Shape> &inputs);

// ---- arrays ---------------------------------------------------------------------------------
Array random_normal(Context &ctx, nnrt_dtype dtype, const Shape &shape, uint64_t seed, double mean = 0,
                    double std = 1);
Array random_uniform(Context &ctx, nnrt_dtype dtype, const Shape &shape, uint64_t seed, double low, double high);
// `values` (row-major) in an array of `dtype` (rounded to nearest for narrower floats).
Array from_doubles(Context &ctx, nnrt_dtype dtype, const Shape &shape, const std::vector<double> &values);
// Distinct values 0.1 apart in a shuffled order: the maximum of any window is unique, and stays
// so under the small steps of a finite difference.
Array distinct_values(Context &ctx, nnrt_dtype dtype, const Shape &shape, uint64_t seed);
// Whole numbers in [0, vocab), with repeats.
Array random_indices(Context &ctx, nnrt_dtype dtype, const Shape &shape, int64_t vocab, uint64_t seed);
// The same values on another context (through the host), in `dtype` (default: a's).
Array copy_to(Context &ctx, const Array &a, nnrt_dtype dtype = nnrt_dtype(0));

// Parameters for a layer as a model passes them: trainable weights in `dtype`; batchnorm's
// vectors and all state in F32 (gamma near 1, a positive running variance).
std::vector<Array> make_params(Context &ctx, const Layer &layer, nnrt_dtype dtype, uint64_t seed);

// max |a - b| / max(max |a|, max |b|): the error relative to the largest magnitude, so entries that
// should be zero do not divide by (almost) zero.
double relative_error(const std::vector<double> &a, const std::vector<double> &b);
double relative_error(const Array &a, const Array &b);

// ---- gradient checks ------------------------------------------------------------------------

// The scalar a gradient check differentiates, as a function of one forward pass, and its gradient
// with respect to what the layer's backward takes as dout.
struct Objective {
  std::function<double(Pass &, const Array &out, const Saved &)> value;
  std::function<Array(Pass &, const Array &out, const Saved &)> dout;
};

// L = sum(out * R) for a fixed random R of the batch output shape.
Objective random_projection(Context &ctx, const Shape &out_shape, nnrt_dtype dtype, uint64_t seed);

struct GradientReport {
  double worst = 0;
  std::vector<std::pair<std::string, double>> errors;  // per checked array: "input 0", "weight"
  std::string describe() const;                        // "input 0 3.1e-11, weight 2.0e-10"
};

struct GradientCheckOptions {
  double step_size = 1e-5;
  // For F32 arrays (batchnorm's gamma and beta, near 1): a power of two, so that x +- h is stored
  // exactly and the difference stays centred on x, yet small enough for a tiny truncation error.
  double step_size_f32 = 1.0 / 4096;
  uint64_t step = 1;              // Pass::step (dropout's mask)
  bool check_inputs = true;       // false for index inputs
  int64_t max_elements = 400;     // per array; larger ones are sampled evenly
};

// Runs the layer forward and backward in training mode, then compares every input gradient and
// trainable parameter gradient with central differences of objective.value. Also checks that
// state parameters get no gradient.
GradientReport check_gradients(Context &ctx, const Layer &layer, const std::vector<Array> &inputs,
                               const std::vector<Array> &params, const Objective &objective,
                               const GradientCheckOptions &options = {});

}  // namespace nnrt::model::testing
