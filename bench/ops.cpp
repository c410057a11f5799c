// bench/ops: throughput of the ops that dominate training, on the reference and oneDNN backends,
// driven through the plugin ABI exactly as nnrt drives them (op created once, op_run timed), and
// the same matrix products through OpenBLAS's cblas_sgemm for scale, and LeNet's max poolings in
// microseconds per call, plain NCHW and channels-last (as training on a CPU and prediction plans
// pass them). Prints figures, never pass/fail.
//
//   ops [PATH/libnnrt-backend-onednn.so [THREADS [pool]]]   (default: ./libnnrt-backend-onednn.so, 2)
//
// With `pool`, only the max pooling rows.
//
// Everything runs on THREADS threads: the backends get them, and OpenBLAS openblas_set_num_threads.
#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "reference/reference_backend.h"
#include "nnrt/nnrt_backend.h"
#include "test_host.h"

namespace {

int threads = 2;  // THREADS

// Seconds per call of f: calls are timed in batches of about a millisecond, repeated for
// `budget` seconds, and the fastest batch counts. The minimum is what the code can do; other
// work on the machine (this is a shared build host) only ever makes batches slower.
double seconds_per_call(const std::function<void()> &f, double budget = 0.4) {
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
  f();  // warm-up: first-touch of buffers, lazily made kernels
  int batch = 1;
  for (;;) {  // grow the batch until it takes about a millisecond
    auto t = clock::now();
    for (int i = 0; i < batch; ++i) f();
    if (since(t) >= 1e-3 || batch >= (1 << 20)) break;
    batch *= 2;
  }
  double best = 1e30;
  auto start = clock::now();
  do {
    auto t = clock::now();
    for (int i = 0; i < batch; ++i) f();
    best = std::min(best, since(t) / batch);
  } while (since(start) < budget);
  return best;
}

nnrt_tensor_desc tensor(std::vector<int64_t> dims) {
  nnrt_tensor_desc t;
  std::memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  t.dtype = NNRT_DTYPE_F32;
  t.ndim = static_cast<int32_t>(dims.size());
  int64_t s = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.dims[i] = dims[static_cast<size_t>(i)];
    t.strides[i] = s;
    s *= t.dims[i];
  }
  return t;
}

int64_t count(const nnrt_tensor_desc &t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.dims[i];
  return n;
}

nnrt_op_desc op_desc(int32_t kind, std::vector<nnrt_tensor_desc> in, std::vector<nnrt_tensor_desc> out) {
  nnrt_op_desc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.kind = kind;
  for (auto &t : in) d.inputs[d.n_inputs++] = t;
  for (auto &t : out) d.outputs[d.n_outputs++] = t;
  return d;
}

// One backend opened on 2 threads.
class Backend {
 public:
  Backend(const char *label, const nnrt_backend_v1 *table) : label_(label), t_(table) {
    if (!t_) return;
    pool_ = nnrt::test::make_test_pool(threads);
    nnrt_device_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.threads = threads;
    cfg.pool = pool_;
    if (t_->open(&cfg, &inst_) != NNRT_OK) inst_ = nullptr;
  }
  ~Backend() {
    if (inst_) t_->close(inst_);
    if (pool_) nnrt::test::free_test_pool(pool_);
  }
  bool usable() const { return inst_ != nullptr; }
  const char *label() const { return label_; }

  // Seconds per op_run of an op (NaN when the backend does not support it).
  double time(const nnrt_op_desc &d, double budget = 0.4) {
    if (!usable() || !t_->supports(inst_, &d)) return NAN;
    nnrt_backend_op *op = nullptr;
    size_t ws = 0;
    if (t_->op_create(inst_, &d, &op, &ws) != NNRT_OK) return NAN;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<std::vector<float>> in, out;
    std::vector<const void *> in_ptrs;
    std::vector<void *> out_ptrs;
    for (int i = 0; i < d.n_inputs; ++i) {
      in.emplace_back(static_cast<size_t>(count(d.inputs[i])));
      for (float &v : in.back()) v = u(rng);
    }
    for (int i = 0; i < d.n_outputs; ++i) out.emplace_back(static_cast<size_t>(count(d.outputs[i])));
    for (auto &v : in) in_ptrs.push_back(v.data());
    for (auto &v : out) out_ptrs.push_back(v.data());
    std::vector<char> workspace(ws + 256);
    nnrt_op_args a;
    std::memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.n_inputs = d.n_inputs;
    a.n_outputs = d.n_outputs;
    a.inputs = in_ptrs.data();
    a.outputs = out_ptrs.data();
    a.workspace = ws ? workspace.data() : nullptr;
    a.workspace_bytes = ws;
    bool failed = false;
    double s = seconds_per_call([&] { failed = failed || t_->op_run(op, &a) != NNRT_OK; }, budget);
    t_->op_destroy(op);
    return failed ? NAN : s;
  }

