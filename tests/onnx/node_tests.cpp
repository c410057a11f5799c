// The ONNX project's backend node tests (Debian's libonnx-testdata: each a model.onnx and
// test_data_set_*/input_*.pb, output_*.pb) run through nnrt's importer. A test whose model imports
// runs and must match the expected outputs at the ONNX test runner's tolerances (rtol 1e-3,
// atol 1e-7, as numpy.testing.assert_allclose); one that nnrt refuses with NNRT_ERR_UNSUPPORTED
// is skipped, and the reason (the node, op type and opset) is printed. Any other failure fails.
//
// Inputs after the first are given to the importer as initializers holding the test's data: most
// are operands nnrt takes as constants (Gemm's B and C, a Reshape's shape, Clip's bounds).
// They predict one output, so a graph with several is checked once per output, as the graph that
// has only that one (every output must match).
// Each model is imported with the batch in dim 0 first, then, if that is refused, as one example
// ({"batch": false}; nnrt adds the batch dim), which lets ops over ONNX's dim 0 run.
//
// Each node test is one case of the count lines scripts/test_summary.py reads: "nnrt-test-counts:
// passed=N failed=N skipped=0", then one line per kind of skip with its reason (the op types
// the importer refuses are listed in the output above them).
//
// Usage: onnx_node_tests [data/node folder] [name filter]
#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/shape.h"
#include "onnx_tensor.h"
#include "nnrt/nnrt.h"
#include "onnx.pb.h"

using namespace nnrt::io::onnx_format;

