// nnrt-conformance: every op of the op set, on every backend under test, against the reference.
//
//   nnrt-conformance [--seed N | --seeds N] [--filter TEXT] [--threads N] [--deterministic] [--verbose]
//                    [--list] [--baseline DIR | --write-baseline DIR] [--repeat] PLUGIN.so...
//
// The seed picks the random shapes, layouts and values of the random cases (and every case's data);
// --seeds N runs the suite once for each of the seeds 1..N (not with a baseline, which lists the
// default seed's cases).
//
// Plugins come from the command line or NNRT_CONFORMANCE_BACKENDS (see backends.h). Each case
// runs on the plugin and on the built-in reference backend and the outputs are compared with
// per-dtype tolerances; cases the plugin's supports() refuses are counted as not supported (they
// fall back to the reference backend in nnrt) and listed by group, never failed by themselves.
//
// The baseline DIR/<backend>.txt lists, one name a line, the cases that ran on that backend. With
// --baseline, a case of the list that no longer runs there is a failure (a lost fast path), and
// cases that now run but are not listed are printed, so that the list is updated on purpose with
// --write-baseline (which writes the cases that ran, and checks nothing).
//
// --deterministic opens the backends under test in deterministic mode. A backend that picks
// kernels by timing them (the oneDNN backend's convolution layouts and matmul operands) takes a
// fixed choice there instead, often another one than the timing picks: this run checks it.
//
// Prints "nnrt-test-counts: passed=N failed=N skipped=0" per backend, then one line
// "nnrt-test-counts: passed=0 failed=0 skipped=N reason=TEXT" per reason a case was not supported
// (see scripts/test_summary.py). --repeat prints "nnrt-test-repeats:" instead: the run repeats cases
// that another run counts (other seeds, deterministic mode), so the closing count leaves it out.
// Exit status: 0 all supported cases passed (and none left the baseline); 1 a failure; 77 (skip)
// when no backend under test can run here (probe score 0, e.g. a GPU backend without a GPU) or
// none was given; 2 bad usage.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends.h"
#include "cases.h"
#include "runner.h"

using namespace nnrt::conformance;

namespace {

struct Options {
  uint64_t seed = 20240601;
  int seeds = 0;  // --seeds N: seeds 1..N instead of `seed`
  std::string filter;
  int threads = 2;
  bool deterministic = false;
  bool verbose = false;
  bool list = false;
  bool repeat = false;  // report the cases as repeats of another run's
  std::string baseline, write_baseline;  // folders
  std::vector<std::string> plugins;
};

bool parse(int argc, char **argv, Options *o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *name) -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", name);
        return nullptr;
      }
      return argv[++i];
    };
    if (a == "--seed") {
      const char *v = value("--seed");
      if (!v) return false;
      o->seed = std::strtoull(v, nullptr, 0);
    } else if (a == "--seeds") {
      const char *v = value("--seeds");
      if (!v) return false;
      o->seeds = std::atoi(v);
      if (o->seeds < 1) return false;
    } else if (a == "--filter") {
      const char *v = value("--filter");
      if (!v) return false;
      o->filter = v;
    } else if (a == "--threads") {
      const char *v = value("--threads");
      if (!v) return false;
      o->threads = std::atoi(v);
    } else if (a == "--baseline" || a == "--write-baseline") {
      const char *v = value(a.c_str());
      if (!v) return false;
      (a == "--baseline" ? o->baseline : o->write_baseline) = v;
    } else if (a == "--deterministic") {
      o->deterministic = true;
    } else if (a == "--verbose") {
      o->verbose = true;
    } else if (a == "--list") {
      o->list = true;
    } else if (a == "--repeat") {
      o->repeat = true;
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return false;
    } else {
      o->plugins.push_back(a);
    }
  }
  const bool one_baseline = o->baseline.empty() || o->write_baseline.empty();
  const bool baseline_seed = o->seeds == 0 || (o->baseline.empty() && o->write_baseline.empty());
  return o->threads >= 1 && one_baseline && baseline_seed;
}

struct Tally {
  int passed = 0, failed = 0, unsupported = 0;
  std::set<std::string> ran;  // names of the cases that ran (passed or failed)
  // reason -> op kind (the group's first part) -> cases
  std::map<std::string, std::map<std::string, int>> unsupported_reasons;
  std::vector<std::string> failures;
};

