// bench/onnx_import: generates a 100 MB ONNX model (an MLP of Gemm + Relu layers, float weights as
// initializers), then times nnrt_model_import_onnx on it and prints the process's peak resident
// memory before and after, against the weights' size: the importer parses the file straight into
// one copy of the weights and frees each tensor once it is in the model, so the import should not
// hold more than one extra copy (peak growth near 2x the weights: the file's copy plus the model's).
//
// Usage: onnx_import [megabytes (100)]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "nnrt/nnrt.h"
#include "onnx.pb.h"

namespace {

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // KiB on Linux
}

// Writes the model layer by layer so that the generator itself never holds it all twice.
size_t write_model(const std::string &path, int64_t width, int layers) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto &g = *m.mutable_graph();
  auto set_io = [](onnx::ValueInfoProto &v, const std::string &name, int64_t f) {
    v.set_name(name);
    auto &t = *v.mutable_type()->mutable_tensor_type();
    t.set_elem_type(onnx::TensorProto::FLOAT);
    t.mutable_shape()->add_dim()->set_dim_param("N");
    t.mutable_shape()->add_dim()->set_dim_value(f);
  };
  set_io(*g.add_input(), "x", width);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f / static_cast<float>(width));
  std::vector<float> w(static_cast<size_t>(width * width));
  std::string prev = "x";
  for (int l = 0; l < layers; ++l) {
    for (float &v : w) v = normal(rng);
    onnx::TensorProto &t = *g.add_initializer();
    t.set_name("w" + std::to_string(l));
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(width);
    t.add_dims(width);
    t.set_raw_data(w.data(), w.size() * sizeof(float));
    onnx::NodeProto &n = *g.add_node();
    n.set_op_type("Gemm");
    n.add_input(prev);
    n.add_input(t.name());
    n.add_output("h" + std::to_string(l));
    onnx::NodeProto &r = *g.add_node();
    r.set_op_type("Relu");
    r.add_input(n.output(0));
    prev = l + 1 == layers ? "y" : "r" + std::to_string(l);
    r.add_output(prev);
  }
  set_io(*g.add_output(), "y", width);
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return m.ByteSizeLong();
}

}  // namespace

int main(int argc, char **argv) {
  double mb = argc > 1 ? std::atof(argv[1]) : 100;
  const int64_t width = 1024;  // 4 MiB per layer
  int layers = static_cast<int>(mb * 1e6 / (width * width * 4.0) + 0.5);
  if (layers < 1) layers = 1;
  char dir[] = "/tmp/nnrt-bench-onnx-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  std::string path = std::string(dir) + "/mlp.onnx";
  // Generated in a child process, so that the generator's memory is not in this one's peak.
  pid_t child = fork();
  if (child == 0) _exit(write_model(path, width, layers) > 0 ? 0 : 1);
  int status = 0;
  waitpid(child, &status, 0);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  size_t bytes = static_cast<size_t>(in.tellg());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bytes == 0) return 1;
  double weights_mib = layers * width * width * 4.0 / (1 << 20);

  nnrt_context *ctx = nullptr;
  if (nnrt_context_create("{\"backend\": \"reference\"}", &ctx) != NNRT_OK) return 1;
  double before = peak_rss_mib();
  auto t0 = std::chrono::steady_clock::now();
  nnrt_model *model = nullptr;
  nnrt_status s = nnrt_model_import_onnx(ctx, path.c_str(), nullptr, &model);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double after = peak_rss_mib();
  if (s != NNRT_OK) {
    std::fprintf(stderr, "import failed: %s\n", nnrt_last_error());
    return 1;
  }
  int64_t params = 0;
  nnrt_model_param_count(model, &params);
  std::printf("ONNX import: %.1f MB file (%d Gemm layers %lldx%lld, %.1f MiB of weights, %lld parameters)\n",
              bytes / 1e6, layers, static_cast<long long>(width), static_cast<long long>(width), weights_mib,
              static_cast<long long>(params));
  std::printf("  import time     %.3f s (%.0f MB/s)\n", seconds, bytes / 1e6 / seconds);
  std::printf("  peak RSS        %.1f MiB before, %.1f MiB after: +%.1f MiB = %.2f x the weights\n", before, after,
              after - before, (after - before) / weights_mib);
  nnrt_model_release(model);
  nnrt_context_release(ctx);
  unlink(path.c_str());
  rmdir(dir);
  return 0;
}
