// The backends of the conformance suite (see backends.h).
#include "backends.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

#include "reference/reference_backend.h"
#include "cases.h"
#include "test_host.h"

namespace nnrt::conformance {

// ---- finding backends --------------------------------------------------------------------------

namespace {
std::vector<std::string> split_paths(const char *list) {
  std::vector<std::string> out;
  std::string s = list ? list : "";
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(':', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}
}  // namespace

std::vector<BackendSource> find_backends_under_test(const std::vector<std::string> &plugin_paths) {
  std::vector<std::string> paths = plugin_paths;
  if (paths.empty()) paths = split_paths(std::getenv("NNRT_CONFORMANCE_BACKENDS"));
  std::vector<BackendSource> found;
  for (const std::string &path : paths) {
    BackendSource b;
    b.label = path;
    // As nnrt loads plugins; never unloaded (a plugin's threads or atexit handlers may outlive us).
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *e = dlerror();
      b.error = std::string("dlopen failed: ") + (e ? e : "unknown error");
    } else if (!(b.entry = reinterpret_cast<nnrt_backend_entry_fn>(dlsym(handle, "nnrt_backend_entry")))) {
      b.error = "no nnrt_backend_entry symbol";
    } else if (!(b.table = b.entry(NNRT_BACKEND_ABI_MAJOR, conformance_host()))) {
      b.error = "nnrt_backend_entry returned NULL: " + nnrt::test::take_backend_error();
    }
    found.push_back(b);
  }
  return found;
}

BackendSource reference_backend() {
  BackendSource b;
  b.label = "built-in reference";
  b.entry = nnrt::reference::backend_entry;
  b.table = b.entry(NNRT_BACKEND_ABI_MAJOR, conformance_host());
  if (!b.table) b.error = "the reference backend refused the host: " + nnrt::test::take_backend_error();
  return b;
}

// ---- host --------------------------------------------------------------------------------------

namespace {
bool g_verbose = false;
std::mutex g_log_mutex;

void conformance_log(int level, const char *message) {
  if (!g_verbose) return;
  std::lock_guard<std::mutex> lock(g_log_mutex);
  std::fprintf(stderr, "  [backend log %d] %s\n", level, message);
}
}  // namespace

void set_log_verbose(bool verbose) { g_verbose = verbose; }

const nnrt_host_api *conformance_host() {
  static const nnrt_host_api host = [] {
    nnrt_host_api h = *nnrt::test::test_host();
    h.log = conformance_log;
    return h;
  }();
  return &host;
}

// ---- ABI checks --------------------------------------------------------------------------------

std::vector<std::string> check_abi(const BackendSource &b) {
  std::vector<std::string> problems;
  const nnrt_backend_v1 *t = b.table;
  if (!t) return {b.error};
  if (t->struct_size < sizeof(nnrt_backend_v1)) problems.push_back("table struct_size smaller than nnrt_backend_v1");
  if (t->abi_major != NNRT_BACKEND_ABI_MAJOR) problems.push_back("table abi_major is not NNRT_BACKEND_ABI_MAJOR");
  if (!t->name || !*t->name) problems.push_back("table has no name");
  if (!t->version || !*t->version) problems.push_back("table has no version");
  if (t->kind != NNRT_DEVICE_CPU && t->kind != NNRT_DEVICE_GPU) problems.push_back("table kind is not CPU or GPU");
  if (!t->probe || !t->device_props || !t->open || !t->close || !t->supports || !t->op_create || !t->op_run ||
      !t->op_destroy)
    problems.push_back("a required table function is NULL");
  if (!(t->flags & NNRT_BACKEND_HOST_MEMORY) &&
      (!t->mem_alloc || !t->mem_free || !t->memcpy_async || !t->memset_async || !t->stream_synchronize))
    problems.push_back("a device-memory backend lacks memory or stream functions");
  // A host of another ABI major is refused, with a message that names both majors.
  nnrt::test::take_backend_error();
  const uint32_t other = NNRT_BACKEND_ABI_MAJOR + 1;
  const nnrt_backend_v1 *refused = b.entry(other, conformance_host());
  std::string msg = nnrt::test::take_backend_error();
  if (refused) problems.push_back("the entry point accepted host ABI " + std::to_string(other));
  if (msg.find(std::to_string(NNRT_BACKEND_ABI_MAJOR)) == std::string::npos ||
      msg.find(std::to_string(other)) == std::string::npos)
    problems.push_back("the refusal of host ABI " + std::to_string(other) + " does not name both versions: \"" + msg + "\"");
  // The entry point is callable again and returns the same table.
  if (b.entry(NNRT_BACKEND_ABI_MAJOR, conformance_host()) != t)
    problems.push_back("a second call of the entry point returned another table");
  return problems;
}

// ---- devices -----------------------------------------------------------------------------------

Device::Device(const nnrt_backend_v1 *table, int threads, bool deterministic) : table_(table) {
  pool_ = nnrt::test::make_test_pool(threads);
  nnrt_device_config cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.struct_size = sizeof cfg;
  cfg.device = 0;
  cfg.threads = threads;
  cfg.deterministic = deterministic ? 1 : 0;
  cfg.pool = pool_;
  nnrt_status s = table_->open(&cfg, &instance_);
  if (s != NNRT_OK) {
    instance_ = nullptr;
    open_error_ = "open failed (" + std::to_string(s) + "): " + nnrt::test::take_backend_error();
    return;
  }
  if (table_->stream_create && table_->stream_create(instance_, &stream_) != NNRT_OK) {
    open_error_ = "stream_create failed: " + nnrt::test::take_backend_error();
    table_->close(instance_);
    instance_ = nullptr;
  }
}

Device::~Device() {
  if (instance_) {
    if (stream_ && table_->stream_destroy) table_->stream_destroy(instance_, stream_);
    table_->close(instance_);
  }
  nnrt::test::free_test_pool(pool_);
}

std::string Device::description() const {
  std::string s = std::string(table_->name) + " (" + table_->version + ")";
  nnrt_device_props props;
  std::memset(&props, 0, sizeof props);
  props.struct_size = sizeof props;
  if (table_->device_props(0, &props) == NNRT_OK) s += " on " + std::string(props.name);
  return s;
}

bool Device::supports(const nnrt_op_desc &d) const { return table_->supports(instance_, &d) == 1; }

std::string Device::create_refusal(const nnrt_op_desc &d) const {
  nnrt_backend_op *op = nullptr;
  size_t ws = 0;
  nnrt::test::take_backend_error();
  nnrt_status s = table_->op_create(instance_, &d, &op, &ws);
  if (s == NNRT_OK) {
    table_->op_destroy(op);
    return "";
  }
  std::string e = nnrt::test::take_backend_error();
  return e.empty() ? "op_create returned " + std::to_string(s) + " without a message" : e;
}

namespace {
// Device memory for one tensor of a run: the host buffer itself on host-memory backends.
struct DeviceBuffer {
  const nnrt_backend_v1 *t = nullptr;
  nnrt_backend_instance *inst = nullptr;
  void *ptr = nullptr;  // the allocation (or the caller's host data)
  size_t offset = 0;    // where the operand starts in it (Case::offset_elements)
  bool owned = false;
  std::vector<unsigned char> host_copy;  // a host backend's shifted copy, when offset > 0
  void *at() const { return static_cast<char *>(ptr) + offset; }
  ~DeviceBuffer() {
    if (owned && ptr) t->mem_free(inst, ptr);
  }
};
}  // namespace

// One run's workspace, poisoned before first use (see Device::run).
class Device::Workspace {
 public:
  Workspace(const Device &d, size_t bytes, uint64_t seed) : d_(d), bytes_(bytes) {
    if (bytes == 0) return;
    // NaN in every float type (and -1 in every integer) on odd seeds; 0x7f7f7f7f (3.4e38 as f32,
    // bf16's 3.4e38 too) on even ones, which stays finite and poisons every sum it enters.
    const int pattern = (seed & 1) ? 0xff : 0x7f;
    if (d.host_memory()) {
      ptr_ = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
      if (!ptr_) {
        error_ = "could not allocate the workspace";
        return;
      }
      std::memset(ptr_, pattern, bytes);
      return;
    }
    if (d.table_->mem_alloc(d.instance_, bytes, &ptr_) != NNRT_OK) {
      ptr_ = nullptr;
      error_ = "mem_alloc of the workspace failed";
    } else if (d.table_->memset_async(d.instance_, ptr_, pattern, bytes, d.stream_) != NNRT_OK ||
               d.table_->stream_synchronize(d.instance_, d.stream_) != NNRT_OK) {
      error_ = "could not poison the workspace";
    }
  }
  ~Workspace() {
    if (!ptr_) return;
    if (d_.host_memory())
      std::free(ptr_);
    else
      d_.table_->mem_free(d_.instance_, ptr_);
  }
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;
  void *ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  const std::string &error() const { return error_; }

