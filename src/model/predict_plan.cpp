#include "model/predict_plan.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "backend/weights_version.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/log.h"
#include "core/run_control.h"
#include "model/model.h"

namespace nnrt::model {

namespace {

using backend::ResolvedOp;

constexpr size_t kAlign = 64;  // arena regions start on cache lines (and oneDNN's preferred alignment)

size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Where an op's tensor lives at a replay: a base chosen per replay, plus a fixed byte offset.
enum class Base : uint8_t { kInput, kParam, kConstant, kArena, kOutput };

struct Operand {
  Base base = Base::kArena;
  int32_t index = 0;   // the input, parameter, constant or output
  int64_t offset = 0;  // bytes from the base
};

struct Step {
  ResolvedOp op;
  Operand in[NNRT_OP_MAX_INPUTS], out[NNRT_OP_MAX_OUTPUTS];
};

struct ArrayLayout {
  nnrt_dtype dtype = NNRT_DTYPE_F32;
  Shape shape;
  Strides strides{};
  static ArrayLayout of(const Array &a) { return {a.dtype(), a.shape(), a.strides()}; }
  bool operator==(const ArrayLayout &o) const { return dtype == o.dtype && shape == o.shape && strides == o.strides; }
};

int64_t bytes_between(const void *from, const void *to) {
  return static_cast<const char *>(to) - static_cast<const char *>(from);
}

// One output of a plan: the storage its last ops write, and the array the caller gets from it.
struct PlannedOutput {
  nnrt_dtype dtype = NNRT_DTYPE_F32;
  int64_t elements = 0;  // of the storage
  Shape shape;
  Strides strides{};
  int64_t offset = 0;
};

}  // namespace

// ---- the plan -------------------------------------------------------------------------------

class PredictPlan {
 public:
  std::vector<Step> steps;
  std::vector<std::pair<int32_t, ArrayLayout>> params;  // every parameter the steps read, as recorded
  std::vector<std::shared_ptr<Storage>> constants;      // memory the pass read but did not make
  size_t arena_bytes = 0, workspace_offset = 0;
  std::vector<PlannedOutput> outputs;

  // Replays on xs (one array per model input); false (nothing run) when a parameter no longer has
  // its recorded layout or an input is on another device, which the ordinary pass reports.
  // `into`, when given, is the caller's first output (nnrt_model_predict_into): when it is
  // row-major and the plan's first output is too, the ops write it directly and (*ys)[0] is `into`.
  bool run(Context &ctx, const std::vector<Array> &xs, const std::vector<Param> &values, const Array *into,
           std::vector<Array> *ys) const {
    for (const auto &p : params) {
      const Array &v = values[p.first].value;
      if (!(ArrayLayout::of(v) == p.second)) return false;
    }
    const backend::Device &dev = *ctx.device();
    for (const Array &x : xs)
      if (&x.device() != &dev && !(x.device().host_memory() && dev.host_memory())) return false;
    Array arena = arena_bytes ? Array::allocate(ctx.device(), NNRT_DTYPE_U8, Shape{int64_t(arena_bytes)}) : Array();
    bool direct = into && writes_whole(outputs.front(), *into);
    std::vector<Array> outs;
    for (size_t j = 0; j < outputs.size(); ++j)
      outs.push_back(j == 0 && direct ? *into : Array::allocate(ctx.device(), outputs[j].dtype, Shape{outputs[j].elements}));
    char *arena_base = arena.defined() ? static_cast<char *>(arena.data()) : nullptr;
    auto address = [&](const Operand &o) -> char * {
      switch (o.base) {
        case Base::kInput: return static_cast<char *>(xs[o.index].data()) + o.offset;
        case Base::kParam: return static_cast<char *>(values[o.index].value.data()) + o.offset;
        case Base::kConstant: return static_cast<char *>(constants[o.index]->ptr) + o.offset;
        case Base::kArena: return arena_base + o.offset;
        case Base::kOutput: return static_cast<char *>(outs[o.index].data()) + o.offset;
      }
      return nullptr;
    };
    const void *ins[NNRT_OP_MAX_INPUTS];
    void *results[NNRT_OP_MAX_OUTPUTS];
    for (const Step &s : steps) {
      for (int i = 0; i < s.op.desc.n_inputs; ++i) ins[i] = address(s.in[i]);
      for (int i = 0; i < s.op.desc.n_outputs; ++i) results[i] = address(s.out[i]);
      void *workspace = s.op.staged || !arena_base ? nullptr : arena_base + workspace_offset;
      uint64_t version = 0;
      if (backend::takes_weights_version(s.op.desc.kind) && s.in[1].base == Base::kParam)
        version = backend::weights_version(values[s.in[1].index].value.storage().get());
      backend::run_resolved(ctx, s.op, ins, results, workspace, version);
    }
    ys->clear();
    for (size_t j = 0; j < outputs.size(); ++j) {
      const PlannedOutput &o = outputs[j];
      ys->push_back(j == 0 && direct ? outs[0] : outs[j].view(o.shape, o.strides, o.offset));
    }
    return true;
  }

