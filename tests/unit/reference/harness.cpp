#include "harness.h"

#include <math.h>
#include <string.h>

#include <map>
#include <mutex>
#include <random>

#include "nnrt/kernels/half.h"
#include "test_host.h"
#include "reference/reference_backend.h"

namespace nnrt::reftest {

const int32_t kFloatDtypes[4] = {NNRT_DTYPE_F32, NNRT_DTYPE_F64, NNRT_DTYPE_F16, NNRT_DTYPE_BF16};
const int32_t kAllDtypes[8] = {NNRT_DTYPE_F32, NNRT_DTYPE_F64, NNRT_DTYPE_F16, NNRT_DTYPE_BF16,
                               NNRT_DTYPE_I32, NNRT_DTYPE_I64, NNRT_DTYPE_U8,  NNRT_DTYPE_BOOL};


bool is_float_dtype(int32_t d) {
  return d == NNRT_DTYPE_F32 || d == NNRT_DTYPE_F64 || d == NNRT_DTYPE_F16 || d == NNRT_DTYPE_BF16;
}

const char *dtype_label(int32_t d) {
  static const char *names[] = {"?", "f32", "f64", "f16", "bf16", "i32", "i64", "u8", "bool"};
  return d >= 1 && d <= 8 ? names[d] : "?";
}

namespace {

void write_value(unsigned char *p, int32_t dtype, double v) {
  switch (dtype) {
    case NNRT_DTYPE_F32: { float f = static_cast<float>(v); memcpy(p, &f, 4); break; }
    case NNRT_DTYPE_F64: memcpy(p, &v, 8); break;
    case NNRT_DTYPE_F16: { uint16_t h = kernels::f32_to_f16(static_cast<float>(v)); memcpy(p, &h, 2); break; }
    case NNRT_DTYPE_BF16: { uint16_t h = kernels::f32_to_bf16(static_cast<float>(v)); memcpy(p, &h, 2); break; }
    case NNRT_DTYPE_I32: { int32_t i = static_cast<int32_t>(v); memcpy(p, &i, 4); break; }
    case NNRT_DTYPE_I64: { int64_t i = static_cast<int64_t>(v); memcpy(p, &i, 8); break; }
    case NNRT_DTYPE_U8: *p = static_cast<unsigned char>(static_cast<int>(v)); break;
    case NNRT_DTYPE_I8: *p = static_cast<unsigned char>(static_cast<int8_t>(static_cast<int>(v))); break;
    case NNRT_DTYPE_BOOL: *p = v != 0; break;
  }
}

double read_value(const unsigned char *p, int32_t dtype) {
  switch (dtype) {
    case NNRT_DTYPE_F32: { float f; memcpy(&f, p, 4); return f; }
    case NNRT_DTYPE_F64: { double d; memcpy(&d, p, 8); return d; }
    case NNRT_DTYPE_F16: { uint16_t h; memcpy(&h, p, 2); return kernels::f16_to_f32(h); }
    case NNRT_DTYPE_BF16: { uint16_t h; memcpy(&h, p, 2); return kernels::bf16_to_f32(h); }
    case NNRT_DTYPE_I32: { int32_t i; memcpy(&i, p, 4); return i; }
    case NNRT_DTYPE_I64: { int64_t i; memcpy(&i, p, 8); return static_cast<double>(i); }
    case NNRT_DTYPE_I8: return static_cast<int8_t>(*p);
    default: return *p;
  }
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t> &dims) {
  std::vector<int64_t> s(dims.size());
  int64_t n = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    s[d] = n;
    n *= dims[d];
  }
  return s;
}

}  // namespace

Tensor Tensor::zeros(int32_t dtype, std::vector<int64_t> dims) {
  Tensor t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.strides = contiguous_strides(t.dims);
  t.storage = std::make_shared<std::vector<unsigned char>>(static_cast<size_t>(t.numel()) * dtype_size(dtype) + 1);
  return t;
}

Tensor Tensor::of(int32_t dtype, std::vector<int64_t> dims, const std::vector<double> &values) {
  Tensor t = zeros(dtype, std::move(dims));
  if (static_cast<int64_t>(values.size()) != t.numel()) abort();
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, values[static_cast<size_t>(i)]);
  return t;
}