 private:
  const Device &d_;
  size_t bytes_;
  void *ptr_ = nullptr;
  std::string error_;
};

std::string Device::run_once(const Case &c, nnrt_backend_op *op, const Workspace &ws,
                             const std::vector<HostTensor> &inputs, std::vector<HostTensor> &outputs) const {
  if (!ws.error().empty()) return ws.error();
  const bool host = host_memory();
  const int ni = c.desc.n_inputs, no = c.desc.n_outputs;
  std::vector<DeviceBuffer> in(static_cast<size_t>(ni)), out(static_cast<size_t>(no));
  auto to_device = [&](DeviceBuffer &b, const HostTensor &h, const void *data, size_t n) -> std::string {
    b.t = table_;
    b.inst = instance_;
    b.offset = static_cast<size_t>(c.offset_elements) * dtype_size(h.desc().dtype);
    if (host) {
      if (b.offset == 0) {
        b.ptr = const_cast<void *>(data);
        return "";
      }
      b.host_copy.assign(b.offset + n, 0);
      if (n) std::memcpy(b.host_copy.data() + b.offset, data, n);
      b.ptr = b.host_copy.data();
      return "";
    }
    if (table_->mem_alloc(instance_, b.offset + n ? b.offset + n : 1, &b.ptr) != NNRT_OK) return "mem_alloc failed";
    b.owned = true;
    if (n && table_->memcpy_async(instance_, b.at(), data, n, NNRT_COPY_HOST_TO_DEVICE, stream_) != NNRT_OK)
      return "memcpy to the device failed";
    return "";
  };
  std::string err;
  for (int i = 0; i < no && err.empty(); ++i)
    err = to_device(out[i], outputs[i], outputs[i].data(), outputs[i].nbytes());
  for (int i = 0; i < ni && err.empty(); ++i) {
    if (i == c.alias_input) {
      in[i].ptr = out[0].ptr;  // the in-place buffer, holding the input's data
      in[i].offset = out[0].offset;
      continue;
    }
    err = to_device(in[i], inputs[i], inputs[i].data(), inputs[i].nbytes());
  }
  if (err.empty()) {
    std::vector<const void *> in_ptrs;
    std::vector<void *> out_ptrs;
    for (auto &b : in) in_ptrs.push_back(b.at());
    for (auto &b : out) out_ptrs.push_back(b.at());
    nnrt_op_args args;
    std::memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.n_inputs = ni;
    args.n_outputs = no;
    args.inputs = in_ptrs.data();
    args.outputs = out_ptrs.data();
    args.workspace = ws.ptr();
    args.workspace_bytes = ws.bytes();
    args.stream = stream_;
    std::memcpy(args.scalars, c.scalars, sizeof args.scalars);
    args.counter = c.counter;
    nnrt_status s = table_->op_run(op, &args);
    if (s != NNRT_OK) err = "op_run failed (" + std::to_string(s) + "): " + nnrt::test::take_backend_error();
  }
  if (err.empty() && host) {
    for (int i = 0; i < no; ++i)
      if (!out[i].host_copy.empty() && outputs[i].nbytes())
        std::memcpy(outputs[i].data(), out[i].at(), outputs[i].nbytes());
  }
  if (err.empty() && !host) {
    for (int i = 0; i < no && err.empty(); ++i)
      if (outputs[i].nbytes() && table_->memcpy_async(instance_, outputs[i].data(), out[i].at(), outputs[i].nbytes(),
                                                      NNRT_COPY_DEVICE_TO_HOST, stream_) != NNRT_OK)
        err = "memcpy from the device failed";
    if (err.empty() && table_->stream_synchronize(instance_, stream_) != NNRT_OK) err = "stream_synchronize failed";
  }
  return err;
}

namespace {
// Fresh copies of a run's pre-filled outputs.
std::vector<HostTensor> copies_of(const std::vector<HostTensor> &outputs) {
  std::vector<HostTensor> c;
  for (const HostTensor &t : outputs) {
    c.emplace_back(t.desc());
    c.back().copy_from(t);
  }
  return c;
}
}  // namespace

std::string Device::run(const Case &c, const std::vector<HostTensor> &inputs, std::vector<HostTensor> &outputs,
                        int copies, std::vector<std::vector<HostTensor>> *extra_outputs,
                        const std::vector<HostTensor> *warmup_inputs) const {
  nnrt_backend_op *op = nullptr;
  size_t ws_bytes = 0;
  nnrt_status s = table_->op_create(instance_, &c.desc, &op, &ws_bytes);
  if (s != NNRT_OK) return "op_create failed (" + std::to_string(s) + "): " + nnrt::test::take_backend_error();
  std::string err;
  Workspace ws(*this, ws_bytes, c.seed);
  if (warmup_inputs) {
    // The warm-up's outputs start as the case's pre-filled ones; an in-place output holds the
    // warm-up's own input.
    std::vector<HostTensor> warmup_outputs = copies_of(outputs);
    if (c.alias_input >= 0) warmup_outputs[0].copy_from((*warmup_inputs)[static_cast<size_t>(c.alias_input)]);
    err = run_once(c, op, ws, *warmup_inputs, warmup_outputs);
    if (!err.empty()) err = "warm-up run on other inputs: " + err;
  }
  if (!err.empty()) {
    // reported below
  } else if (copies <= 1 || !host_memory()) {
    err = run_once(c, op, ws, inputs, outputs);
  } else {
    // Every thread gets its own tensors (outputs start as copies of the pre-filled ones) and its
    // own poisoned workspace.
    std::vector<std::vector<HostTensor>> outs;
    for (int k = 1; k < copies; ++k) outs.push_back(copies_of(outputs));
    std::vector<std::string> errs(static_cast<size_t>(copies));
    std::vector<std::thread> threads;
    for (int k = 1; k < copies; ++k)
      threads.emplace_back([&, k] {
        Workspace own(*this, ws_bytes, c.seed);
        errs[k] = run_once(c, op, own, inputs, outs[k - 1]);
      });
    errs[0] = run_once(c, op, ws, inputs, outputs);
    for (auto &t : threads) t.join();
    for (const std::string &e : errs)
      if (!e.empty() && err.empty()) err = "concurrent " + e;
    if (extra_outputs) *extra_outputs = std::move(outs);
  }
  table_->op_destroy(op);
  return err;
}

}  // namespace nnrt::conformance
