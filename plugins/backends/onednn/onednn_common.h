// Shared pieces of the oneDNN backend: host services, refusals, the op interface, the workspace
// layout, and the translation of nnrt tensor descriptors into oneDNN memory descriptors.
//
// Every op family (onednn_conv.cpp, onednn_pool.cpp, ...) builds an Op from an nnrt_op_desc with
// these helpers; onednn_backend.cpp is the only file that speaks the table's C ABI.
#pragma once

#include "nnrt/kernels/dtype_info.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "nnrt/nnrt_backend.h"
#include "nnrt/plugin_kit.hpp"

namespace nnrt::onednn {

// ---- host services -------------------------------------------------------------------------

// The oneDNN backend as the plugin kit sees it (nnrt/plugin_kit.hpp): the host its entry point
// accepted, the size limits, and its own exceptions (Unsupported, dnnl::error) turned into statuses.
struct Onednn {
  static constexpr const char *name = "onednn";
  using Host = nnrt_host_api;
  // oneDNN counts some sizes in 32 bits inside: an output dim of 2^31 divides by zero in its
  // primitive creation. Larger ops run on the reference backend.
  static constexpr int64_t max_dim = INT32_MAX;
  static constexpr int64_t max_elements = INT32_MAX;
  static bool translate(nnrt_status &status, std::string &message);
};

// Logs and errors through the host, "onednn: " first.
inline void log_debug(const std::string &message) { plugin_kit::log<Onednn>(NNRT_LOG_DEBUG, message); }

// ---- refusals ------------------------------------------------------------------------------

// Thrown while building an op for a descriptor this backend does not take; the reason ends up in
// host->set_error() (op_create) or in a debug log line (supports). Specifics (dtypes, sizes) go in
// a trailing "[...]", so that reasons group well in summaries.
struct Unsupported {
  std::string reason;
};
[[noreturn]] void refuse(const std::string &reason);
inline void require(bool ok, const char *reason) {
  if (!ok) refuse(reason);
}

// ---- engine, stream, threads ---------------------------------------------------------------

// The process's one CPU engine: every op of every instance is built on it.
dnnl::engine &cpu_engine();

// A stream for the calling thread. oneDNN does not promise that one stream may be used for
// concurrent execution from several threads, and op_run may be called that way, so every thread
// gets its own (CPU streams are small and work completes inside execute()).
dnnl::stream &thread_stream();

// Bounds the OpenMP team of the primitives this thread runs to `threads`, and restores the
// thread's previous setting afterwards. OpenMP's thread-count setting is per thread, so setting it
// here does not disturb other threads of the host program.
class OmpThreadLimit {
 public:
  explicit OmpThreadLimit(int threads);
  ~OmpThreadLimit();
  OmpThreadLimit(const OmpThreadLimit &) = delete;
  OmpThreadLimit &operator=(const OmpThreadLimit &) = delete;

 private:
  int saved_;
  bool changed_;
};

// ---- workspace -----------------------------------------------------------------------------

// How one op carves the workspace the host hands to op_run: one scratchpad region shared by the
// op's primitives (they run one after another) followed by the op's temporary buffers (reordered
// copies of tensors, pooling workspaces). Offsets are 64-byte aligned; the base is aligned at run
// time, which is why total_bytes() includes 64 bytes of slack.
class WorkspaceLayout {
 public:
  void need_scratchpad(const dnnl::primitive_desc_base &pd);
  int add_buffer(size_t bytes);  // returns a slot id for buffer()
  size_t total_bytes() const;

  char *aligned_base(void *workspace) const;
  void *scratchpad(char *base) const { return base; }
  size_t scratchpad_bytes() const { return scratchpad_bytes_; }
  void *buffer(char *base, int slot) const;

 private:
  size_t scratchpad_bytes_ = 0;
  std::vector<size_t> buffer_offsets_;  // relative to the end of the scratchpad region
  size_t buffers_end_ = 0;
};

// ---- ops -----------------------------------------------------------------------------------

// One op_run's view of its arguments and workspace.
// The arguments of one primitive execution, kept on the stack: the C++ API's
// std::unordered_map costs several allocations per call, which dominates small ops. Holds the
// dnnl::memory objects (and so their handles) until the execution is over.
class ExecArgs {
 public:
  static constexpr int kMax = 12;
  ExecArgs(std::initializer_list<std::pair<int, dnnl::memory>> args) {
    for (const auto &a : args) emplace(a.first, a.second);
  }
  void emplace(int arg, const dnnl::memory &m);
  const dnnl::memory &at(int arg) const;
  int size() const { return n_; }
  const dnnl_exec_arg_t *c_args() const { return c_args_; }

