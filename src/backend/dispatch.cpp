#include "backend/dispatch.h"

#include <cstring>
#include <vector>

#include "backend/weights_version.h"
#include "core/dtype.h"
#include "nnrt/kernels/op_manifest.h"
#include "core/error.h"
#include "core/run_control.h"

namespace nnrt::backend {

namespace {

thread_local PlacementRecorder *current_recorder = nullptr;


std::string tensor_text(const nnrt_tensor_desc &t) {
  std::string s = dtype_name(static_cast<nnrt_dtype>(t.dtype));
  return s + to_string(Shape::of(t.dims, t.ndim));
}

// "conv2d(f32[64, 1, 28, 28], f32[20, 1, 5, 5] -> f32[64, 20, 24, 24])", for messages.
std::string desc_text(const nnrt_op_desc &d) {
  std::string s = op_kind_name(d.kind);
  s += "(";
  for (int i = 0; i < d.n_inputs; ++i) s += (i ? ", " : "") + tensor_text(d.inputs[i]);
  s += " ->";
  for (int i = 0; i < d.n_outputs; ++i) s += (i ? ", " : " ") + tensor_text(d.outputs[i]);
  return s + ")";
}

// The element span [lo, hi] a strided tensor touches, relative to its element 0.
void tensor_span(const nnrt_tensor_desc &t, int64_t *lo, int64_t *hi) {
  *lo = 0;
  *hi = 0;
  for (int i = 0; i < t.ndim; ++i) {
    if (t.dims[i] == 0) {
      *lo = *hi = 0;
      return;
    }
    int64_t reach = (t.dims[i] - 1) * t.strides[i];
    if (reach < 0) *lo += reach; else *hi += reach;
  }
}

void run_staged_on_reference(Context &ctx, const CachedOp &op, const nnrt_op_desc &desc, const nnrt_op_args &args,
                             const void *const *in_ptrs, void *const *out_ptrs);

}  // namespace

const char *op_kind_name(int32_t kind) { return kernels::op_kind_info(kind).name; }

PlacementScope::PlacementScope(PlacementRecorder *recorder) : previous_(current_recorder) {
  current_recorder = recorder;
}

PlacementScope::~PlacementScope() { current_recorder = previous_; }

OpCall::OpCall(nnrt_op_kind kind, int32_t alg) {
  desc_.struct_size = sizeof desc_;
  desc_.kind = kind;
  desc_.attrs.alg = alg;
}

void OpCall::add_tensor(nnrt_tensor_desc &t, const Array &a, const Shape &dims, const Strides &strides) {
  t.struct_size = sizeof t;
  t.dtype = a.dtype();
  t.ndim = dims.rank;
  for (int32_t i = 0; i < dims.rank; ++i) {
    t.dims[i] = dims.dims[i];
    t.strides[i] = strides[i];
  }
}

OpCall &OpCall::in(const Array &a) {
  int i = desc_.n_inputs++;
  add_tensor(desc_.inputs[i], a, a.shape(), a.strides());
  inputs_[i] = &a;
  in_ptrs_[i] = a.data();
  return *this;
}

OpCall &OpCall::in_broadcast(const Array &a, const Shape &to) {
  // numpy alignment from the right; a size-1 (or missing) dim repeats with stride 0.
  Strides st{};
  for (int32_t i = 0; i < to.rank; ++i) {
    int32_t j = a.rank() - to.rank + i;
    st[i] = (j < 0 || a.dim(j) == 1) ? 0 : a.strides()[j];
  }
  int i = desc_.n_inputs++;
  add_tensor(desc_.inputs[i], a, to, st);
  inputs_[i] = &a;
  in_ptrs_[i] = a.data();
  return *this;
}

OpCall &OpCall::out(const Array &a) {
  int i = desc_.n_outputs++;
  add_tensor(desc_.outputs[i], a, a.shape(), a.strides());
  outputs_[i] = &a;
  out_ptrs_[i] = a.data();
  return *this;
}

void OpCall::check_device(Context &ctx) const {
  const Device &dev = *ctx.device();
  auto check = [&](const Array *a, const char *role, int i) {
    if (&a->device() == &dev || (a->device().host_memory() && dev.host_memory())) return;
    fail(NNRT_ERR_INVALID_ARGUMENT, op_kind_name(desc_.kind), ": ", role, " ", i, " lives on backend '",
         a->device().name(), "' device ", a->device().index(), ", but the context runs on '", dev.name(),
         "' device ", dev.index());
  };
  for (int i = 0; i < desc_.n_inputs; ++i) check(inputs_[i], "input", i);
  for (int i = 0; i < desc_.n_outputs; ++i) check(outputs_[i], "output", i);
}

bool OpCall::device_supports(Context &ctx) { return ctx.device()->find_or_create(desc_).op != nullptr; }

const std::string &OpCall::run(Context &ctx) {
  check_run();  // a call run with nnrt_run_options stops between ops
  check_device(ctx);
  args_.n_inputs = desc_.n_inputs;
  args_.n_outputs = desc_.n_outputs;
  args_.inputs = in_ptrs_;
  args_.outputs = out_ptrs_;
  if (takes_weights_version(desc_.kind) && inputs_[1]) args_.counter = weights_version(inputs_[1]->storage().get());

  Device &dev = *ctx.device();
  CachedOp op = dev.find_or_create(desc_);
  if (op.op) {
    dev.run(op, args_, op_kind_name(desc_.kind));
    if (current_recorder) current_recorder->record(desc_.kind, dev.name(), false);
    record(dev, op, false);
    return dev.name();
  }
  if (ctx.options().strict && &dev != ctx.reference().get()) {
    fail(NNRT_ERR_UNSUPPORTED, "backend '", dev.name(), "' does not support ", desc_text(desc_),
         ", and the context is strict (no fallback to the reference backend)");
  }
  Device &ref = *ctx.reference();
  CachedOp rop = &ref == &dev ? op : ref.find_or_create(desc_);
  if (!rop.op) {
    // The reference backend refuses only what is invalid; its op_create says why.
    std::string why;
    nnrt_status s = ref.refusal_reason(desc_, &why);
    fail(s, desc_text(desc_), ": ", why.empty() ? "no backend supports this operation" : why);
  }
  if (dev.host_memory()) {
    ref.run(rop, args_, op_kind_name(desc_.kind));
  } else {
    run_staged_on_reference(ctx, rop, desc_, args_, in_ptrs_, out_ptrs_);
  }
  if (current_recorder) current_recorder->record(desc_.kind, ref.name(), &ref != &dev);
  record(ref, rop, !dev.host_memory());
  return ref.name();
}

namespace {

// The device's memory is not host memory: copy every tensor's span to the host, run the reference
// backend there, and copy the outputs' spans back.
void run_staged_on_reference(Context &ctx, const CachedOp &op, const nnrt_op_desc &desc, const nnrt_op_args &args,
                             const void *const *in_ptrs, void *const *out_ptrs) {
  Device &dev = *ctx.device();
  struct Staged {
    std::vector<char> buffer;
    int64_t lo;
    size_t es;
  };
  auto stage = [&](const nnrt_tensor_desc &t, const void *device_ptr) {
    Staged s;
    int64_t hi;
    tensor_span(t, &s.lo, &hi);
    s.es = dtype_size(static_cast<nnrt_dtype>(t.dtype));
    s.buffer.resize(static_cast<size_t>(hi - s.lo + 1) * s.es);
    dev.copy_to_host_sync(s.buffer.data(), static_cast<const char *>(device_ptr) + s.lo * static_cast<int64_t>(s.es),
                          s.buffer.size());
    return s;
  };
  std::vector<Staged> ins, outs;
  const void *host_in[NNRT_OP_MAX_INPUTS] = {};
  void *host_out[NNRT_OP_MAX_OUTPUTS] = {};
  for (int i = 0; i < desc.n_inputs; ++i) {
    ins.push_back(stage(desc.inputs[i], in_ptrs[i]));
    host_in[i] = ins.back().buffer.data() - ins.back().lo * static_cast<int64_t>(ins.back().es);
  }
  for (int i = 0; i < desc.n_outputs; ++i) {
    outs.push_back(stage(desc.outputs[i], out_ptrs[i]));  // keeps what the op does not write
    host_out[i] = outs.back().buffer.data() - outs.back().lo * static_cast<int64_t>(outs.back().es);
  }
  nnrt_op_args host_args = args;
  host_args.inputs = host_in;
  host_args.outputs = host_out;
  ctx.reference()->run(op, host_args, op_kind_name(desc.kind));
  for (int i = 0; i < desc.n_outputs; ++i) {
    dev.copy_from_host_sync(static_cast<char *>(out_ptrs[i]) + outs[i].lo * static_cast<int64_t>(outs[i].es),
                            outs[i].buffer.data(), outs[i].buffer.size());
  }
}

}  // namespace

void run_resolved(Context &ctx, const ResolvedOp &op, const void *const *inputs, void *const *outputs,
                  void *workspace, uint64_t weights_version) {
  check_run();
  nnrt_op_args args = op.args;
  if (takes_weights_version(op.desc.kind)) args.counter = weights_version;
  args.n_inputs = op.desc.n_inputs;
  args.n_outputs = op.desc.n_outputs;
  args.inputs = inputs;
  args.outputs = outputs;
  if (op.staged) {
    run_staged_on_reference(ctx, op.op, op.desc, args, inputs, outputs);
  } else {
    op.device->run(op.op, args, op_kind_name(op.desc.kind), workspace);
  }
}

void OpCall::record(Device &ran_on, const CachedOp &op, bool staged) const {
  OpRecorder *recorder = current_op_recorder();
  if (!recorder) return;
  ResolvedOp r;
  r.desc = desc_;
  r.args = args_;
  r.args.inputs = nullptr;
  r.args.outputs = nullptr;
  if (takes_weights_version(desc_.kind)) r.args.counter = 0;  // a replay gives the version of its own call
  r.device = &ran_on;
  r.op = op;
  r.staged = staged;
  recorder->op_ran(r, inputs_, outputs_);
}

}  // namespace nnrt::backend