namespace {

constexpr double kRtol = 1e-3, kAtol = 1e-7;

std::vector<std::string> list_dir(const std::string &dir, const std::string &prefix) {
  std::vector<std::string> out;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind(prefix, 0) == 0 && n != "." && n != "..") out.push_back(n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool read_file(const std::string &path, std::string &bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  bytes = s.str();
  return true;
}

bool read_tensor_file(const std::string &path, HostTensor &out) {
  std::string bytes;
  onnx::TensorProto t;
  if (!read_file(path, bytes) || !t.ParseFromString(bytes)) return false;
  out = read_tensor(t, "", path);
  return true;
}

struct Outcome {
  enum Kind { kPassed, kFailed, kSkipped } kind;
  std::string detail;
};

// Imports `model` with `options`; the status, and the model on success.
nnrt_status import(nnrt_context *ctx, const std::string &bytes, const char *options, nnrt_model **m, std::string &msg) {
  nnrt_status s = nnrt_model_import_onnx_memory(ctx, bytes.data(), bytes.size(), options, m);
  if (s != NNRT_OK) msg = std::string(nnrt_status_name(s)) + ": " + nnrt_last_error();
  return s;
}

Outcome run_output(nnrt_context *ctx, onnx::ModelProto model, const std::vector<HostTensor> &inputs,
                   const HostTensor &want);

Outcome run_case(nnrt_context *ctx, const std::string &dir, const std::string &data_set, const onnx::ModelProto &model) {
  std::vector<HostTensor> inputs, outputs;
  for (int i = 0;; ++i) {
    HostTensor t;
    if (!read_tensor_file(dir + "/" + data_set + "/input_" + std::to_string(i) + ".pb", t)) break;
    inputs.push_back(std::move(t));
  }
  for (int i = 0;; ++i) {
    HostTensor t;
    if (!read_tensor_file(dir + "/" + data_set + "/output_" + std::to_string(i) + ".pb", t)) break;
    outputs.push_back(std::move(t));
  }
  if (outputs.empty()) return {Outcome::kSkipped, "no expected outputs"};
  // nnrt models predict one output: a graph with several is checked once per output, as the graph
  // that has only that one.
  if (static_cast<int>(outputs.size()) != model.graph().output_size()) {
    return {Outcome::kSkipped, "the graph has " + std::to_string(model.graph().output_size()) + " outputs and the data set " +
                                   std::to_string(outputs.size())};
  }
  Outcome total{Outcome::kPassed, ""};
  for (size_t k = 0; k < outputs.size(); ++k) {
    onnx::ModelProto one = model;
    one.mutable_graph()->clear_output();
    *one.mutable_graph()->add_output() = model.graph().output(static_cast<int>(k));
    Outcome o = run_output(ctx, std::move(one), inputs, outputs[k]);
    if (outputs.size() > 1) o.detail = "output " + std::to_string(k) + ": " + o.detail;
    if (o.kind != Outcome::kPassed || total.detail.empty()) total = o;
    if (o.kind != Outcome::kPassed) break;
  }
  return total;
}

Outcome run_output(nnrt_context *ctx, onnx::ModelProto model, const std::vector<HostTensor> &inputs,
                   const HostTensor &want) {
  // The graph's run-time inputs in order; all but the first become initializers.
  onnx::GraphProto &g = *model.mutable_graph();
  std::vector<std::string> initializers;
  for (const auto &t : g.initializer()) initializers.push_back(t.name());
  std::vector<int> runtime;
  for (int i = 0; i < g.input_size(); ++i)
    if (std::find(initializers.begin(), initializers.end(), g.input(i).name()) == initializers.end()) runtime.push_back(i);
  if (runtime.empty() || inputs.size() != runtime.size()) {
    return {Outcome::kSkipped, "the graph has " + std::to_string(runtime.size()) + " inputs and the data set " +
                                   std::to_string(inputs.size())};
  }
  for (size_t k = 1; k < runtime.size(); ++k) {
    onnx::TensorProto &t = *g.add_initializer();
    t.set_name(g.input(runtime[k]).name());
    t.set_data_type(inputs[k].elem_type);
    for (int64_t d : inputs[k].dims) t.add_dims(d);
    t.set_raw_data(inputs[k].bytes);
  }
  std::string bytes;
  model.SerializeToString(&bytes);

  nnrt_model *m = nullptr;
  std::string msg_batch, msg_example;
  bool batch = true;
  nnrt_status s = import(ctx, bytes, nullptr, &m, msg_batch);
  if (s == NNRT_ERR_UNSUPPORTED) {
    batch = false;
    s = import(ctx, bytes, "{\"batch\": false}", &m, msg_example);
  }
  if (s == NNRT_ERR_UNSUPPORTED) {
    // The more telling reason: the one that is not about the batch dim.
    bool about_batch = msg_batch.find("batch") != std::string::npos;
    return {Outcome::kSkipped, about_batch ? msg_example : msg_batch};
  }
  if (s != NNRT_OK) return {Outcome::kFailed, "import: " + (msg_example.empty() ? msg_batch : msg_example)};

  const HostTensor &x = inputs[0];
  std::vector<float> xf = x.floats();
  std::vector<int64_t> xdims = x.dims;
  if (!batch) xdims.insert(xdims.begin(), 1);
  nnrt_array *in = nullptr, *out = nullptr;
  Outcome result{Outcome::kPassed, batch ? "batch in dim 0" : "one example"};
  s = nnrt_array_from_host(ctx, NNRT_DTYPE_F32, static_cast<int32_t>(xdims.size()), xdims.data(), xf.data(),
                           xf.size() * sizeof(float), &in);
  if (s == NNRT_OK) s = nnrt_model_predict(m, in, &out);
  if (s != NNRT_OK) {
    result = {Outcome::kFailed, std::string("predict: ") + nnrt_status_name(s) + ": " + nnrt_last_error()};
  } else {
    std::vector<int64_t> wdims = want.dims;
    if (!batch) wdims.insert(wdims.begin(), 1);
    int32_t ndim = 0;
    int64_t shape[NNRT_MAX_DIMS];
    nnrt_array_info(out, nullptr, &ndim, shape);
    std::vector<int64_t> got_dims(shape, shape + ndim);
    if (got_dims != wdims) {
      result = {Outcome::kFailed, "output shape " + nnrt::to_string(nnrt::Shape::of(got_dims)) + ", expected " +
                                      nnrt::to_string(nnrt::Shape::of(wdims))};
    } else {
      std::vector<float> got(static_cast<size_t>(want.numel()));
      nnrt_array_to_host(out, got.data(), got.size() * sizeof(float));
      std::vector<float> expected = want.floats();
      size_t bad = 0, first = 0;
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        double e = expected[i], g = got[i];
        bool ok = (std::isnan(e) && std::isnan(g)) || e == g || std::fabs(g - e) <= kAtol + kRtol * std::fabs(e);
        if (!ok) {
          if (bad++ == 0) first = i;
          worst = std::max(worst, std::fabs(g - e));
        }
      }
      if (bad) {
        std::ostringstream o;
        o << bad << " of " << got.size() << " values differ (element " << first << ": got " << got[first] << ", expected "
          << expected[first] << "; largest difference " << worst << ")";
        result = {Outcome::kFailed, o.str()};
      }
    }
  }
  nnrt_array_release(in);
  nnrt_array_release(out);
  nnrt_model_release(m);
  return result;
}

// The kind of reason a test was skipped for, as reported with the counts.
std::string skip_kind(const std::string &detail) {
  if (detail.rfind("test data: ", 0) == 0) return "test data nnrt cannot read (strings, complex numbers)";
  if (detail.find("the graph has ") != std::string::npos) {
    return "the test's inputs or outputs do not match its graph's (initializers given as inputs)";
  }
  if (detail == "no test data" || detail == "no expected outputs") return "the test has no test data";
  return "the ONNX importer refuses the model (NNRT_ERR_UNSUPPORTED: an op, attribute or dtype)";
}

}  // namespace

