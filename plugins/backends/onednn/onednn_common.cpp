// Shared helpers of the oneDNN backend (see onednn_common.h).
#include "onednn_common.h"

#include <algorithm>

#include <omp.h>

#include <atomic>
#include <cstring>

namespace nnrt::onednn {

// ---- host services -------------------------------------------------------------------------

bool Onednn::translate(nnrt_status &status, std::string &message) {
  try {
    throw;
  } catch (const Unsupported &u) {
    message = u.reason;
    status = NNRT_ERR_UNSUPPORTED;
  } catch (const dnnl::error &e) {
    message = std::string("oneDNN: ") + e.what();
    status = e.status == dnnl_out_of_memory ? NNRT_ERR_OUT_OF_MEMORY : NNRT_ERR_BACKEND;
  } catch (...) {
    return false;
  }
  return true;
}

void refuse(const std::string &reason) { throw Unsupported{reason}; }

// ---- engine, stream, threads ---------------------------------------------------------------

dnnl::engine &cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream &thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

OmpThreadLimit::OmpThreadLimit(int threads) : saved_(omp_get_max_threads()), changed_(false) {
  if (threads > 0 && threads != saved_) {
    omp_set_num_threads(threads);
    changed_ = true;
  }
}

OmpThreadLimit::~OmpThreadLimit() {
  if (changed_) omp_set_num_threads(saved_);
}

// ---- workspace -----------------------------------------------------------------------------

namespace {
constexpr size_t kAlign = 64;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

void WorkspaceLayout::need_scratchpad(const dnnl::primitive_desc_base &pd) {
  size_t bytes = pd.scratchpad_desc().get_size();
  if (bytes > scratchpad_bytes_) scratchpad_bytes_ = bytes;
}

int WorkspaceLayout::add_buffer(size_t bytes) {
  buffer_offsets_.push_back(buffers_end_);
  buffers_end_ += align_up(bytes);
  return static_cast<int>(buffer_offsets_.size()) - 1;
}

size_t WorkspaceLayout::total_bytes() const {
  size_t used = align_up(scratchpad_bytes_) + buffers_end_;
  return used == 0 ? 0 : used + kAlign;
}

char *WorkspaceLayout::aligned_base(void *workspace) const {
  auto p = reinterpret_cast<uintptr_t>(workspace);
  return reinterpret_cast<char *>((p + kAlign - 1) / kAlign * kAlign);
}

void *WorkspaceLayout::buffer(char *base, int slot) const {
  return base + align_up(scratchpad_bytes_) + buffer_offsets_.at(static_cast<size_t>(slot));
}

// ---- runs ----------------------------------------------------------------------------------

// ---- kept memory objects -------------------------------------------------------------------

namespace {
// Roles of a memory object in a run, by kind: input k is k, output k kOutput + k, workspace buffer
// k kBuffer + k.
constexpr int kOutput = 1 << 8, kBuffer = 1 << 9, kScratchpad = -1;
}  // namespace

const dnnl::memory &MemorySets::Set::slot(const void *key, int role, void *data, const md &m) {
  for (Slot &s : slots_)
    if (s.key == key && s.role == role) {
      s.memory.set_data_handle(data);
      return s.memory;
    }
  slots_.push_back({key, role, dnnl::memory(m, cpu_engine(), data)});
  return slots_.back().memory;
}

const dnnl::memory &MemorySets::Set::get(const md &m, int role, void *data) { return slot(&m, role, data, m); }

const dnnl::memory &MemorySets::Set::scratchpad(size_t bytes, void *data) {
  for (Slot &s : slots_)  // found without making a descriptor
    if (s.role == kScratchpad) {
      s.memory.set_data_handle(data);
      return s.memory;
    }
  md m({static_cast<dnnl::memory::dim>(bytes)}, dt::u8, dnnl::memory::format_tag::a);
  return slot(nullptr, kScratchpad, data, m);
}

MemorySets::Lease::Lease(const MemorySets &sets) : sets_(sets) {
  {
    std::lock_guard<std::mutex> lock(sets_.mutex_);
    if (!sets_.free_.empty()) {
      set_ = std::move(sets_.free_.back());
      sets_.free_.pop_back();
    }
  }
  if (!set_) set_ = std::make_unique<Set>();
}

MemorySets::Lease::~Lease() {
  std::lock_guard<std::mutex> lock(sets_.mutex_);
  sets_.free_.push_back(std::move(set_));
}

// ---- runs ----------------------------------------------------------------------------------

Run::Run(const WorkspaceLayout &layout, const nnrt_op_args &args, MemorySets::Set &memories)
    : layout_(layout),
      args_(args),
      base_(args.workspace ? layout.aligned_base(args.workspace) : nullptr),
      memories_(memories) {}

dnnl::memory Run::input(const md &m, int index) const {
  return memories_.get(m, index, const_cast<void *>(args_.inputs[index]));
}

dnnl::memory Run::output(const md &m, int index) const {
  return memories_.get(m, kOutput + index, args_.outputs[index]);
}

dnnl::memory Run::buffer(const md &m, int slot) const {
  return memories_.get(m, kBuffer + slot, layout_.buffer(base_, slot));
}

void ExecArgs::emplace(int arg, const dnnl::memory &m) {
  if (n_ == kMax) throw std::logic_error("ExecArgs: more than kMax arguments");
  memories_[n_] = m;
  c_args_[n_] = {arg, m.get()};
  ++n_;
}

const dnnl::memory &ExecArgs::at(int arg) const {
  for (int i = 0; i < n_; ++i)
    if (c_args_[i].arg == arg) return memories_[i];
  throw std::logic_error("ExecArgs: no such argument");
}

void Run::execute(const dnnl::primitive &p, ExecArgs memories) const {
  if (layout_.scratchpad_bytes() > 0) {
    memories.emplace(DNNL_ARG_SCRATCHPAD,
                     memories_.scratchpad(layout_.scratchpad_bytes(), layout_.scratchpad(base_)));
  }
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(p.get(), thread_stream().get(), memories.size(), memories.c_args()),
      "could not execute a primitive");
}

// ---- descriptors ---------------------------------------------------------------------------

dt dnnl_type(int32_t t) {
  switch (t) {
    case NNRT_DTYPE_F32: return dt::f32;
    case NNRT_DTYPE_BF16: return dt::bf16;
    case NNRT_DTYPE_F16: return dt::f16;
    case NNRT_DTYPE_I32: return dt::s32;
    case NNRT_DTYPE_U8: return dt::u8;
    case NNRT_DTYPE_I8: return dt::s8;
    default: refuse(std::string("oneDNN has no such data type [") + dtype_name(t) + "]");
  }
}


namespace {
void check_tensor(const nnrt_tensor_desc &t, bool is_output) {
  require(t.struct_size >= sizeof(nnrt_tensor_desc), "tensor descriptor smaller than this ABI's");
  require(t.ndim >= 0 && t.ndim <= NNRT_MAX_DIMS, "tensor rank outside 0..NNRT_MAX_DIMS");
  for (int i = 0; i < t.ndim; ++i) {
    require(t.dims[i] >= 1, "empty tensors are left to the reference backend");
    require(t.strides[i] >= 0, "negative strides are not supported");
    if (is_output) require(t.strides[i] > 0 || t.dims[i] == 1, "an output has a stride of 0");
  }
}
}  // namespace

void check_common(const nnrt_op_desc &d, int min_in, int max_in, int min_out, int max_out) {
  require(d.n_inputs >= min_in && d.n_inputs <= max_in, "unexpected number of inputs");
  require(d.n_outputs >= min_out && d.n_outputs <= max_out, "unexpected number of outputs");
  for (int i = 0; i < d.n_inputs; ++i) check_tensor(d.inputs[i], false);
  for (int i = 0; i < d.n_outputs; ++i) check_tensor(d.outputs[i], true);
}

dt require_compute_dtype(std::initializer_list<const nnrt_tensor_desc *> ts) {
  int32_t t0 = (*ts.begin())->dtype;
  for (const nnrt_tensor_desc *t : ts)
    require(t->dtype == t0, "operands of different dtypes");
  if (t0 != NNRT_DTYPE_F32 && t0 != NNRT_DTYPE_BF16)
    refuse(std::string("this op computes in f32 or bf16 only [got ") + dtype_name(t0) + "]");
  return dnnl_type(t0);
}

dims dims_of(const nnrt_tensor_desc &t) {
  if (t.ndim == 0) return {1};
  return dims(t.dims, t.dims + t.ndim);
}

namespace {
// Gives each size-1 dim the stride it would have in a dense layout that keeps the memory order of
// the dims after it: the largest extent (stride * size) among them, or 1 for the last dim. No
// address changes (a size-1 dim's index is always 0), and oneDNN then recognizes the plain and
// channels-last layouts (nchw, nhwc) also with N = 1, not as an odd blocked one only its reference
// kernels take.
dims normalized_strides(const dims &ds, dims st) {
  for (int d = static_cast<int>(ds.size()) - 1; d >= 0; --d) {
    if (ds[d] != 1) continue;
    dnnl::memory::dim extent = 1;
    for (size_t e = static_cast<size_t>(d) + 1; e < ds.size(); ++e) extent = std::max(extent, st[e] * ds[e]);
    st[d] = extent;
  }
  return st;
}
}  // namespace

md strided_desc(const dims &ds, dt type, const dims &strides) { return md(ds, type, normalized_strides(ds, strides)); }

md memory_desc(const nnrt_tensor_desc &t, dt type) {
  if (t.ndim == 0) return md({1}, type, dims{1});
  dims ds = dims_of(t);
  return md(ds, type, normalized_strides(ds, dims(t.strides, t.strides + t.ndim)));
}

md memory_desc(const nnrt_tensor_desc &t) { return memory_desc(t, dnnl_type(t.dtype)); }

md broadcast_desc(const nnrt_tensor_desc &t) {
  if (t.ndim == 0) return md({1}, dnnl_type(t.dtype), dims{1});
  dims ds = dims_of(t);
  dims st(t.strides, t.strides + t.ndim);
  for (size_t d = 0; d < ds.size(); ++d)
    if (st[d] == 0) ds[d] = 1;
  return md(ds, dnnl_type(t.dtype), normalized_strides(ds, st));
}

int64_t element_count(const nnrt_tensor_desc &t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim && i < NNRT_MAX_DIMS; ++i) n *= t.dims[i];
  return n;
}

