// Test cases of the conformance suite: one op descriptor each, with how to fill its inputs, how
// precise its outputs must be, and the variations a backend must get right (aliasing, read-write
// outputs, concurrent op_run calls).
//
// The generators cover every op kind of nnrt_backend.h: every alg, dtype and attribute
// combination the header defines, on random shapes drawn from awkward sizes (1, odd, primes),
// with strided, padded, transposed and broadcast (stride 0) tensors. A backend gets the whole
// suite by being listed; what it refuses in supports() is counted as not supported.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "nnrt/nnrt_backend.h"
#include "tensors.h"

namespace nnrt::conformance {

struct Case {
  std::string name;   // unique and readable: what it runs, on which shapes and layouts
  std::string group;  // kind/alg/dtype, for the summary of what a backend does not support
  nnrt_op_desc desc{};
  std::vector<Fill> input_fills;   // one per input
  std::vector<Fill> output_fills;  // one per output: poison, or data for read-write outputs
  std::vector<double> scales;      // one per output: see relative_tolerance()
  double scalars[NNRT_OP_MAX_SCALARS] = {0};
  uint64_t counter = 0;
  int alias_input = -1;  // output 0 is this input's buffer (in-place ops)
  bool concurrent = false;  // also run from several threads at once on one op
  bool exact = false;       // results must be bit-exact (conversions, copies, indices)
  // For inputs whose large values (+-3e9, 1e30) cancel, each output element's tolerance also grows
  // with a magnitude of its own (runner.cpp): with linear_magnitudes, the same op (no fused
  // activation) on the inputs' absolute values, the sum of its terms' magnitudes; with
  // magnitude_input k, |input k| at the same element (an op that multiplies it by a computed factor).
  bool linear_magnitudes = false;
  int magnitude_input = -1;
  // Every operand starts this many elements into its allocation, as a view inside a buffer does
  // (an LSTM gate's slice, an API slice): kernels must not assume more than element alignment.
  int offset_elements = 0;
  uint64_t seed = 0;        // for the input data
};

// Builds cases with less ceremony.
class CaseBuilder {
 public:
  CaseBuilder(int32_t kind, std::string name, std::string group);
  CaseBuilder &in(const nnrt_tensor_desc &t, Fill f = Fill::U(-1, 1));
  CaseBuilder &out(const nnrt_tensor_desc &t, double scale = 1, Fill f = Fill::Poison());
  CaseBuilder &attrs(const nnrt_op_attrs &a);
  CaseBuilder &scalar(int i, double v);
  CaseBuilder &counter(uint64_t c);
  CaseBuilder &alias(int input);
  CaseBuilder &concurrent();
  CaseBuilder &exact();
  Case done() const;

 private:
  Case c_;
};

// Random choices for the generators, seeded once per suite run.
class Picker {
 public:
  explicit Picker(uint64_t seed) : rng_(seed) {}
  int64_t size();                           // an awkward size: 1, 2, 3, 5, 7, 8, 13, 16, 17
  int64_t small_size();                     // 1, 2, 3, 4, 5
  int64_t between(int64_t lo, int64_t hi);  // inclusive
  bool chance(double p);
  template <class T>
  const T &one_of(const std::vector<T> &v) {
    return v[static_cast<size_t>(between(0, static_cast<int64_t>(v.size()) - 1))];
  }
  uint64_t seed() { return rng_(); }
  std::mt19937_64 &rng() { return rng_; }
  // A picker of its own, seeded from this one's state and `salt` without drawing from it: cases
  // added later draw from a fork, so that the cases after them keep their names.
  Picker fork(uint64_t salt) const { return Picker(std::mt19937_64(rng_)() ^ salt); }

 private:
  std::mt19937_64 rng_;
};

// A fused activation of MATMUL, CONV2D and the int8 products: every nnrt_unary_alg they take, with
// its parameters.
struct FusedActivation {
  int32_t alg;
  const char *name;
  double alpha, beta;
};
const std::vector<FusedActivation> &fused_activations();

nnrt_op_attrs no_attrs();
std::string dims_name(const Dims &d);
const std::vector<int32_t> &float_dtypes();  // f32, bf16, f16, f64

// The generators, one per op family. Each appends its cases.
void add_copy_fill_random_cases(Picker &p, std::vector<Case> &out);
void add_unary_cases(Picker &p, std::vector<Case> &out);
void add_binary_cases(Picker &p, std::vector<Case> &out);
void add_reduce_softmax_cases(Picker &p, std::vector<Case> &out);
void add_matmul_cases(Picker &p, std::vector<Case> &out);
void add_conv_cases(Picker &p, std::vector<Case> &out);
void add_conv_channels_last_cases(std::vector<Case> &out);
void add_pool_cases(Picker &p, std::vector<Case> &out);
void add_batchnorm_cases(Picker &p, std::vector<Case> &out);
// A fixed case, after the random ones so that their seeds do not move.
void add_batchnorm_outlier_cases(std::vector<Case> &out);
void add_training_cases(Picker &p, std::vector<Case> &out);  // loss, dropout, gather, optimizer
// Drawn from a picker of their own, so that adding them moved no earlier case's shapes or data.
void add_layernorm_cases(Picker &p, std::vector<Case> &out);
// I8 copies, QUANTIZE, MATMUL_INT8 and CONV2D_INT8; from a picker of their own too.
void add_int8_cases(Picker &p, std::vector<Case> &out);
// ATTENTION and ATTENTION_BACKWARD; from a picker of their own too.
void add_attention_cases(Picker &p, std::vector<Case> &out);

// Every case, in a fixed order for a given seed.
std::vector<Case> all_cases(uint64_t seed);

}  // namespace nnrt::conformance