Tensor Tensor::random(int32_t dtype, std::vector<int64_t> dims, uint32_t seed, double low, double high) {
  Tensor t = zeros(dtype, std::move(dims));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(low, high);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, is_float_dtype(dtype) ? dist(gen) : floor(dist(gen)));
  return t;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t Tensor::element_offset(int64_t linear) const {
  int64_t off = offset;
  for (int d = ndim() - 1; d >= 0; --d) {
    off += (linear % dims[d]) * strides[d];
    linear /= dims[d];
  }
  return off;
}

double Tensor::at(int64_t linear) const {
  return read_value(storage->data() + element_offset(linear) * static_cast<int64_t>(dtype_size(dtype)), dtype);
}

void Tensor::set(int64_t linear, double v) {
  write_value(storage->data() + element_offset(linear) * static_cast<int64_t>(dtype_size(dtype)), dtype, v);
}

std::vector<double> Tensor::values() const {
  std::vector<double> v(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) v[static_cast<size_t>(i)] = at(i);
  return v;
}

void *Tensor::data() const { return storage->data() + offset * static_cast<int64_t>(dtype_size(dtype)); }

nnrt_tensor_desc Tensor::desc() const {
  nnrt_tensor_desc d{};
  d.struct_size = sizeof d;
  d.dtype = dtype;
  d.ndim = ndim();
  for (int i = 0; i < ndim(); ++i) {
    d.dims[i] = dims[i];
    d.strides[i] = strides[i];
  }
  return d;
}

Tensor Tensor::relayout(const std::vector<int> &order, int64_t spread) const {
  Tensor t;
  t.dtype = dtype;
  t.dims = dims;
  t.strides.assign(dims.size(), 0);
  int64_t n = spread;
  for (int k = static_cast<int>(order.size()) - 1; k >= 0; --k) {
    t.strides[order[k]] = n;
    n *= dims[order[k]] > 0 ? dims[order[k]] : 1;
  }
  t.storage = std::make_shared<std::vector<unsigned char>>(static_cast<size_t>(n) * dtype_size(dtype) + 1, 0x7f);
  for (int64_t i = 0; i < numel(); ++i) t.set(i, at(i));
  return t;
}

