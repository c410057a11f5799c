#include "backend/op_recorder.h"

namespace nnrt::backend {

namespace {
thread_local OpRecorder *current_recorder = nullptr;
}  // namespace

RecordScope::RecordScope(OpRecorder *recorder) : previous_(current_recorder) { current_recorder = recorder; }

RecordScope::~RecordScope() { current_recorder = previous_; }

OpRecorder *current_op_recorder() { return current_recorder; }

}  // namespace nnrt::backend