 private:
  int n_ = 0;
  dnnl::memory memories_[kMax];
  dnnl_exec_arg_t c_args_[kMax];
};

// The dnnl::memory objects of one op, kept from run to run: making one costs an allocation and a
// descriptor copy (about a tenth of a batch-1 LeNet prediction when every run made its own);
// pointing a kept one at the run's data (set_data_handle) costs a few calls. Runs of one op may be
// concurrent, so each run borrows a set of its own for its duration.
class MemorySets {
 public:
  class Set {
   public:
    // The memory for descriptor m, a member of the op (its address and `role`, which input, output
    // or buffer it serves, name the slot), pointing at data.
    const dnnl::memory &get(const dnnl::memory::desc &m, int role, void *data);
    // The scratchpad, `bytes` long, at data.
    const dnnl::memory &scratchpad(size_t bytes, void *data);

   private:
    const dnnl::memory &slot(const void *key, int role, void *data, const dnnl::memory::desc &m);
    struct Slot {
      const void *key;
      int role;
      dnnl::memory memory;
    };
    std::vector<Slot> slots_;
  };

  // A set for one run, returned to the pool when the lease ends.
  class Lease {
   public:
    explicit Lease(const MemorySets &sets);
    ~Lease();
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    Set &set() { return *set_; }

   private:
    const MemorySets &sets_;
    std::unique_ptr<Set> set_;
  };

 private:
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Set>> free_;  // at most one per thread that ran the op at once
};

class Run {
 public:
  // `memories` holds the run's memory objects.
  Run(const WorkspaceLayout &layout, const nnrt_op_args &args, MemorySets::Set &memories);

  dnnl::memory input(const dnnl::memory::desc &md, int index) const;
  dnnl::memory output(const dnnl::memory::desc &md, int index) const;
  dnnl::memory buffer(const dnnl::memory::desc &md, int slot) const;
  // A buffer's memory itself, for an op's own loops.
  void *buffer_data(int slot) const { return layout_.buffer(base_, slot); }
  const nnrt_op_args &args() const { return args_; }

  // Executes a primitive on this thread's stream, adding the scratchpad argument.
  void execute(const dnnl::primitive &p, ExecArgs memories) const;

 private:
  const WorkspaceLayout &layout_;
  const nnrt_op_args &args_;
  char *base_;
  MemorySets::Set &memories_;
};

// A created op: primitives and reorders built once, run many times, possibly concurrently (run()
// must not change the object).
class Op {
 public:
  virtual ~Op() = default;
  virtual void run(const Run &r) const = 0;

  // One op_run: wraps the arguments and the workspace, then runs.
  void execute(const nnrt_op_args &args) const {
    MemorySets::Lease memories(memories_);
    run(Run(layout, args, memories.set()));
  }
  size_t workspace_bytes() const { return layout.total_bytes(); }
  int n_inputs = 0;
  int n_outputs = 0;

 protected:
  WorkspaceLayout layout;