md dense_desc(const nnrt_tensor_desc &t, dt type) {
  dims ds = dims_of(t);
  dims st(ds.size());
  dnnl::memory::dim s = 1;
  for (int d = static_cast<int>(ds.size()) - 1; d >= 0; --d) {
    st[d] = s;
    s *= ds[d];
  }
  return md(ds, type, st);
}

bool has_zero_stride(const nnrt_tensor_desc &t) {
  for (int i = 0; i < t.ndim; ++i)
    if (t.strides[i] == 0 && t.dims[i] > 1) return true;
  return false;
}

bool same_layout(const nnrt_tensor_desc &a, const nnrt_tensor_desc &b) {
  if (a.ndim != b.ndim) return false;
  for (int i = 0; i < a.ndim; ++i)
    if (a.dims[i] != b.dims[i] || (a.dims[i] > 1 && a.strides[i] != b.strides[i])) return false;
  return true;
}

dnnl::primitive_attr base_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// ---- bridges -------------------------------------------------------------------------------

void Bridge::build(const md &from, const md &to, WorkspaceLayout &layout, bool plan_only, bool buffer) {
  dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, base_attr());
  layout.need_scratchpad(pd);
  if (buffer) slot_ = layout.add_buffer(inner_.get_size());
  if (!plan_only) reorder_ = dnnl::reorder(pd);
}