 private:
  const char *label_;
  const nnrt_backend_v1 *t_;
  nnrt_backend_instance *inst_ = nullptr;
  nnrt_host_pool *pool_ = nullptr;
};

// The test host's services, with the backends' debug logging left out of the figures.
const nnrt_host_api *quiet_host() {
  static const nnrt_host_api host = [] {
    nnrt_host_api h = *nnrt::test::test_host();
    h.log = [](int level, const char *message) {
      if (level >= NNRT_LOG_WARN) std::fprintf(stderr, "%s\n", message);
    };
    return h;
  }();
  return &host;
}

const nnrt_backend_v1 *load_plugin(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::printf("(oneDNN plugin not loaded: %s)\n", dlerror());
    return nullptr;
  }
  auto entry = reinterpret_cast<nnrt_backend_entry_fn>(dlsym(h, "nnrt_backend_entry"));
  return entry ? entry(NNRT_BACKEND_ABI_MAJOR, quiet_host()) : nullptr;
}

double gflops(double flops, double seconds) { return flops / seconds * 1e-9; }

void print_row(const char *what, double flops, double ref_s, double dnnl_s, double blas_s) {
  std::printf("%-34s %10.1f %10.1f", what, gflops(flops, ref_s), gflops(flops, dnnl_s));
  if (blas_s == blas_s)
    std::printf(" %10.1f %10.2f\n", gflops(flops, blas_s), blas_s / dnnl_s);
  else
    std::printf("\n");
}

nnrt_op_desc matmul(int64_t m, int64_t k, int64_t n) {
  return op_desc(NNRT_OP_MATMUL, {tensor({m, k}), tensor({k, n})}, {tensor({m, n})});
}

double sgemm_seconds(int m, int k, int n) {
  std::vector<float> a(static_cast<size_t>(m) * k, 0.5f), b(static_cast<size_t>(k) * n, 0.25f),
      c(static_cast<size_t>(m) * n);
  return seconds_per_call([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, c.data(), n);
  });
}

// NCHW dims stored channels-last.
nnrt_tensor_desc channels_last(std::vector<int64_t> nchw) {
  nnrt_tensor_desc t = tensor(nchw);
  t.strides[1] = 1;
  t.strides[3] = nchw[1];
  t.strides[2] = nchw[1] * nchw[3];
  t.strides[0] = nchw[1] * nchw[3] * nchw[2];
  return t;
}

struct Conv {
  const char *name;
  int64_t n, c, o, h, w, k, stride;
  int64_t oh() const { return (h - k) / stride + 1; }
  int64_t ow() const { return (w - k) / stride + 1; }
  double flops() const { return 2.0 * n * o * oh() * ow() * c * k * k; }
  nnrt_op_attrs attrs() const {
    nnrt_op_attrs a;
    std::memset(&a, 0, sizeof a);
    a.groups = 1;
    a.stride[0] = a.stride[1] = static_cast<int32_t>(stride);
    a.dilation[0] = a.dilation[1] = 1;
    return a;
  }
  nnrt_tensor_desc x() const { return tensor({n, c, h, w}); }
  nnrt_tensor_desc wt() const { return tensor({o, c, k, k}); }
  nnrt_tensor_desc y() const { return tensor({n, o, oh(), ow()}); }
};


// LeNet's 2x2, stride 2 max poolings: forward and backward, plain and channels-last.
void pool_rows(Backend &ref, Backend &dnnl) {
  std::printf("\n%-34s %10s %10s\n", "max pool 2x2/2 (us per op_run)", "reference", "onednn");
  struct Pool {
    int64_t n, c, h;
  };
  for (Pool p : {Pool{1, 20, 24}, Pool{64, 20, 24}, Pool{256, 20, 24}, Pool{64, 50, 8}})
    for (bool last : {false, true}) {
      const std::vector<int64_t> xd{p.n, p.c, p.h, p.h}, yd{p.n, p.c, p.h / 2, p.h / 2};
      const nnrt_tensor_desc x = last ? channels_last(xd) : tensor(xd), y = last ? channels_last(yd) : tensor(yd);
      nnrt_op_desc fwd = op_desc(NNRT_OP_POOL2D, {x}, {y}), bwd = op_desc(NNRT_OP_POOL2D_BACKWARD, {y, x}, {x});
      for (nnrt_op_desc *d : {&fwd, &bwd}) {
        d->attrs.alg = NNRT_POOL_MAX;
        d->attrs.kernel[0] = d->attrs.kernel[1] = d->attrs.stride[0] = d->attrs.stride[1] = 2;
      }
      char name[64];
      for (nnrt_op_desc *d : {&fwd, &bwd}) {
        std::snprintf(name, sizeof name, "%lldx%lldx%lldx%lld %s %s", static_cast<long long>(p.n),
                      static_cast<long long>(p.c), static_cast<long long>(p.h), static_cast<long long>(p.h),
                      last ? "nhwc" : "nchw", d == &fwd ? "fwd" : "bwd");
        std::printf("%-34s %10.1f %10.1f\n", name, ref.time(*d) * 1e6, dnnl.time(*d) * 1e6);
      }
    }
}

}  // namespace

