// A model: a graph of layers built from a JSON config, its parameters, and the forward and backward
// passes over the graph. Built once; afterwards only parameter values change (by a trainer or
// set_param), under the model's lock, so predict() is safe from many threads.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backend/dispatch.h"
#include "backend/weights_version.h"
#include "core/shared_mutex.h"
#include "model/layer.h"
#include "model/predict_plan.h"

namespace nnrt::model {

class OutputLayer;

// A config's "inputs" list holds at most this many.
constexpr size_t kMaxModelInputs = 64;

struct Param {
  std::string name;  // "<layer>.<suffix>"
  Array value;       // F32, the master copy
  ParamSpec spec;
  int32_t node = 0;
};

// Which backends ran a node's ops, filled in as passes run (forward and backward separately).
class Placement : public backend::PlacementRecorder {
 public:
  void record(int32_t kind, const std::string &backend, bool fallback) override;
  void set_backward(bool backward) { backward_ = backward; }
  // The forward placement of the same node of another model (nnrt_model_share).
  void copy_forward(const Placement &from);
  Json to_json() const;

 private:
  mutable std::mutex mutex_;
  // Atomic: data-parallel workers run passes over the same nodes at once.
  std::atomic<bool> backward_{false};
  std::map<std::string, std::set<std::string>> forward_, backward_ops_;  // op kind -> backends
  std::set<std::string> fallbacks_;
};

struct Node {
  std::unique_ptr<Layer> layer;
  std::vector<int32_t> inputs;  // node indices; model input k is -(k + 1)
  Shape out_shape;              // per example
  std::vector<int32_t> params;  // indices into Model::params()
  int32_t consumers = 0;        // nodes (and model outputs) that read this node's output
  std::unique_ptr<Placement> placement;
};

// The per-node results of a forward pass that a backward pass needs.
struct Activations {
  std::vector<Array> inputs;  // the model inputs
  std::vector<Array> out;     // per node
  std::vector<Saved> saved;   // per node
};

class Model {
 public:
  // Parses and builds a model; throws nnrt::Error (NNRT_ERR_INVALID_ARGUMENT for config errors,
  // NNRT_ERR_SHAPE for shapes that do not fit, naming the layer).
  static std::shared_ptr<Model> create(std::shared_ptr<Context> ctx, const Json &config);

  Context &ctx() const { return *ctx_; }
  const std::shared_ptr<Context> &context_ptr() const { return ctx_; }
  const Json &config() const { return config_; }
  const std::vector<Node> &nodes() const { return nodes_; }
  const std::vector<Shape> &input_shapes() const { return input_shapes_; }
  int32_t output_node() const { return outputs_.front(); }
  const std::vector<int32_t> &outputs() const { return outputs_; }
  // The output layer (activation + loss) that training uses, or NULL if the model has none.
  const OutputLayer *output_layer() const;

  std::vector<Param> &params() { return params_; }
  const std::vector<Param> &params() const { return params_; }
  int64_t param_count() const;
  const Param *find_param(const std::string &name) const;

  // Readers (predict, get_param, summary) take it shared; writers (training, set_param) exclusive.
  WriterPreferringSharedMutex &lock() const { return lock_; }
  // The lock taken exclusively by a caller about to write parameters in place: parameters shared
  // with other models (share()) are copied for this one first (copy on write), and so are those in
  // memory nnrt does not own (a checkpoint's mapping, see load()).
  std::unique_lock<WriterPreferringSharedMutex> lock_for_writing();

  // Another model of this config whose parameters are this one's memory (nnrt_model_share).
  std::shared_ptr<Model> share() const;

  // Inference on a batch [N, input...] of a model of one input: returns the first output.
  // Thread-safe. Replays the prediction plan of x's layout (predict_plan.h), made at the first call
  // with that layout.
  Array predict(const Array &x) const;
  // Inference on one batch per model input (input k [N, input k's shape...], the same N): returns
  // every output, in the config's "outputs" order, F32 and row-major.
  std::vector<Array> predict(const std::vector<Array> &xs) const;
  // predict() written into `out` (nnrt_model_predict_into): F32, shaped as output_shape() says,
  // on the model's device; written in place by the plan's last op where the layouts allow.
  void predict_into(const Array &x, const Array &out) const;
  // The prediction's shape for `batch` examples: [batch, <the first output's shape>].
  Shape output_shape(int64_t batch) const;
  // The same through the layers, op by op, without a plan: what plans are checked against.
  std::vector<Array> predict_unplanned(const std::vector<Array> &xs) const;
  Array predict_unplanned(const Array &x) const { return predict_unplanned(std::vector<Array>{x}).front(); }
  // How many input layouts have a plan that replays.
  size_t plan_count() const { return plans_->size(); }

  // The current parameter values, converted to `dtype` for the floats that a layer computes in
  // that dtype (batchnorm statistics stay F32).
  std::vector<Array> params_as(nnrt_dtype dtype) const;
  // The same for other values of the parameters (a data-parallel replica's), one per parameter.
  std::vector<Array> params_as(nnrt_dtype dtype, const std::vector<Array> &values) const;

