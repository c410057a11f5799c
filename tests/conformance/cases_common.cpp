// The case builder, the random picker and the list of all generators.
#include <cstring>

#include "cases.h"

namespace nnrt::conformance {

CaseBuilder::CaseBuilder(int32_t kind, std::string name, std::string group) {
  std::memset(&c_.desc, 0, sizeof c_.desc);
  c_.desc.struct_size = sizeof c_.desc;
  c_.desc.kind = kind;
  c_.name = std::move(name);
  c_.group = std::move(group);
}

CaseBuilder &CaseBuilder::in(const nnrt_tensor_desc &t, Fill f) {
  c_.desc.inputs[c_.desc.n_inputs++] = t;
  c_.input_fills.push_back(f);
  return *this;
}

CaseBuilder &CaseBuilder::out(const nnrt_tensor_desc &t, double scale, Fill f) {
  c_.desc.outputs[c_.desc.n_outputs++] = t;
  c_.scales.push_back(scale);
  c_.output_fills.push_back(f);
  return *this;
}

CaseBuilder &CaseBuilder::attrs(const nnrt_op_attrs &a) {
  c_.desc.attrs = a;
  return *this;
}

CaseBuilder &CaseBuilder::scalar(int i, double v) {
  c_.scalars[i] = v;
  return *this;
}

CaseBuilder &CaseBuilder::counter(uint64_t c) {
  c_.counter = c;
  return *this;
}

CaseBuilder &CaseBuilder::alias(int input) {
  c_.alias_input = input;
  return *this;
}

CaseBuilder &CaseBuilder::concurrent() {
  c_.concurrent = true;
  return *this;
}

CaseBuilder &CaseBuilder::exact() {
  c_.exact = true;
  return *this;
}

Case CaseBuilder::done() const { return c_; }

int64_t Picker::size() {
  static const std::vector<int64_t> sizes{1, 2, 3, 5, 7, 8, 13, 16, 17};
  return one_of(sizes);
}

int64_t Picker::small_size() { return between(1, 5); }

int64_t Picker::between(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
}

bool Picker::chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

nnrt_op_attrs no_attrs() {
  nnrt_op_attrs a;
  std::memset(&a, 0, sizeof a);
  return a;
}

std::string dims_name(const Dims &d) {
  if (d.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + std::to_string(d[i]);
  return s;
}

const std::vector<FusedActivation> &fused_activations() {
  static const std::vector<FusedActivation> v{{0, "none", 0, 0},
                                              {NNRT_UNARY_RELU, "relu", 0, 0},
                                              {NNRT_UNARY_LEAKY_RELU, "leaky_relu", 0.1, 0},
                                              {NNRT_UNARY_ELU, "elu", 1.0, 0},
                                              {NNRT_UNARY_GELU, "gelu", 0, 0},
                                              {NNRT_UNARY_SIGMOID, "sigmoid", 0, 0},
                                              {NNRT_UNARY_TANH, "tanh", 0, 0},
                                              {NNRT_UNARY_LINEAR, "linear", 0.5, 0.25},
                                              {NNRT_UNARY_CLIP, "clip", -0.5, 0.5},
                                              {NNRT_UNARY_SIGN, "sign", 0, 0},
                                              {NNRT_UNARY_SWISH, "silu", 1, 0},
                                              {NNRT_UNARY_HARD_SIGMOID, "hardsigmoid", 1.0 / 6, 0.5},
                                              {NNRT_UNARY_HARD_SWISH, "hardswish", 1.0 / 6, 0.5},
                                              {NNRT_UNARY_GELU_TANH, "gelu_tanh", 0, 0},
                                              {NNRT_UNARY_ERF, "erf", 0, 0},
                                              {NNRT_UNARY_SOFTPLUS, "softplus", 0, 0}};
  return v;
}

const std::vector<int32_t> &float_dtypes() {
  static const std::vector<int32_t> v{NNRT_DTYPE_F32, NNRT_DTYPE_BF16, NNRT_DTYPE_F16, NNRT_DTYPE_F64};
  return v;
}

std::vector<Case> all_cases(uint64_t seed) {
  Picker p(seed);
  std::vector<Case> cases;
  add_copy_fill_random_cases(p, cases);
  add_unary_cases(p, cases);
  add_binary_cases(p, cases);
  add_reduce_softmax_cases(p, cases);
  add_matmul_cases(p, cases);
  add_conv_cases(p, cases);
  add_pool_cases(p, cases);
  add_batchnorm_cases(p, cases);
  add_training_cases(p, cases);
  add_conv_channels_last_cases(cases);
  add_batchnorm_outlier_cases(cases);
  const size_t before_layernorm = cases.size();
  Picker layernorm_picker(seed ^ 0x6c617965726e6f72ull);
  add_layernorm_cases(layernorm_picker, cases);
  const size_t before_int8 = cases.size();
  Picker int8_picker(seed ^ 0x696e7438ull);
  add_int8_cases(int8_picker, cases);
  const size_t before_attention = cases.size();
  Picker attention_picker(seed ^ 0x6174746eull);
  add_attention_cases(attention_picker, cases);
  for (size_t i = 0; i < before_layernorm; ++i) cases[i].seed = p.seed();
  for (size_t i = before_layernorm; i < before_int8; ++i) cases[i].seed = layernorm_picker.seed();
  for (size_t i = before_int8; i < before_attention; ++i) cases[i].seed = int8_picker.seed();
  for (size_t i = before_attention; i < cases.size(); ++i) cases[i].seed = attention_picker.seed();
  return cases;
}

}  // namespace nnrt::conformance
