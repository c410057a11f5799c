// Recording the ops a computation runs on this thread, so that it can be replayed later on other
// data without going through layers, shape checks and the op cache again (a model's prediction
// plan is made this way).
#pragma once

#include <memory>

#include "backend/array.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::backend {

// One op as dispatch ran it: its descriptor, its scalar arguments and the created op that ran it.
struct ResolvedOp {
  nnrt_op_desc desc{};
  nnrt_op_args args{};       // scalars and counter; data pointers are given at each run
  Device *device = nullptr;  // the backend that ran it: the context's device or the reference
  CachedOp op;
  bool staged = false;  // the reference backend ran it on host copies of device memory
};

class OpRecorder {
 public:
  virtual ~OpRecorder() = default;
  // An op ran; the arrays it read and wrote, in descriptor order.
  virtual void op_ran(const ResolvedOp &op, const Array *const *inputs, const Array *const *outputs) = 0;
  // Host code wrote a storage outside any op (zeroed it at allocation, copied data into it).
  virtual void host_wrote(const std::shared_ptr<Storage> &storage) = 0;
};

// Installs a recorder on this thread for its lifetime (scopes nest; the innermost wins).
class RecordScope {
 public:
  explicit RecordScope(OpRecorder *recorder);
  ~RecordScope();
  RecordScope(const RecordScope &) = delete;
  RecordScope &operator=(const RecordScope &) = delete;

 private:
  OpRecorder *previous_;
};

// The recorder installed on this thread, or NULL.
OpRecorder *current_op_recorder();

}  // namespace nnrt::backend