std::string baseline_path(const std::string &folder, const char *backend) {
  return folder + "/" + backend + ".txt";
}

// Compares the cases that ran with the backend's baseline; returns false if one of its cases no
// longer runs or no longer exists (or there is no baseline to compare with).
bool check_baseline(const Options &o, const char *backend, const std::vector<Case> &cases, const Tally &t) {
  std::ifstream in(baseline_path(o.baseline, backend));
  if (!in) {
    std::printf("FAIL baseline: %s does not exist; write it with --write-baseline %s\n",
                baseline_path(o.baseline, backend).c_str(), o.baseline.c_str());
    return false;
  }
  std::set<std::string> listed, selected;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') listed.insert(line);
  for (const Case &c : cases) selected.insert(c.name);
  int lost = 0, gained = 0;
  for (const std::string &name : listed) {
    // Without --filter every case is selected, so a name that is none of them is stale: the cases
    // changed (their names come from seeded draws) and a lost fast path would hide behind it.
    if (o.filter.empty() && !selected.count(name)) {
      std::printf("FAIL baseline: %s is no longer a case; rewrite %s (--write-baseline)\n", name.c_str(),
                  baseline_path(o.baseline, backend).c_str());
      ++lost;
    }
    if (selected.count(name) && !t.ran.count(name)) {
      std::printf("FAIL baseline: %s no longer runs on %s (it falls back to the reference backend)\n",
                  name.c_str(), backend);
      ++lost;
    }
  }
  for (const std::string &name : t.ran) {
    if (!listed.count(name)) {
      std::printf("new on %s: %s now runs there; add it to %s (--write-baseline)\n", backend, name.c_str(),
                  baseline_path(o.baseline, backend).c_str());
      ++gained;
    }
  }
  std::printf("baseline %s: %zu cases listed, %d no longer run, %d run and are not listed\n",
              baseline_path(o.baseline, backend).c_str(), listed.size(), lost, gained);
  return lost == 0;
}

bool write_baseline(const Options &o, const char *backend, const Tally &t) {
  std::string path = baseline_path(o.write_baseline, backend);
  std::ofstream out(path);
  out << "# The conformance cases that run on " << backend << " (not falling back to the reference backend).\n"
      << "# Checked by nnrt-conformance --baseline; rewritten with --write-baseline.\n";
  for (const std::string &name : t.ran) out << name << "\n";
  out.close();
  if (!out) {
    std::printf("FAIL: could not write %s\n", path.c_str());
    return false;
  }
  std::printf("wrote %s: %zu cases\n", path.c_str(), t.ran.size());
  return true;
}