int main(int argc, char **argv) {
  const char *plugin = argc > 1 ? argv[1] : "./libnnrt-backend-onednn.so";
  if (argc > 2) threads = std::atoi(argv[2]);
  const bool only_pool = argc > 3 && std::strcmp(argv[3], "pool") == 0;
  if (threads < 1 || argc > 4 || (argc > 3 && !only_pool)) {
    std::fprintf(stderr, "usage: %s [PLUGIN.so [THREADS >= 1 [pool]]]\n", argv[0]);
    return 2;
  }
  Backend ref("reference", nnrt::reference::backend_entry(NNRT_BACKEND_ABI_MAJOR, quiet_host()));
  Backend dnnl("onednn", load_plugin(plugin));
  openblas_set_num_threads(threads);
  if (only_pool) {
    std::printf("bench/ops: %d threads\n", threads);
    pool_rows(ref, dnnl);
    return 0;
  }
  std::printf("bench/ops: %d threads; GFLOP/s (higher is better)\n\n", threads);
  std::printf("%-34s %10s %10s %10s %10s\n", "op", "reference", "onednn", "openblas", "dnnl/blas");

  for (auto mkn : {std::vector<int>{64, 784, 1024}, std::vector<int>{1024, 1024, 1024}}) {
    const int m = mkn[0], k = mkn[1], n = mkn[2];
    nnrt_op_desc d = matmul(m, k, n);
    const double flops = 2.0 * m * k * n;
    char name[64];
    std::snprintf(name, sizeof name, "matmul %dx%dx%d", m, k, n);
    print_row(name, flops, ref.time(d, m * k * n > 100000000 ? 1.0 : 0.4), dnnl.time(d), sgemm_seconds(m, k, n));
  }

  const Conv convs[] = {{"conv1 64x1x28x28 20@5x5", 64, 1, 20, 28, 28, 5, 1},
                        {"conv2 64x20x12x12 50@5x5/2", 64, 20, 50, 12, 12, 5, 2}};
  for (const Conv &c : convs) {
    // Activations plain NCHW, then channels-last as training on a CPU passes them.
    for (bool last : {false, true}) {
      const nnrt_tensor_desc x = last ? channels_last({c.n, c.c, c.h, c.w}) : c.x(),
                             y = last ? channels_last({c.n, c.o, c.oh(), c.ow()}) : c.y();
      nnrt_op_desc fwd = op_desc(NNRT_OP_CONV2D, {x, c.wt()}, {y});
      nnrt_op_desc bwd_data = op_desc(NNRT_OP_CONV2D_BACKWARD_DATA, {y, c.wt()}, {x});
      nnrt_op_desc bwd_weights = op_desc(NNRT_OP_CONV2D_BACKWARD_WEIGHTS, {x, y}, {c.wt()});
      for (nnrt_op_desc *d : {&fwd, &bwd_data, &bwd_weights}) d->attrs = c.attrs();
      std::string name = std::string(c.name) + (last ? " nhwc" : "");
      print_row((name + " fwd").c_str(), c.flops(), ref.time(fwd), dnnl.time(fwd), NAN);
      print_row((name + " bwd-data").c_str(), c.flops(), ref.time(bwd_data), dnnl.time(bwd_data), NAN);
      print_row((name + " bwd-weights").c_str(), c.flops(), ref.time(bwd_weights), dnnl.time(bwd_weights), NAN);
    }
  }

  // Dispatch overhead: op_run of a cached op on tiny tensors is almost all fixed cost.
  std::printf("\n%-34s %10s %10s\n", "dispatch (us per op_run)", "reference", "onednn");
  nnrt_op_desc add = op_desc(NNRT_OP_BINARY, {tensor({4}), tensor({4})}, {tensor({4})});
  add.attrs.alg = NNRT_BINARY_ADD;
  nnrt_op_desc mm = matmul(8, 8, 8);
  nnrt_op_desc relu = op_desc(NNRT_OP_UNARY, {tensor({4})}, {tensor({4})});
  relu.attrs.alg = NNRT_UNARY_RELU;
  for (auto [name, d] : {std::pair<const char *, nnrt_op_desc *>{"add f32[4]", &add},
                         {"relu f32[4]", &relu},
                         {"matmul 8x8x8", &mm}})
    std::printf("%-34s %10.2f %10.2f\n", name, ref.time(*d) * 1e6, dnnl.time(*d) * 1e6);
  pool_rows(ref, dnnl);
  return 0;
}
