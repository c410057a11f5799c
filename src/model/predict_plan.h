// Prediction plans: a model's forward pass for one layout of its inputs, compiled once and replayed, so that
// a small batch costs the math and not the layers, shape checks, op cache lookups and allocations
// around every op.
//
// A plan is made from a recording of an ordinary prediction (backend/op_recorder.h): the ops it
// ran, each with the created op and backend that ran it, and which memory each op read and wrote.
// Every array the pass made becomes a region of one arena, placed so that arrays alive at the same
// time never share bytes and the others reuse them; op workspaces get one more region. A replay
// allocates the arena (one block from the memory cache), runs the recorded ops on it, and returns
// a fresh output array. The ops, their descriptors and their order are the recorded ones, so a
// replay computes exactly what the ordinary pass computes, bit for bit. Recording keeps no array of
// the pass alive (its peak memory is the ordinary pass's), and once a plan is made the memory cache
// returns the recorded pass's blocks to the system. NNRT_LOG_LEVEL=info logs each plan's arena size.
//
// What a plan keeps is immutable: concurrent predictions share it, each with its own arena.
// Parameter values are read at every replay (a set_param or a training step needs no
// invalidation); a parameter replaced by an array of another layout makes the replay refuse, and
// the caller records again. A replay that fails (an op refusing its data, memory) gives way to the
// ordinary pass, which reports the failure naming the layer. A pass that a replay could not repeat (an op writing memory that host
// code filled, an output that no op wrote) gives no plan, and predictions of that input layout go
// the ordinary way.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/dispatch.h"

namespace nnrt::model {

struct Param;

class PredictPlan;

// The plans of one model, a few input layouts (most recently used first).
class PredictPlans {
 public:
  // The prediction for xs (one array per model input): every output. Replays the plan of the
  // inputs' layouts, or runs `unplanned` (which computes the outputs from xs and the parameters
  // through the layers) while recording it and keeps the plan it gives. The caller holds the
  // model's lock shared, so the parameters do not change meanwhile. With `into` (the caller's
  // output, nnrt_model_predict_into), a replay whose first output is `into`'s row-major layout
  // writes it directly and returns it first; otherwise the results are new arrays.
  std::vector<Array> predict(Context &ctx, const std::vector<Array> &xs, const std::vector<Param> &params,
                             const std::function<std::vector<Array>()> &unplanned, const Array *into = nullptr);

  // How many input layouts have a plan that replays (not counting those known to give none).
  size_t size() const;

 private:
  struct Entry;
  static constexpr size_t kMaxEntries = 8;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<Entry>> entries_;
};

}  // namespace nnrt::model