  // Whether the output is one whole row-major array of a's shape and dtype, so that a contiguous
  // `a` can stand in for it.
  static bool writes_whole(const PlannedOutput &o, const Array &a) {
    if (!(a.dtype() == o.dtype && a.is_contiguous() && a.shape() == o.shape && o.offset == 0 && o.elements == a.numel())) {
      return false;
    }
    Strides row_major = contiguous_strides(o.shape);
    for (int32_t i = 0; i < o.shape.rank; ++i)
      if (o.shape.dims[i] > 1 && o.strides[i] != row_major[i]) return false;
    return true;
  }
};

// ---- recording and compiling ----------------------------------------------------------------

namespace {

// Where an op's operand was: the recorded storage (Recording::storages) and the byte offset of the
// operand's first element in it.
struct RecordedOperand {
  size_t storage = 0;
  int64_t offset = 0;
};

struct RecordedOp {
  ResolvedOp op;
  std::vector<RecordedOperand> in, out;
};

// A storage the recorded ops touched.
struct RecordedStorage {
  std::weak_ptr<Storage> identity;
  // Held only for memory the pass found made (read before any op wrote it: the input, parameters,
  // constants), which a replay reads as it is.
  std::shared_ptr<Storage> kept;
  size_t bytes = 0;
};

// Records which storage each op touched without keeping the pass's own arrays alive: the pass frees
// each activation after its last reader as it does unrecorded, so recording a plan takes no more
// memory than an ordinary prediction (keeping them all made the first prediction of a ResNet-50 at
// batch 16 hold every activation at once). Storages are told apart by their shared ownership (a
// weak pointer keeps that unique while the recording lives), not by address, which a freed storage
// hands on.
class Recording : public backend::OpRecorder {
 public:
  void op_ran(const ResolvedOp &op, const Array *const *inputs, const Array *const *outputs) override {
    RecordedOp r{op, {}, {}};
    for (int i = 0; i < op.desc.n_inputs; ++i) r.in.push_back(operand(*inputs[i], false));
    for (int i = 0; i < op.desc.n_outputs; ++i) r.out.push_back(operand(*outputs[i], true));
    ops.push_back(std::move(r));
  }
  void host_wrote(const std::shared_ptr<Storage> &storage) override { host_written.emplace(storage.get(), storage); }

  // Whether an op touched `s`, and which recorded storage it is.
  bool find(const std::shared_ptr<Storage> &s, size_t *index) const {
    auto it = ids_.find(std::weak_ptr<Storage>(s));
    if (it == ids_.end()) return false;
    *index = it->second;
    return true;
  }

  // The storage, if host code wrote it during the pass (the map keeps it alive), else NULL.
  std::shared_ptr<Storage> written_by_host(const RecordedStorage &s) const {
    std::shared_ptr<Storage> alive = s.identity.lock();
    auto it = alive ? host_written.find(alive.get()) : host_written.end();
    return it == host_written.end() ? nullptr : it->second;
  }

  std::vector<RecordedOp> ops;
  std::vector<RecordedStorage> storages;
  std::unordered_map<const Storage *, std::shared_ptr<Storage>> host_written;

 private:
  RecordedOperand operand(const Array &a, bool write) {
    const std::shared_ptr<Storage> &s = a.storage();
    auto [it, added] = ids_.emplace(std::weak_ptr<Storage>(s), storages.size());
    if (added) {
      RecordedStorage r;
      r.identity = s;
      r.bytes = s->bytes;
      if (!write) r.kept = s;
      storages.push_back(std::move(r));
    }
    return {it->second, bytes_between(s->ptr, a.data())};
  }