Bridge Bridge::input(const md &user, const md &inner, WorkspaceLayout &layout, bool plan_only, bool buffer) {
  Bridge b;
  b.user_ = user;
  b.inner_ = inner;
  b.needed_ = !(user == inner);
  if (b.needed_) b.build(user, inner, layout, plan_only, buffer);
  return b;
}

Bridge Bridge::to_inner(const md &user, const md &inner, WorkspaceLayout &layout, bool plan_only) {
  return input(user, inner, layout, plan_only, true);
}

Bridge Bridge::to_kept(const md &user, const md &inner, WorkspaceLayout &layout, bool plan_only) {
  return input(user, inner, layout, plan_only, false);
}

Bridge Bridge::to_user(const md &inner, const md &user, WorkspaceLayout &layout, bool plan_only) {
  Bridge b;
  b.user_ = user;
  b.inner_ = inner;
  b.needed_ = !(user == inner);
  if (b.needed_) b.build(inner, user, layout, plan_only);
  return b;
}

dnnl::memory Bridge::in(const Run &r, int input_index) const { return in_memory(r, r.input(user_, input_index)); }

dnnl::memory Bridge::in_memory(const Run &r, const dnnl::memory &user) const {
  if (!needed_) return user;
  dnnl::memory inner = r.buffer(inner_, slot_);
  r.execute(reorder_, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, inner}});
  return inner;
}

void Bridge::in_to(const Run &r, int input_index, const dnnl::memory &to) const {
  r.execute(reorder_, {{DNNL_ARG_FROM, r.input(user_, input_index)}, {DNNL_ARG_TO, to}});
}

dnnl::memory Bridge::out(const Run &r, int output_index) const {
  return needed_ ? r.buffer(inner_, slot_) : r.output(user_, output_index);
}