 private:
  MemorySets memories_;
};

// What a family's factory gets. When plan_only is set (supports()), the factory stops once it
// knows that oneDNN has implementations for everything it needs, before the (costly) primitives
// are created, and returns nullptr.
struct Build {
  const nnrt_op_desc &desc;  // normalized: zero-padded to full size, so its bytes name the op
  bool plan_only;
  bool deterministic;  // the instance's deterministic mode: no choice may depend on a timing
  std::string key() const { return std::string(reinterpret_cast<const char *>(&desc), sizeof desc); }
};

// The factories, one per op family. Each throws Unsupported for descriptors it refuses.
std::unique_ptr<Op> make_copy(const Build &b);
std::unique_ptr<Op> make_unary(const Build &b);
std::unique_ptr<Op> make_unary_backward(const Build &b);
std::unique_ptr<Op> make_binary(const Build &b);
std::unique_ptr<Op> make_reduce(const Build &b);
std::unique_ptr<Op> make_matmul(const Build &b);
std::unique_ptr<Op> make_softmax(const Build &b);
std::unique_ptr<Op> make_softmax_backward(const Build &b);
std::unique_ptr<Op> make_conv(const Build &b);
std::unique_ptr<Op> make_conv_backward_data(const Build &b);
std::unique_ptr<Op> make_conv_backward_weights(const Build &b);
std::unique_ptr<Op> make_pool(const Build &b);
std::unique_ptr<Op> make_pool_backward(const Build &b);
std::unique_ptr<Op> make_batchnorm(const Build &b);
std::unique_ptr<Op> make_batchnorm_backward(const Build &b);
std::unique_ptr<Op> make_layernorm(const Build &b);
std::unique_ptr<Op> make_layernorm_backward(const Build &b);
std::unique_ptr<Op> make_matmul_int8(const Build &b);  // onednn_int8.cpp
std::unique_ptr<Op> make_conv2d_int8(const Build &b);
std::unique_ptr<Op> make_quantize(const Build &b);  // onednn_quantize.cpp
std::unique_ptr<Op> make_attention(const Build &b);  // onednn_attention.cpp
std::unique_ptr<Op> make_attention_backward(const Build &b);

// ---- descriptors ---------------------------------------------------------------------------

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;
using md = dnnl::memory::desc;

// The oneDNN type of an nnrt dtype; refuses the ones oneDNN has no type for (F64, I64, BOOL).
dt dnnl_type(int32_t nnrt_dtype);
using kernels::dtype_name;

// Checks the counts, ranks, dims (>= 1: empty tensors go to the reference backend) and strides
// (>= 0; outputs without stride 0 on dims > 1) of a descriptor.
void check_common(const nnrt_op_desc &d, int min_in, int max_in, int min_out, int max_out);

// Requires the listed tensors to have the dtype of the first, and it to be F32 or BF16 (the
// float types this CPU backend computes in; F16 only converts, see make_copy).
dt require_compute_dtype(std::initializer_list<const nnrt_tensor_desc *> ts);

// The memory descriptor of a tensor exactly as laid out (rank 0 becomes [1]). Strides of size-1
// dims are normalized, which changes no address but lets oneDNN recognize plain layouts.
md memory_desc(const nnrt_tensor_desc &t);
md memory_desc(const nnrt_tensor_desc &t, dt type);
// The same with every stride-0 dim turned into a dim of 1: oneDNN's form of a broadcast operand.
md broadcast_desc(const nnrt_tensor_desc &t);
// A descriptor from dims and strides, with the strides of size-1 dims normalized as above.
md strided_desc(const dims &ds, dt type, const dims &strides);
// The elements t's dims hold.
int64_t element_count(const nnrt_tensor_desc &t);
// A dense row-major descriptor with t's dims (rank 0 becomes [1]).
md dense_desc(const nnrt_tensor_desc &t, dt type);

bool has_zero_stride(const nnrt_tensor_desc &t);
bool same_layout(const nnrt_tensor_desc &a, const nnrt_tensor_desc &b);  // dims and strides
dims dims_of(const nnrt_tensor_desc &t);

// The oneDNN attributes every primitive of this backend is made with: scratchpad owned by the
// caller (carved from the workspace nnrt gives op_run, so it comes from nnrt's memory cache).
dnnl::primitive_attr base_attr();

// A reorder between two layouts of one tensor, built once. When the layouts are equal there is
// nothing to do and needed() is false. `slot` is the workspace buffer that holds the op's side
// (the layout the primitive wants).
class Bridge {
 public:
  Bridge() = default;
  // user -> inner (an input the primitive wants in another layout)
  static Bridge to_inner(const md &user, const md &inner, WorkspaceLayout &layout, bool plan_only);
  // user -> inner for an input kept in the op's own memory (onednn_kept_input.h): no workspace
  // buffer, and only in_to may be used when needed().
  static Bridge to_kept(const md &user, const md &inner, WorkspaceLayout &layout, bool plan_only);
  // inner -> user (an output the primitive writes in another layout)
  static Bridge to_user(const md &inner, const md &user, WorkspaceLayout &layout, bool plan_only);

  bool needed() const { return needed_; }
  const md &inner() const { return inner_; }
  // For an input: runs the reorder if needed and returns the memory the primitive reads.
  dnnl::memory in(const Run &r, int input_index) const;
  // The same for an input the op prepared itself (`user`, in the user's layout).
  dnnl::memory in_memory(const Run &r, const dnnl::memory &user) const;
  // For an input that needs a reorder: runs it into `to` (memory in inner()'s layout) instead.
  void in_to(const Run &r, int input_index, const dnnl::memory &to) const;
  // For an output: the memory the primitive writes; finish() then reorders it to the user's.
  dnnl::memory out(const Run &r, int output_index) const;
  void finish(const Run &r, const dnnl::memory &written, int output_index) const;

 private:
  static Bridge input(const md &user, const md &inner, WorkspaceLayout &layout, bool plan_only, bool buffer);
  void build(const md &from, const md &to, WorkspaceLayout &layout, bool plan_only, bool buffer = true);