  std::map<std::weak_ptr<Storage>, size_t, std::owner_less<std::weak_ptr<Storage>>> ids_;
};

bool same_storage(const std::weak_ptr<Storage> &a, const std::shared_ptr<Storage> &b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

// One storage the recorded ops touched, as the plan uses it.
struct Buffer {
  Base base = Base::kArena;
  int32_t index = 0;
  size_t first = 0, last = 0;  // the steps that touch it first and last
  bool written = false;
  size_t bytes = 0;
  int64_t base_offset = 0;  // an input's or a parameter's first element in its storage
  size_t offset = 0;        // in the arena
};

class Compiler {
 public:
  Compiler(const std::vector<Array> &xs, const std::vector<Param> &params) : xs_(xs), params_(params) {}

  std::shared_ptr<PredictPlan> compile(const Recording &rec, const std::vector<Array> &ys) {
    auto plan = std::make_shared<PredictPlan>();
    buffers_.resize(rec.storages.size());
    std::vector<bool> seen(rec.storages.size(), false);
    for (size_t k = 0; k < rec.ops.size(); ++k) {
      const RecordedOp &r = rec.ops[k];
      for (const RecordedOperand &o : r.in) touch(rec, o.storage, k, false, seen, *plan);
      for (const RecordedOperand &o : r.out) touch(rec, o.storage, k, true, seen, *plan);
    }
    // A replay rewrites only what the pass's own ops made: memory they did not make (the inputs,
    // parameters, constants) must be read-only, and each output must be one of theirs, of its own.
    for (const Buffer &b : buffers_)
      if (b.written && b.base != Base::kArena) return nullptr;
    for (size_t j = 0; j < ys.size(); ++j) {
      const Array &y = ys[j];
      size_t out_index = 0;
      if (!rec.find(y.storage(), &out_index) || buffers_[out_index].base != Base::kArena) return nullptr;
      Buffer &out = buffers_[out_index];
      size_t es = dtype_size(y.dtype());
      if (out.bytes % es != 0) return nullptr;
      out.base = Base::kOutput;
      out.index = static_cast<int32_t>(j);
      plan->outputs.push_back({y.dtype(), static_cast<int64_t>(out.bytes / es), y.shape(), y.strides(), y.offset()});
    }
    place_in_arena(*plan);
    size_t workspace = 0;
    for (const RecordedOp &r : rec.ops)
      if (!r.op.staged) workspace = std::max(workspace, r.op.op.workspace_bytes);
    plan->workspace_offset = plan->arena_bytes;
    plan->arena_bytes += aligned(workspace);
    for (const RecordedOp &r : rec.ops) plan->steps.push_back(step(r));
    return plan;
  }

 private:
  void touch(const Recording &rec, size_t id, size_t k, bool write, std::vector<bool> &seen, PredictPlan &plan) {
    Buffer &b = buffers_[id];
    if (!seen[id]) {
      seen[id] = true;
      const RecordedStorage &s = rec.storages[id];
      b.first = k;
      b.bytes = s.bytes;
      if (int32_t x = input_of(s.identity); x >= 0) {
        b.base = Base::kInput;
        b.index = x;
        b.base_offset = bytes_between(xs_[x].storage()->ptr, xs_[x].data());
      } else if (int32_t p = param_of(s.identity); p >= 0) {
        b.base = Base::kParam;
        b.index = p;
        b.base_offset = bytes_between(params_[p].value.storage()->ptr, params_[p].value.data());
        plan.params.emplace_back(p, ArrayLayout::of(params_[p].value));
      } else if (std::shared_ptr<Storage> kept = s.kept ? s.kept : rec.written_by_host(s)) {
        // Read before any op wrote it (memory the pass found made: a constant), kept as it is; or
        // written by host code, which a replay would not repeat (so no plan if an op writes it).
        b.base = Base::kConstant;
        b.index = static_cast<int32_t>(plan.constants.size());
        plan.constants.push_back(kept);
      }
    }
    b.last = k;
    b.written = b.written || write;
  }

  // Inputs never share a storage here (PredictPlans::predict plans no such call).
  int32_t input_of(const std::weak_ptr<Storage> &s) const {
    for (size_t i = 0; i < xs_.size(); ++i)
      if (same_storage(s, xs_[i].storage())) return static_cast<int32_t>(i);
    return -1;
  }

  int32_t param_of(const std::weak_ptr<Storage> &s) const {
    for (size_t i = 0; i < params_.size(); ++i)
      if (same_storage(s, params_[i].value.storage())) return static_cast<int32_t>(i);
    return -1;
  }

  // First fit: each array the pass made gets the lowest offset that no array alive at the same
  // time uses (an op never reads and writes the same bytes through two different arrays).
  void place_in_arena(PredictPlan &plan) {
    std::vector<const Buffer *> placed;
    for (Buffer &b : buffers_) {
      if (b.base != Base::kArena) continue;
      std::vector<const Buffer *> live;
      for (const Buffer *p : placed)
        if (p->last >= b.first) live.push_back(p);
      std::sort(live.begin(), live.end(), [](const Buffer *l, const Buffer *r) { return l->offset < r->offset; });
      size_t size = aligned(std::max<size_t>(b.bytes, 1)), at = 0;
      for (const Buffer *p : live) {
        if (p->offset >= at + size) break;
        at = std::max(at, p->offset + aligned(std::max<size_t>(p->bytes, 1)));
      }
      b.offset = at;
      plan.arena_bytes = std::max(plan.arena_bytes, at + size);
      placed.push_back(&b);
    }
  }

  Operand operand(const RecordedOperand &r) const {
    const Buffer &b = buffers_[r.storage];
    Operand o{b.base, b.index, r.offset};
    if (b.base == Base::kInput || b.base == Base::kParam) o.offset -= b.base_offset;
    if (b.base == Base::kArena) o.offset += static_cast<int64_t>(b.offset);
    return o;
  }

  Step step(const RecordedOp &r) const {
    Step s;
    s.op = r.op;
    for (size_t i = 0; i < r.in.size(); ++i) s.in[i] = operand(r.in[i]);
    for (size_t i = 0; i < r.out.size(); ++i) s.out[i] = operand(r.out[i]);
    return s;
  }

  const std::vector<Array> &xs_;
  const std::vector<Param> &params_;
  std::vector<Buffer> buffers_;  // by recorded storage
};

}  // namespace

// ---- the plans of a model -------------------------------------------------------------------

struct PredictPlans::Entry {
  std::vector<ArrayLayout> inputs;
  std::shared_ptr<const PredictPlan> plan;  // NULL: this layout's pass cannot be replayed
};

std::vector<Array> PredictPlans::predict(Context &ctx, const std::vector<Array> &xs, const std::vector<Param> &params,
                                        const std::function<std::vector<Array>()> &unplanned, const Array *into) {
  // Inputs in one storage (the caller passed one array twice, or views of one block) would each
  // need their offset from the other at every replay: such calls go the ordinary way.
  for (size_t i = 0; i < xs.size(); ++i)
    for (size_t j = i + 1; j < xs.size(); ++j)
      if (xs[i].storage() == xs[j].storage()) return unplanned();
  std::vector<ArrayLayout> key;
  for (const Array &x : xs) key.push_back(ArrayLayout::of(x));
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto &e) { return e->inputs == key; });
    if (it != entries_.end()) {
      entry = *it;
      std::rotate(entries_.begin(), it, it + 1);
    }
  }
  if (entry) {
    if (!entry->plan) return unplanned();
    std::vector<Array> ys;
    try {
      if (entry->plan->run(ctx, xs, params, into, &ys)) return ys;
    } catch (const Error &e) {
      if (is_stop_status(e.status())) throw;  // stopped by the caller's run options: no retry
      // A failing op (an index out of range, memory): the ordinary pass fails the same way, and
      // its message names the layer.
      return unplanned();
    }
  }
  Recording rec;
  std::vector<Array> ys;
  {
    backend::RecordScope scope(&rec);
    ys = unplanned();
  }
  auto made = std::make_shared<Entry>();
  made->inputs = key;
  made->plan = Compiler(xs, params).compile(rec, ys);
  if (made->plan) {
    // The recorded pass's arrays are back in the memory cache, in blocks of their own sizes, which
    // the replays' one arena does not reuse: returned to the system, they would not sit beside it
    // for the life of the process.
    ctx.device()->memory().trim();
    if (log::enabled(NNRT_LOG_INFO)) {
      log::info(cat("prediction plan for an input of ", to_string(xs.front().shape()), xs.size() > 1 ? " (and more)" : "", ": ",
                    made->plan->steps.size(), " ops, an arena of ", made->plan->arena_bytes, " bytes (",
                    made->plan->arena_bytes - made->plan->workspace_offset, " of them op workspace)"));
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [&](const auto &e) { return e->inputs == key; }),
                 entries_.end());
  entries_.insert(entries_.begin(), made);
  if (entries_.size() > kMaxEntries) entries_.resize(kMaxEntries);
  return ys;
}

size_t PredictPlans::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(), [](const auto &e) { return e->plan != nullptr; }));
}

}  // namespace nnrt::model