// Runs every case on one backend; returns false if anything failed.
bool test_backend(const BackendSource &b, const Device &reference, const std::vector<Case> &cases,
                  const Options &o, uint64_t seed, bool *ran) {
  std::printf("== %s\n", b.label.c_str());
  if (!b.table) {
    std::printf("FAIL: could not load: %s\n", b.error.c_str());
    return false;
  }
  bool ok = true;
  for (const std::string &problem : check_abi(b)) {
    std::printf("FAIL abi: %s\n", problem.c_str());
    ok = false;
  }
  int32_t devices = 0;
  char reason[512] = "";
  int32_t score = b.table->probe(&devices, reason, sizeof reason);
  if (score <= 0 || devices <= 0) {
    std::printf("SKIP: %s cannot run here (probe score %d): %s\n", b.table->name, score, reason);
    return ok;
  }
  Device tested(b.table, o.threads, o.deterministic);
  if (!tested.opened()) {
    std::printf("FAIL: %s\n", tested.open_error().c_str());
    return false;
  }
  *ran = true;
  std::printf("backend %s, %d thread(s), seed %llu\n", tested.description().c_str(), o.threads,
              static_cast<unsigned long long>(seed));
  Tally t;
  auto start = std::chrono::steady_clock::now();
  for (const Case &c : cases) {
    CaseResult r = run_case(c, tested, reference);
    switch (r.status) {
      case CaseResult::passed:
        ++t.passed;
        t.ran.insert(c.name);
        if (o.verbose) std::printf("pass %s\n", c.name.c_str());
        break;
      case CaseResult::unsupported: {
        ++t.unsupported;
        // Specifics in a trailing "[...]" are left out, so that equal reasons group.
        ++t.unsupported_reasons[r.message.substr(0, r.message.find(" ["))][c.group.substr(0, c.group.find('/'))];
        if (o.verbose) std::printf("not supported %s: %s\n", c.name.c_str(), r.message.c_str());
        break;
      }
      case CaseResult::failed:
        ++t.failed;
        t.ran.insert(c.name);
        t.failures.push_back(c.name + ": " + r.message);
        std::printf("FAIL %s: %s\n", c.name.c_str(), r.message.c_str());
        break;
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("not supported by %s, by reason (op kind x cases):\n", b.table->name);
  for (const auto &reason : t.unsupported_reasons) {
    std::string kinds;
    for (const auto &k : reason.second) kinds += " " + k.first + "x" + std::to_string(k.second);
    std::printf("  %s:%s\n", reason.first.c_str(), kinds.c_str());
  }
  std::printf("%s: %zu cases: %d ran (%d passed, %d failed), %d not supported (%.1f s)\n", b.table->name,
              cases.size(), t.passed + t.failed, t.passed, t.failed, t.unsupported, seconds);
  bool kept = true;
  if (!o.baseline.empty()) kept = check_baseline(o, b.table->name, cases, t);
  if (!o.write_baseline.empty()) kept = write_baseline(o, b.table->name, t);
  const char *counts = o.repeat ? "nnrt-test-repeats" : "nnrt-test-counts";
  std::printf("%s: passed=%d failed=%d skipped=0\n", counts, t.passed, t.failed + (kept ? 0 : 1));
  for (const auto &reason : t.unsupported_reasons) {
    int n = 0;
    for (const auto &k : reason.second) n += k.second;
    // "onednn: op_create: this op ..." -> "not supported by onednn: this op ..."
    std::string why = reason.first;
    for (const std::string &prefix : {std::string(b.table->name) + ": ", std::string("op_create: ")})
      if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
    std::printf("%s: passed=0 failed=0 skipped=%d reason=not supported by %s: %s\n", counts, n, b.table->name,
                why.c_str());
  }
  return ok && kept && t.failed == 0;
}

}  // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: %s [--seed N | --seeds N] [--filter TEXT] [--threads N] [--deterministic] [--verbose]\n"
                 "          [--list] [--baseline DIR | --write-baseline DIR] [--repeat] PLUGIN.so...\n",
                 argv[0]);
    return 2;
  }
  set_log_verbose(o.verbose);
  std::vector<uint64_t> seeds;
  if (o.seeds == 0) seeds.push_back(o.seed);
  for (int s = 1; s <= o.seeds; ++s) seeds.push_back(static_cast<uint64_t>(s));
  auto cases_of = [&](uint64_t seed) {
    std::vector<Case> cases;
    for (Case &c : all_cases(seed))
      if (o.filter.empty() || c.name.find(o.filter) != std::string::npos) cases.push_back(std::move(c));
    return cases;
  };
  if (o.list) {
    for (uint64_t seed : seeds)
      for (const Case &c : cases_of(seed)) std::printf("%s\n", c.name.c_str());
    return 0;
  }
  BackendSource ref = reference_backend();
  if (!ref.table) {
    std::printf("FAIL: %s\n", ref.error.c_str());
    return 1;
  }
  Device reference(ref.table, o.threads);
  if (!reference.opened()) {
    std::printf("FAIL: reference: %s\n", reference.open_error().c_str());
    return 1;
  }
  std::vector<BackendSource> backends = find_backends_under_test(o.plugins);
  if (backends.empty()) {
    std::printf("SKIP: no backend to test (name plugin files or set NNRT_CONFORMANCE_BACKENDS)\n");
    return 77;
  }
  bool ok = true, ran = false;
  for (uint64_t seed : seeds) {
    const std::vector<Case> cases = cases_of(seed);
    for (const BackendSource &b : backends) ok = test_backend(b, reference, cases, o, seed, &ran) && ok;
  }
  if (!ok) return 1;
  return ran ? 0 : 77;
}
