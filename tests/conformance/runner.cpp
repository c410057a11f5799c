// Runs one case on the backend under test and on the reference, and compares (see runner.h).
#include "runner.h"

#include <cmath>
#include <random>

namespace nnrt::conformance {
namespace {

// The tensors of one run: inputs from the case's seed, outputs pre-filled (poison, or the data of
// read-write outputs; an in-place output holds its input's data).
struct Tensors {
  std::vector<HostTensor> inputs, outputs;
};

Tensors make_tensors(const Case &c) {
  Tensors t;
  std::mt19937_64 rng(c.seed);
  for (int i = 0; i < c.desc.n_inputs; ++i) {
    t.inputs.emplace_back(c.desc.inputs[i]);
    t.inputs.back().fill(c.input_fills[static_cast<size_t>(i)], rng);
  }
  for (int i = 0; i < c.desc.n_outputs; ++i) {
    t.outputs.emplace_back(c.desc.outputs[i]);
    if (i == 0 && c.alias_input >= 0)
      t.outputs.back().copy_from(t.inputs[static_cast<size_t>(c.alias_input)]);
    else
      t.outputs.back().fill(c.output_fills[static_cast<size_t>(i)], rng);
  }
  return t;
}

// Each output element's magnitude (Case::linear_magnitudes, Case::magnitude_input), one tensor per
// output, from the inputs of the reference's run; none if the case asks for none. "" or why the
// reference could not compute them.
std::string magnitudes(const Case &c, const Device &reference, const std::vector<HostTensor> &inputs,
                       std::vector<HostTensor> *out) {
  if (c.linear_magnitudes) {
    // The sum of |term| of every output element: the op itself on |inputs|.
    Tensors t = make_tensors(c);
    for (size_t k = 0; k < t.inputs.size(); ++k)
      for (int64_t i = 0; i < span_elements(inputs[k].desc()); ++i) t.inputs[k].set(i, std::fabs(inputs[k].get(i)));
    Case plain = c;
    plain.desc.attrs.fused = 0;
    if (std::string e = reference.run(plain, t.inputs, t.outputs); !e.empty()) return e;
    *out = std::move(t.outputs);
  } else if (c.magnitude_input >= 0) {
    const HostTensor &in = inputs[static_cast<size_t>(c.magnitude_input)];
    std::vector<double> values;
    for_each_offset(in.desc(), [&](int64_t off) { values.push_back(std::fabs(in.get(off))); });
    for (int k = 0; k < c.desc.n_outputs; ++k) {
      out->emplace_back(c.desc.outputs[k]);
      size_t i = 0;  // the output has the input's dims: its elements in the same order
      for_each_offset(c.desc.outputs[k], [&](int64_t off) {
        if (i < values.size()) out->back().set(off, values[i++]);
      });
    }
  }
  return "";
}

// Compares every output; returns "" or the differences.
std::string compare_outputs(const Case &c, const std::vector<HostTensor> &want, const std::vector<HostTensor> &got,
                            const std::vector<HostTensor> &magnitude) {
  std::string problems;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool poisoned = c.output_fills[i].kind == Fill::poison && !(i == 0 && c.alias_input >= 0);
    const double rel = c.exact ? 0 : relative_tolerance(want[i].desc().dtype);
    Comparison cmp = compare(want[i], got[i], rel, c.scales[i], poisoned, i < magnitude.size() ? &magnitude[i] : nullptr);
    if (!cmp.ok) problems += (problems.empty() ? "" : "; ") + cmp.describe("output " + std::to_string(i));
  }
  return problems;
}

}  // namespace

CaseResult run_case(const Case &c, const Device &tested, const Device &reference) {
  CaseResult r;
  if (!tested.supports(c.desc)) {
    r.status = CaseResult::unsupported;
    r.message = tested.create_refusal(c.desc);
    if (r.message.empty()) {
      r.status = CaseResult::failed;
      r.message = "supports() returned 0 but op_create accepted the descriptor";
    }
    return r;
  }
  if (!reference.supports(c.desc)) {
    r.status = CaseResult::failed;
    r.message = "the reference backend refuses this case: " + reference.create_refusal(c.desc);
    return r;
  }
  Tensors want = make_tensors(c);
  if (std::string e = reference.run(c, want.inputs, want.outputs); !e.empty()) {
    r.status = CaseResult::failed;
    r.message = "reference: " + e;
    return r;
  }
  std::vector<HostTensor> magnitude;
  if (std::string e = magnitudes(c, reference, want.inputs, &magnitude); !e.empty()) {
    r.status = CaseResult::failed;
    r.message = "reference, on the inputs' magnitudes: " + e;
    return r;
  }
  Tensors got = make_tensors(c);
  // The tested op runs first on other data of the same shapes (Device::run): results that depend
  // on what an earlier run left in the workspace differ from the reference's.
  Case other = c;
  other.seed = c.seed ^ 0x9e3779b97f4a7c15ull;
  const Tensors warmup = make_tensors(other);
  std::vector<std::vector<HostTensor>> extra;
  const int copies = c.concurrent ? 3 : 1;
  if (std::string e = tested.run(c, got.inputs, got.outputs, copies, &extra, &warmup.inputs); !e.empty()) {
    r.status = CaseResult::failed;
    r.message = e;
    return r;
  }
  std::string problems = compare_outputs(c, want.outputs, got.outputs, magnitude);
  for (size_t k = 0; k < extra.size() && problems.empty(); ++k) {
    problems = compare_outputs(c, want.outputs, extra[k], magnitude);
    if (!problems.empty()) problems = "concurrent run " + std::to_string(k + 1) + ": " + problems;
  }
  if (!problems.empty()) {
    r.status = CaseResult::failed;
    r.message = problems;
  }
  return r;
}

}  // namespace nnrt::conformance