  md user_, inner_;
  bool needed_ = false;
  int slot_ = -1;
  dnnl::reorder reorder_;
};

// An input as oneDNN may read it: as laid out, or, when broadcast (stride 0), copied into a
// workspace buffer in `like`'s layout.
Bridge readable_input(const nnrt_tensor_desc &t, const md &like, WorkspaceLayout &layout, bool plan_only);

// True when oneDNN found only its reference (naive) kernel for a primitive descriptor.
bool is_reference_impl(const dnnl::primitive_desc_base &pd);

// Logs which implementation oneDNN picked for an op.
void log_impl(const char *what, const dnnl::primitive_desc_base &pd);

// The eltwise algorithm and parameters of an nnrt unary alg (forward direction). Refuses the
// algs oneDNN has no eltwise for (SIGN, ERF; HARD_SIGMOID in 2.x), or none that computes them as
// nnrt does on every input (EXP, LOG, CLIP; HARD_SIGMOID in 3.x).
struct EltwiseAlg {
  dnnl::algorithm alg;
  float alpha;
  float beta;
};
EltwiseAlg eltwise_forward_alg(int32_t unary_alg, double alpha, double beta);
// Post-ops for an nnrt fused activation (0 = none). With `finite_inputs`, the caller has checked
// that the op's inputs hold no NaN or infinity, and relu becomes oneDNN's own relu: exact for every
// finite or infinite value but NaN (which it turns into 0), and far cheaper than the NaN-keeping
// elu form in the kernels that apply post-ops element by element (the gemm convolution); clip
// (ReLU6) becomes oneDNN's clip_v2, exact but for NaN (which it turns into the lower bound), and
// so does hard sigmoid (after a line, in 2.x).
// Without it clip is refused (the caller clips with nnrt's rule itself).
// `ops` holds the post-ops that come before the activation (an int8 product's bias), if any.
dnnl::post_ops fused_post_ops(int32_t fused, double alpha, double beta, bool finite_inputs = false,
                              dnnl::post_ops ops = dnnl::post_ops());
// Whether fused_post_ops takes `fused` without `finite_inputs` (a post-op exact on every input).
bool exact_post_op(int32_t fused, double alpha, double beta);

// ---- oneDNN 2.x and 3.x --------------------------------------------------------------------
//
// The plugin builds against Debian's oneDNN 2.6 or PyPI's 3.x (meson option onednn_root). Their
// API differences are met here, so that the op files read the same for both. oneDNN 3 dropped the
// operation descriptors (P::desc): its primitive_desc constructors take the engine, then what 2.x's
// desc took, then the forward hint and the attributes. pooling_v2 and softmax_v2 became pooling
// and softmax; eltwise and batch normalization take src and dst descriptors apart.

#if DNNL_VERSION_MAJOR >= 3
using pooling_forward = dnnl::pooling_forward;
using pooling_backward = dnnl::pooling_backward;
using softmax_forward = dnnl::softmax_forward;
using softmax_backward = dnnl::softmax_backward;
#else
using pooling_forward = dnnl::pooling_v2_forward;
using pooling_backward = dnnl::pooling_v2_backward;
using softmax_forward = dnnl::softmax_v2_forward;
using softmax_backward = dnnl::softmax_v2_backward;
#endif

// The primitive descriptor of P on the CPU engine for `args`, the arguments of P's 2.x desc.
template <class P, class... A>
typename P::primitive_desc make_pd(const dnnl::primitive_attr &attr, const A &...args) {
#if DNNL_VERSION_MAJOR >= 3
  return typename P::primitive_desc(cpu_engine(), args..., attr);
#else
  return typename P::primitive_desc(typename P::desc(args...), attr, cpu_engine());
#endif
}

// The same for a backward primitive, built against the forward primitive descriptor `hint`.
template <class P, class H, class... A>
typename P::primitive_desc make_backward_pd(const H &hint, const dnnl::primitive_attr &attr, const A &...args) {
#if DNNL_VERSION_MAJOR >= 3
  return typename P::primitive_desc(cpu_engine(), args..., hint, attr);
#else
  return typename P::primitive_desc(typename P::desc(args...), attr, cpu_engine(), hint);
#endif
}

// Eltwise and batch normalization with src and dst (diff_src and diff_dst) in one layout, `data`.
dnnl::eltwise_forward::primitive_desc eltwise_forward_pd(dnnl::prop_kind prop, const EltwiseAlg &e, const md &data,
                                                         const dnnl::primitive_attr &attr);
dnnl::eltwise_backward::primitive_desc eltwise_backward_pd(const EltwiseAlg &e, const md &diff, const md &data,
                                                           const dnnl::eltwise_forward::primitive_desc &hint,
                                                           const dnnl::primitive_attr &attr);
dnnl::batch_normalization_forward::primitive_desc batchnorm_forward_pd(dnnl::prop_kind prop, const md &data, float eps,
                                                                       dnnl::normalization_flags flags,
                                                                       const dnnl::primitive_attr &attr);
dnnl::batch_normalization_backward::primitive_desc batchnorm_backward_pd(
    const md &diff, const md &data, float eps, dnnl::normalization_flags flags,
    const dnnl::batch_normalization_forward::primitive_desc &hint, const dnnl::primitive_attr &attr);

// m's dims and data type in the layout the primitive chooses (format_tag::any). The accessors
// differ: 2.x has dims() and data_type(), 3.x get_dims() and get_data_type().
md any_layout(const md &m);

}  // namespace nnrt::onednn