void Bridge::finish(const Run &r, const dnnl::memory &written, int output_index) const {
  if (!needed_) return;
  r.execute(reorder_, {{DNNL_ARG_FROM, written}, {DNNL_ARG_TO, r.output(user_, output_index)}});
}

Bridge readable_input(const nnrt_tensor_desc &t, const md &like, WorkspaceLayout &layout, bool plan_only) {
  return Bridge::to_inner(memory_desc(t), has_zero_stride(t) ? like : memory_desc(t), layout, plan_only);
}

bool is_reference_impl(const dnnl::primitive_desc_base &pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

void log_impl(const char *what, const dnnl::primitive_desc_base &pd) {
  log_debug(std::string(what) + ": " + pd.impl_info_str());
}

// ---- eltwise algorithms --------------------------------------------------------------------

EltwiseAlg eltwise_forward_alg(int32_t unary_alg, double alpha, double beta) {
  using a = dnnl::algorithm;
  const float fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
  switch (unary_alg) {
    case NNRT_UNARY_IDENTITY: return {a::eltwise_linear, 1.f, 0.f};
    case NNRT_UNARY_NEG: return {a::eltwise_linear, -1.f, 0.f};
    case NNRT_UNARY_ABS: return {a::eltwise_abs, 0.f, 0.f};
    case NNRT_UNARY_EXP: refuse("oneDNN's exp turns NaN into +inf");
    // oneDNN's log is an approximation (a few ulp) that gives finite values for 0 and negatives.
    case NNRT_UNARY_LOG: refuse("oneDNN's log is approximate and wrong for 0 and negative inputs");
    case NNRT_UNARY_SQRT: return {a::eltwise_sqrt, 0.f, 0.f};
    case NNRT_UNARY_SQUARE: return {a::eltwise_square, 0.f, 0.f};
    // oneDNN's relu turns NaN into 0 (nnrt keeps NaN). ELU with alpha 0 is relu for every other
    // input (x > 0 ? x : 0 * (exp(x) - 1), a zero, -0 for negatives) and keeps NaN.
    case NNRT_UNARY_RELU: return {a::eltwise_elu, 0.f, 0.f};
    case NNRT_UNARY_LEAKY_RELU: return {a::eltwise_relu, fa, 0.f};
    case NNRT_UNARY_ELU: return {a::eltwise_elu, fa, 0.f};
    case NNRT_UNARY_GELU: return {a::eltwise_gelu_erf, 0.f, 0.f};
    case NNRT_UNARY_SIGMOID: return {a::eltwise_logistic, 0.f, 0.f};
    case NNRT_UNARY_TANH: return {a::eltwise_tanh, 0.f, 0.f};
    case NNRT_UNARY_LINEAR: return {a::eltwise_linear, fa, fb};
    case NNRT_UNARY_CLIP: refuse("oneDNN's clip turns NaN into the lower bound");
    case NNRT_UNARY_SIGN: refuse("oneDNN has no sign eltwise");
    case NNRT_UNARY_SWISH: return {a::eltwise_swish, fa, 0.f};
    case NNRT_UNARY_GELU_TANH: return {a::eltwise_gelu_tanh, 0.f, 0.f};
    case NNRT_UNARY_ERF: refuse("oneDNN has no erf eltwise");
#if DNNL_VERSION_MAJOR >= 3
    case NNRT_UNARY_HARD_SIGMOID: refuse("oneDNN's hardsigmoid turns NaN into 1");
    case NNRT_UNARY_HARD_SWISH: return {a::eltwise_hardswish, fa, fb};
    case NNRT_UNARY_SOFTPLUS: return {a::eltwise_soft_relu, 1.f, 0.f};  // 3.x: log(1 + exp(alpha x)) / alpha
#else
    case NNRT_UNARY_HARD_SIGMOID: refuse("oneDNN 2 has no hardsigmoid eltwise");
    case NNRT_UNARY_HARD_SWISH:
      // oneDNN 2's hardswish is x * min(max(x + 3, 0), 6) / 6: alpha 1/6 and beta 1/2 only.
      if (fa != 1.f / 6 || fb != 0.5f) refuse("oneDNN 2's hardswish has alpha 1/6 and beta 1/2 only");
      return {a::eltwise_hardswish, 0.f, 0.f};
    case NNRT_UNARY_SOFTPLUS: return {a::eltwise_soft_relu, 0.f, 0.f};
#endif
    default: refuse("unknown unary alg [" + std::to_string(unary_alg) + "]");
  }
}

namespace {
void append_eltwise(dnnl::post_ops &ops, const EltwiseAlg &e) {
#if DNNL_VERSION_MAJOR >= 3
  ops.append_eltwise(e.alg, e.alpha, e.beta);  // 3.x dropped the post-op's scale (1 here)
#else
  ops.append_eltwise(1.f, e.alg, e.alpha, e.beta);
#endif
}
}  // namespace

dnnl::post_ops fused_post_ops(int32_t fused, double alpha, double beta, bool finite_inputs, dnnl::post_ops ops) {
  if (fused == NNRT_UNARY_NONE || fused == NNRT_UNARY_IDENTITY) return ops;
  if (fused == NNRT_UNARY_RELU && finite_inputs) {
    append_eltwise(ops, {dnnl::algorithm::eltwise_relu, 0.f, 0.f});
    return ops;
  }
  if (fused == NNRT_UNARY_CLIP && finite_inputs) {
    append_eltwise(ops, {dnnl::algorithm::eltwise_clip_v2, static_cast<float>(alpha), static_cast<float>(beta)});
    return ops;
  }
  if (fused == NNRT_UNARY_HARD_SIGMOID && finite_inputs) {
#if DNNL_VERSION_MAJOR >= 3
    append_eltwise(ops, {dnnl::algorithm::eltwise_hardsigmoid, static_cast<float>(alpha), static_cast<float>(beta)});
#else  // 2.x has no hardsigmoid: a line, then a clip
    append_eltwise(ops, {dnnl::algorithm::eltwise_linear, static_cast<float>(alpha), static_cast<float>(beta)});
    append_eltwise(ops, {dnnl::algorithm::eltwise_clip_v2, 0.f, 1.f});
#endif
    return ops;
  }
  EltwiseAlg e = eltwise_forward_alg(fused, alpha, beta);
  append_eltwise(ops, e);
  return ops;
}

bool exact_post_op(int32_t fused, double alpha, double beta) {
  try {
    fused_post_ops(fused, alpha, beta, false);
    return true;
  } catch (const Unsupported &) {
    return false;
  }
}

// ---- oneDNN 2.x and 3.x --------------------------------------------------------------------

dnnl::eltwise_forward::primitive_desc eltwise_forward_pd(dnnl::prop_kind prop, const EltwiseAlg &e, const md &data,
                                                         const dnnl::primitive_attr &attr) {
#if DNNL_VERSION_MAJOR >= 3
  return make_pd<dnnl::eltwise_forward>(attr, prop, e.alg, data, data, e.alpha, e.beta);
#else
  return make_pd<dnnl::eltwise_forward>(attr, prop, e.alg, data, e.alpha, e.beta);
#endif
}

dnnl::eltwise_backward::primitive_desc eltwise_backward_pd(const EltwiseAlg &e, const md &diff, const md &data,
                                                           const dnnl::eltwise_forward::primitive_desc &hint,
                                                           const dnnl::primitive_attr &attr) {
#if DNNL_VERSION_MAJOR >= 3
  return make_backward_pd<dnnl::eltwise_backward>(hint, attr, e.alg, diff, diff, data, e.alpha, e.beta);
#else
  return make_backward_pd<dnnl::eltwise_backward>(hint, attr, e.alg, diff, data, e.alpha, e.beta);
#endif
}

dnnl::batch_normalization_forward::primitive_desc batchnorm_forward_pd(dnnl::prop_kind prop, const md &data, float eps,
                                                                       dnnl::normalization_flags flags,
                                                                       const dnnl::primitive_attr &attr) {
#if DNNL_VERSION_MAJOR >= 3
  return make_pd<dnnl::batch_normalization_forward>(attr, prop, data, data, eps, flags);
#else
  return make_pd<dnnl::batch_normalization_forward>(attr, prop, data, eps, flags);
#endif
}

dnnl::batch_normalization_backward::primitive_desc batchnorm_backward_pd(
    const md &diff, const md &data, float eps, dnnl::normalization_flags flags,
    const dnnl::batch_normalization_forward::primitive_desc &hint, const dnnl::primitive_attr &attr) {
#if DNNL_VERSION_MAJOR >= 3
  return make_backward_pd<dnnl::batch_normalization_backward>(hint, attr, dnnl::prop_kind::backward, diff, diff, data,
                                                              eps, flags);
#else
  return make_backward_pd<dnnl::batch_normalization_backward>(hint, attr, dnnl::prop_kind::backward, diff, data, eps,
                                                              flags);
#endif
}

md any_layout(const md &m) {
#if DNNL_VERSION_MAJOR >= 3
  return md(m.get_dims(), m.get_data_type(), dnnl::memory::format_tag::any);
#else
  return md(m.dims(), m.data_type(), dnnl::memory::format_tag::any);
#endif
}

}  // namespace nnrt::onednn