  // A full forward pass keeping what backward needs. `params` as params_as() gives them.
  Activations forward(Pass &pass, const std::vector<Array> &inputs, const std::vector<Array> &params) const;

  // Back-propagates `grad` (the gradient with respect to node `from`'s output; for an output
  // layer, with respect to its pre-activation) and returns one gradient per parameter (undefined
  // for parameters that got none and for state).
  // `on_grad`, when given, is called with each parameter's gradient (index, gradient) as soon as its
  // layer's backward has run, last layers first: distributed training starts sending them then.
  std::vector<Array> backward(Pass &pass, const Activations &acts, const std::vector<Array> &params, int32_t from,
                              const Array &grad,
                              const std::function<void(size_t, const Array &)> &on_grad = nullptr) const;

  // Checkpoints (model_checkpoint.cpp): a safetensors file with the config in its metadata.
  void save(const std::string &path) const;
  // On a backend whose memory is host memory, and unless the context option "map_checkpoints" is
  // false, the file is mapped (io/file_bytes.h) and each parameter is a view of its bytes in the
  // mapping (where they are aligned for F32): no copy, and models loaded from one file share the
  // page cache's pages. Otherwise parameters are copied.
  static std::shared_ptr<Model> load(std::shared_ptr<Context> ctx, const std::string &path);

  // The summary JSON of nnrt_model_summary.
  std::string summary() const;

  // Checks a batch against the model's input: rank, per-example dims, a numeric dtype; refuses a
  // model of several inputs (NNRT_ERR_INVALID_ARGUMENT, naming them).
  void check_input(const Array &x, const char *what) const;
  // The same for one batch per input, all of the same examples.
  void check_inputs(const std::vector<Array> &xs, const char *what) const;
  const std::vector<std::string> &input_names() const { return input_names_; }
  // "name [dims], ..." for messages.
  std::string input_list() const;
  // Refuses a model of several inputs (NNRT_ERR_UNSUPPORTED) for `what`, which its datasets,
  // batches or formats cannot feed yet.
  void require_one_input(const char *what) const;

  // For passes over the nodes (here and in decoder.cpp): a node's inputs among the model inputs and
  // the node outputs so far, and its parameters among `params`.
  std::vector<Array> gather_inputs(const Node &node, const std::vector<Array> &model_inputs,
                                   const std::vector<Array> &outs) const;
  std::vector<Array> node_params(const Node &node, const std::vector<Array> &params) const;

 private:
  Model() = default;
  // Building, in order: the input shape and seed, the layers, the graph's order and outputs, then
  // shapes and initial parameters (model.cpp). Each throws nnrt::Error naming the config key.
  // Where build() takes parameter number `index`'s value from instead of initialising it (a shared
  // model's source, a checkpoint's); `p` has its name and spec.
  // build() ends by predicting one example, which proves the graph runs and records the forward
  // placement; with `placed_like` (a model of the same config and parameters) it copies that one's.
  using ParamSource = std::function<Array(size_t index, const Param &p)>;
  void build(const Json &config, const ParamSource &source = nullptr, const Model *placed_like = nullptr);
  uint64_t read_input(JsonReader &top);  // returns the seed of the parameters' initialisation
  // Moves the nodes into nodes_ in `order`, inputs renumbered; returns each config index's position.
  std::vector<int32_t> adopt_in_order(std::vector<Node> parsed, const std::vector<std::vector<int32_t>> &deps,
                                      const std::vector<int32_t> &order);
  void read_outputs(JsonReader &top, bool sequential, const std::map<std::string, int32_t> &by_name,
                    const std::vector<int32_t> &position);
  void infer_shapes_and_init(uint64_t seed, const ParamSource &source);
  void check_input(const Array &x, size_t k, const char *what) const;
  // Takes the lock shared and predicts from checked inputs; `into` as PredictPlans::predict's.
  std::vector<Array> predict_checked(const std::vector<Array> &xs, const Array *into) const;
  // predict's pass, the caller holding the lock shared: every output.
  std::vector<Array> run_layers(const std::vector<Array> &xs) const;
  // Vouches for the parameters' bytes to the backends (weights_version.h), the caller holding the
  // lock shared.
  backend::WeightsVersionScope stable_params() const;

  std::shared_ptr<Context> ctx_;
  Json config_;
  std::vector<std::string> input_names_;
  std::vector<Shape> input_shapes_;
  std::vector<Node> nodes_;  // in topological order
  std::vector<int32_t> outputs_;
  std::vector<Param> params_;
  mutable WriterPreferringSharedMutex lock_;
  std::shared_ptr<PredictPlans> plans_ = std::make_shared<PredictPlans>();
  // Held by every model whose parameters are the same memory (share()); NULL or alone: its own.
  // Read and replaced under lock_ held exclusively (and shared_token_mutex_ for share()).
  mutable std::shared_ptr<const int> share_token_;
  mutable std::mutex share_token_mutex_;
};

}  // namespace nnrt::model