Tensor Tensor::flipped() const {
  Tensor t = relayout([&] {
    std::vector<int> order(dims.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    return order;
  }());
  Tensor f = t;
  f.offset = 0;
  for (int d = 0; d < ndim(); ++d) {
    if (dims[d] > 0) f.offset += (dims[d] - 1) * t.strides[d];
    f.strides[d] = -t.strides[d];
  }
  for (int64_t i = 0; i < numel(); ++i) f.set(i, at(i));
  return f;
}

Tensor Tensor::broadcast_to(const std::vector<int64_t> &to) const {
  Tensor t = *this;
  t.dims = to;
  for (int d = 0; d < ndim(); ++d)
    if (dims[d] != to[d]) t.strides[d] = 0;
  return t;
}

Tensor Tensor::transposed(int d0, int d1) const {
  Tensor t = *this;
  std::swap(t.dims[d0], t.dims[d1]);
  std::swap(t.strides[d0], t.strides[d1]);
  return t;
}

Tensor Tensor::cast(int32_t to) const { return of(to, dims, values()); }

std::vector<unsigned char> Tensor::bytes() const { return *storage; }

nnrt_op_attrs attrs_with(int32_t alg) {
  nnrt_op_attrs a{};
  a.alg = alg;
  return a;
}

namespace {

std::string g_last_error;

struct Instances {
  std::mutex mutex;
  std::map<int, nnrt_backend_instance *> by_threads;
};

Instances &instances() {
  static Instances *i = new Instances;  // never destroyed: tests may run until exit
  return *i;
}

}  // namespace

const nnrt_backend_v1 *table() {
  static const nnrt_backend_v1 *t = reference::backend_entry(NNRT_BACKEND_ABI_MAJOR, test::test_host());
  return t;
}

nnrt_backend_instance *instance(int threads) {
  Instances &all = instances();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto it = all.by_threads.find(threads);
  if (it != all.by_threads.end()) return it->second;
  nnrt_device_config config{};
  config.struct_size = sizeof config;
  config.device = 0;
  config.threads = threads;
  config.deterministic = 1;
  config.pool = test::make_test_pool(threads);
  nnrt_backend_instance *inst = nullptr;
  if (table()->open(&config, &inst) != NNRT_OK) abort();
  all.by_threads[threads] = inst;
  return inst;
}

nnrt_op_desc make_desc(int32_t kind, const nnrt_op_attrs &attrs, std::initializer_list<const Tensor *> inputs,
                       std::initializer_list<const Tensor *> outputs) {
  nnrt_op_desc d{};
  d.struct_size = sizeof d;
  d.kind = kind;
  for (const Tensor *t : inputs) d.inputs[d.n_inputs++] = t->desc();
  for (const Tensor *t : outputs) d.outputs[d.n_outputs++] = t->desc();
  d.attrs = attrs;
  return d;
}

std::string last_error() { return g_last_error; }

nnrt_status create_op(const nnrt_op_desc &desc, int threads) {
  nnrt_backend_instance *inst = instance(threads);
  const int32_t supported = table()->supports(inst, &desc);
  if (!test::take_backend_error().empty()) abort();  // supports() must not report errors
  nnrt_backend_op *op = nullptr;
  size_t workspace = 0;
  nnrt_status s = table()->op_create(inst, &desc, &op, &workspace);
  g_last_error = test::take_backend_error();
  if ((s == NNRT_OK) != (supported == 1)) {
    g_last_error = "supports() and op_create() disagree";
    return NNRT_ERR_INTERNAL;
  }
  if (s == NNRT_OK) table()->op_destroy(op);
  return s;
}

nnrt_status run_op(int32_t kind, const nnrt_op_attrs &attrs, std::initializer_list<const Tensor *> inputs,
                   std::initializer_list<Tensor *> outputs, const RunOptions &options) {
  std::vector<const Tensor *> outs(outputs.begin(), outputs.end());
  nnrt_op_desc desc{};
  desc.struct_size = sizeof desc;
  desc.kind = kind;
  for (const Tensor *t : inputs) desc.inputs[desc.n_inputs++] = t->desc();
  for (const Tensor *t : outs) desc.outputs[desc.n_outputs++] = t->desc();
  desc.attrs = attrs;
  nnrt_backend_instance *inst = instance(options.threads);
  const int32_t supported = table()->supports(inst, &desc);
  nnrt_backend_op *op = nullptr;
  size_t workspace_bytes = 0;
  nnrt_status s = table()->op_create(inst, &desc, &op, &workspace_bytes);
  g_last_error = test::take_backend_error();
  if ((s == NNRT_OK) != (supported == 1)) {
    g_last_error = "supports() and op_create() disagree";
    return NNRT_ERR_INTERNAL;
  }
  if (s != NNRT_OK) return s;
  std::vector<unsigned char> workspace(workspace_bytes);
  std::vector<const void *> in_ptrs;
  std::vector<void *> out_ptrs;
  for (const Tensor *t : inputs) in_ptrs.push_back(t->data());
  for (Tensor *t : outputs) out_ptrs.push_back(t->data());
  nnrt_op_args args{};
  args.struct_size = sizeof args;
  args.n_inputs = desc.n_inputs;
  args.n_outputs = desc.n_outputs;
  args.inputs = in_ptrs.data();
  args.outputs = out_ptrs.data();
  args.workspace = workspace_bytes ? workspace.data() : nullptr;
  args.workspace_bytes = workspace_bytes;
  for (int i = 0; i < NNRT_OP_MAX_SCALARS; ++i) args.scalars[i] = options.scalars[i];
  args.counter = options.counter;
  s = table()->op_run(op, &args);
  g_last_error = test::take_backend_error();
  table()->op_destroy(op);
  return s;
}

std::vector<double> numeric_gradient(const std::function<std::vector<double>(const std::vector<double> &)> &f,
                                     std::vector<double> x, const std::vector<double> &weights, double h) {
  std::vector<double> g(x.size());
  auto weighted = [&](const std::vector<double> &y) {
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += weights[i] * y[i];
    return s;
  };
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = weighted(f(x));
    x[i] = keep - h;
    const double down = weighted(f(x));
    x[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

double max_relative_error(const std::vector<double> &a, const std::vector<double> &b, double floor) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = fabs(a[i] - b[i]) / (fabs(b[i]) + floor);
    if (!(e <= worst)) worst = e;  // NaN counts as the worst
  }
  return worst;
}

}  // namespace nnrt::reftest
