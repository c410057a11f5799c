// Choosing among primitives by measuring them, once per op shape and thread count.
//
// oneDNN computes many ops in several layouts, each with its own kernel, and which is fastest
// depends on the ISA, the shape and the threads: LeNet's first convolution (one input channel)
// computes its weight gradient at 117 GFLOP/s in oneDNN's blocked layout and 85 in NHWC on an
// AVX-512 machine, but at 5.2 against 26.5 GFLOP/s on an AVX2 one (1 thread; 9.3 against 48 at 2),
// where the blocked kernel was half of a training step. So an op that has several candidates runs
// each once on scratch data, counting the reorders between the user's layouts and the candidate's
// that its bridges would add, keeps the fastest, and remembers the choice for the process.
//
// Deterministic mode does not measure: its results must not depend on a timing, so it takes the
// first candidate, and the op files order candidates by ISA from these measurements.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "onednn_common.h"

namespace nnrt::onednn {

// One way to compute an op: its primitive descriptor, and for each argument that comes from or
// goes to the user, the user's layout (a reorder is counted where it differs from the primitive's).
// A way that is not one primitive (a kernel of the plugin's own) gives instead `seconds`, which
// times one run of it on scratch data, and a `name` for the log.
struct Candidate {
  const dnnl::primitive_desc_base *pd;
  std::vector<std::pair<int, md>> user_layouts;  // DNNL_ARG_* and the user's descriptor
  std::function<double()> seconds = nullptr;
  const char *name = nullptr;
  // Its time is multiplied by this before the comparison: above 1 for a way that costs memory (a
  // kept copy of the weights), which must then be that much faster to be chosen.
  double handicap = 1.0;
};

// The index of the candidate to use. `key` names the op (its normalized descriptor); the thread
// count the caller's OpenMP setting allows is added to it. With one candidate, or `measure` false,
// returns 0 without running anything.
size_t fastest_candidate(const std::string &key, const std::vector<Candidate> &candidates, bool measure);

// Memory of descriptor m (owned by the returned object) filled with small finite values, so that no
// kernel timed on it meets denormals or NaN. Throws dnnl::error when it cannot be allocated.
dnnl::memory scratch_memory(const md &m);

// Whether the CPU runs oneDNN's AVX-512 kernels (the ISA oneDNN dispatches to, after any
// DNNL_MAX_CPU_ISA cap).
bool has_avx512_kernels();

}  // namespace nnrt::onednn