int main(int argc, char **argv) {
  std::string root = argc > 1 ? argv[1] : "/usr/share/libonnx-testdata/data/node";
  std::string filter = argc > 2 ? argv[2] : "";
  std::vector<std::string> tests = list_dir(root, "test_");
  if (tests.empty()) {
    std::printf("SKIP: no ONNX node tests under %s (Debian: libonnx-testdata; scripts/setup installs it)\n", root.c_str());
    return 77;
  }
  nnrt_context *ctx = nullptr;
  if (nnrt_context_create("{\"backend\": \"reference\"}", &ctx) != NNRT_OK) {
    std::printf("FAIL: context: %s\n", nnrt_last_error());
    return 1;
  }
  int run = 0, passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> skip_reasons;  // by op type where the message names one
  std::map<std::string, int> skip_kinds;    // by skip_kind
  for (const std::string &name : tests) {
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    std::string dir = root + "/" + name, bytes;
    onnx::ModelProto model;
    if (!read_file(dir + "/model.onnx", bytes) || !model.ParseFromString(bytes)) {
      std::printf("FAIL %s: model.onnx does not parse\n", name.c_str());
      ++failed;
      continue;
    }
    std::vector<std::string> sets = list_dir(dir, "test_data_set_");
    Outcome total{Outcome::kPassed, ""};
    for (const std::string &set : sets) {
      Outcome o{Outcome::kSkipped, ""};
      try {
        o = run_case(ctx, dir, set, model);
      } catch (const nnrt::Error &e) {  // test data nnrt cannot read (strings, complex numbers)
        o = {Outcome::kSkipped, std::string("test data: ") + e.what()};
      }
      if (o.kind != Outcome::kPassed || total.detail.empty()) total = o;
      if (o.kind != Outcome::kPassed) break;
    }
    if (sets.empty()) total = {Outcome::kSkipped, "no test data"};
    if (total.kind == Outcome::kSkipped) {
      ++skipped;
      // "node 0 'y' (Abs, opset 13): op type Abs is not supported" -> count under "Abs".
      std::string key = "other";
      size_t open = total.detail.find(" ("), comma = total.detail.find(", opset");
      if (open != std::string::npos && comma != std::string::npos && comma > open) key = total.detail.substr(open + 2, comma - open - 2);
      skip_reasons[key]++;
      skip_kinds[skip_kind(total.detail)]++;
      std::printf("SKIP %s: %s\n", name.c_str(), total.detail.c_str());
    } else {
      ++run;
      if (total.kind == Outcome::kPassed) ++passed;
      else ++failed;
      std::printf("%s %s: %s\n", total.kind == Outcome::kPassed ? "PASS" : "FAIL", name.c_str(), total.detail.c_str());
    }
  }
  nnrt_context_release(ctx);
  std::printf("\nskipped, by the op type named in the reason:\n");
  for (const auto &[op, n] : skip_reasons) std::printf("  %-28s %d\n", op.c_str(), n);
  std::printf("\nONNX node tests: %d run, %d passed, %d failed, %d skipped\n", run, passed, failed, skipped);
  std::printf("nnrt-test-counts: passed=%d failed=%d skipped=0\n", passed, failed);
  for (const auto &[kind, n] : skip_kinds)
    std::printf("nnrt-test-counts: passed=0 failed=0 skipped=%d reason=ONNX node tests: %s\n", n, kind.c_str());
  return failed == 0 ? 0 : 1;
}
