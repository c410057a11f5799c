// Measured choice among primitives (see onednn_measure.h).
#include "onednn_measure.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace nnrt::onednn {
namespace {

// Every argument a candidate may take; the primitive descriptor says which it has.
constexpr int kArgs[] = {DNNL_ARG_SRC,          DNNL_ARG_WEIGHTS,      DNNL_ARG_BIAS,     DNNL_ARG_DST,
                         DNNL_ARG_DIFF_SRC,     DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS, DNNL_ARG_DIFF_DST,
                         DNNL_ARG_WORKSPACE,    DNNL_ARG_SCRATCHPAD};

// One candidate made runnable: its primitive and the reorders its bridges would run.
struct Trial {
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;
  std::vector<std::pair<dnnl::reorder, std::pair<dnnl::memory, dnnl::memory>>> reorders;

  explicit Trial(const Candidate &c) : primitive(c.pd->get()) {
    for (int arg : kArgs) {
      md m = c.pd->query_md(dnnl::query::exec_arg_md, arg);
      if (m.get_size() != 0) args.emplace(arg, scratch_memory(m));
    }
    for (const auto &[arg, user] : c.user_layouts) {
      auto it = args.find(arg);
      if (it == args.end() || it->second.get_desc() == user) continue;
      dnnl::memory u = scratch_memory(user);
      reorders.push_back({dnnl::reorder(u, it->second), {u, it->second}});
    }
  }

  double seconds() {
    dnnl::stream &s = thread_stream();
    const auto start = std::chrono::steady_clock::now();
    for (auto &[r, from_to] : reorders) r.execute(s, from_to.first, from_to.second);
    primitive.execute(s, args);
    s.wait();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

// One candidate's measurement: its runs so far and the best of them.
struct Timing {
  std::unique_ptr<Trial> trial;  // a primitive's; null for a candidate that times itself
  double best = std::numeric_limits<double>::infinity();
  bool finished = false;  // ruled out by a slow first run, or could not be measured
};

// One more timed run of candidate c. A primitive's first run, which also faults its pages in, is
// not counted unless it is over a tenth of a second, which is enough to rule the candidate out.
void time_once(const Candidate &c, Timing &t) {
  if (c.seconds) {
    t.best = std::min(t.best, c.seconds());
    return;
  }
  if (!t.trial) {
    t.trial = std::make_unique<Trial>(c);
    const double first = t.trial->seconds();
    if (first > 0.1) {
      t.best = first;
      t.finished = true;
      return;
    }
  }
  t.best = std::min(t.best, t.trial->seconds());
}

// Candidates take turns, kRounds times, and each keeps its best run: a burst of other work on the
// machine (a shared host) then slows one turn of each rather than every run of one. Timed one after
// the other, a 2x faster candidate lost once in about 36 processes on a noisy 2-core VM.
constexpr int kRounds = 4;

std::string name_of(const Candidate &c) { return c.name ? c.name : c.pd->impl_info_str(); }

std::mutex choices_mutex;
std::unordered_map<std::string, size_t> &choices() {
  static std::unordered_map<std::string, size_t> table;
  return table;
}

// Held while measuring: one measurement at a time, so that candidates are not timed against each
// other's work, and ops created at once on several threads (data-parallel workers) wait for the
// first one's choice instead of making their own, possibly different, one.
std::mutex measuring_mutex;

bool remembered(const std::string &key, size_t count, size_t *choice) {
  std::lock_guard<std::mutex> lock(choices_mutex);
  auto it = choices().find(key);
  if (it == choices().end() || it->second >= count) return false;
  *choice = it->second;
  return true;
}

}  // namespace

// Every 16-bit half reads 0x3e80: 0.25 as bf16, about 0.25 as f32.
dnnl::memory scratch_memory(const md &m) {
  dnnl::memory mem(m, cpu_engine());
  auto *p = static_cast<uint16_t *>(mem.get_data_handle());
  std::fill(p, p + m.get_size() / sizeof(uint16_t), static_cast<uint16_t>(0x3e80));
  return mem;
}

size_t fastest_candidate(const std::string &key, const std::vector<Candidate> &candidates, bool measure) {
  if (candidates.size() <= 1 || !measure) return 0;
  const std::string full_key = key + "/threads " + std::to_string(omp_get_max_threads());
  size_t best = 0;
  if (remembered(full_key, candidates.size(), &best)) return best;
  std::lock_guard<std::mutex> measuring(measuring_mutex);
  if (remembered(full_key, candidates.size(), &best)) return best;
  std::vector<Timing> timings(candidates.size());
  for (int round = 0; round < kRounds; ++round)
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (timings[i].finished) continue;
      try {
        time_once(candidates[i], timings[i]);
      } catch (const dnnl::error &e) {
        // No memory for its scratch data (or no primitive after all): not chosen, unless none is.
        log_debug("could not measure " + name_of(candidates[i]) + ": " + e.what());
        timings[i].finished = true;
        timings[i].best = std::numeric_limits<double>::infinity();
      }
    }
  double best_seconds = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (timings[i].best == std::numeric_limits<double>::infinity()) continue;  // not measured
    log_debug("measured " + name_of(candidates[i]) + ": " + std::to_string(timings[i].best * 1e6) + " us");
    if (timings[i].best * candidates[i].handicap < best_seconds) {
      best_seconds = timings[i].best * candidates[i].handicap;
      best = i;
    }
  }
  std::lock_guard<std::mutex> lock(choices_mutex);
  if (choices().size() >= 4096) choices().clear();  // a bound, not a policy
  choices().emplace(full_key, best);
  return best;
}

bool has_avx512_kernels() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  return (isa & avx512) == avx512;
}

}  // namespace nnrt::onednn
