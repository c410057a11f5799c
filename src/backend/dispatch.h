// Op dispatch: builds a descriptor from arrays, runs it on the context's device, and falls back to
// the reference backend (copying through the host when the device memory is not host memory) when
// the device's backend does not support it, unless the context is strict.
#pragma once

#include <string>

#include "backend/array.h"
#include "backend/context.h"
#include "backend/op_recorder.h"

namespace nnrt::backend {

// The name of an op kind, for messages and placement ("conv2d_backward_data").
const char *op_kind_name(int32_t kind);

// Receives, for every op run while it is installed on this thread, which backend ran it.
class PlacementRecorder {
 public:
  virtual ~PlacementRecorder() = default;
  virtual void record(int32_t kind, const std::string &backend, bool fallback) = 0;
};

// Installs a recorder on this thread for its lifetime (scopes nest; the innermost wins).
class PlacementScope {
 public:
  explicit PlacementScope(PlacementRecorder *recorder);
  ~PlacementScope();
  PlacementScope(const PlacementScope &) = delete;
  PlacementScope &operator=(const PlacementScope &) = delete;

 private:
  PlacementRecorder *previous_;
};

// Runs an op that dispatch resolved before (see op_recorder.h) on new data: `inputs` and `outputs`
// in descriptor order, laid out as the descriptor says. `workspace` is op.op.workspace_bytes of
// the device's memory, or NULL to take one from its cache. `weights_version`: the version of the
// weights of this call, for the kinds that take one (weights_version.h). Throws nnrt::Error.
void run_resolved(Context &ctx, const ResolvedOp &op, const void *const *inputs, void *const *outputs,
                  void *workspace, uint64_t weights_version = 0);

class OpCall {
 public:
  OpCall(nnrt_op_kind kind, int32_t alg);

  nnrt_op_attrs &attrs() { return desc_.attrs; }
  // An input described by the array's own shape and strides, or by a broadcast view of it.
  OpCall &in(const Array &a);
  OpCall &in_broadcast(const Array &a, const Shape &to);
  OpCall &out(const Array &a);
  OpCall &scalar(int i, double v) {
    args_.scalars[i] = v;
    return *this;
  }
  OpCall &counter(uint64_t c) {
    args_.counter = c;
    return *this;
  }

  // Runs on ctx's device or the reference backend; returns the name of the backend that ran it.
  // Throws nnrt::Error.
  const std::string &run(Context &ctx);

  // Whether ctx's device (not the reference fallback) would run this descriptor.
  bool device_supports(Context &ctx);

  const nnrt_op_desc &desc() const { return desc_; }

 private:
  void add_tensor(nnrt_tensor_desc &t, const Array &a, const Shape &dims, const Strides &strides);
  void check_device(Context &ctx) const;
  void record(Device &ran_on, const CachedOp &op, bool staged) const;

  nnrt_op_desc desc_{};
  nnrt_op_args args_{};
  const Array *inputs_[NNRT_OP_MAX_INPUTS] = {};
  const Array *outputs_[NNRT_OP_MAX_OUTPUTS] = {};
  const void *in_ptrs_[NNRT_OP_MAX_INPUTS] = {};
  void *out_ptrs_[NNRT_OP_MAX_OUTPUTS] = {};
};

}  // namespace nnrt::backend
