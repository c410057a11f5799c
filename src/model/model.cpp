#include "model/model.h"

#include <algorithm>
#include <map>

#include "core/checked_math.h"
#include "core/dtype.h"
#include "core/error.h"
#include "model/layers/output.h"
#include "model/param_storage.h"

namespace nnrt::model {

namespace {

uint64_t mix_seed(uint64_t seed, uint64_t salt) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (salt + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Json shape_json(const Shape &s) { return Json(s.vec()); }

}  // namespace

std::string Layer::where() const { return cat("layer ", index, " (", type, " '", name, "')"); }

Array Layer::forward_step(Pass &, const std::vector<Array> &, const std::vector<Array> &, StepState &, int64_t) const {
  fail(NNRT_ERR_INTERNAL, where(), ": forward_step called on a layer without a cached incremental path");
}

Array as_dtype(Context &ctx, const Array &x, nnrt_dtype dtype) {
  return x.dtype() == dtype ? x : ops::cast(ctx, x, dtype);
}

Shape with_batch(int64_t n, const Shape &example) {
  Shape s;
  s.rank = example.rank + 1;
  s.dims[0] = n;
  for (int32_t i = 0; i < example.rank; ++i) s.dims[i + 1] = example.dims[i];
  return s;
}

// ---- placement ------------------------------------------------------------------------------

void Placement::record(int32_t kind, const std::string &backend, bool fallback) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string op = backend::op_kind_name(kind);
  (backward_ ? backward_ops_ : forward_)[op].insert(backend);
  if (fallback) fallbacks_.insert(op);
}

void Placement::copy_forward(const Placement &from) {
  std::scoped_lock lock(mutex_, from.mutex_);
  forward_ = from.forward_;
  fallbacks_ = from.fallbacks_;
}

Json Placement::to_json() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Json j = Json::object();
  j["forward"] = forward_;
  if (!backward_ops_.empty()) j["backward"] = backward_ops_;
  j["fallback"] = fallbacks_;
  return j;
}

// ---- building -------------------------------------------------------------------------------

std::shared_ptr<Model> Model::create(std::shared_ptr<Context> ctx, const Json &config) {
  std::shared_ptr<Model> m(new Model);
  m->ctx_ = std::move(ctx);
  m->config_ = config;
  m->build(config);
  return m;
}

namespace {

// The nodes as the config lists them, before the graph is ordered: layers with their inputs by name.
struct ParsedGraph {
  std::vector<Node> nodes;
  std::vector<std::vector<std::string>> inputs;  // per node
  std::map<std::string, int32_t> by_name;        // node name -> index in config order
};

// "layers" (a sequence) or "nodes" (a graph): exactly one, a non-empty list.
const Json &layer_list(JsonReader &top, bool &sequential) {
  sequential = top.has("layers");
  if (sequential == top.has("nodes")) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "config: give either \"layers\" (a sequence) or \"nodes\" (a graph), not ",
         sequential ? "both" : "neither");
  }
  const Json &list = top.raw(sequential ? "layers" : "nodes");
  if (!list.is_array() || list.empty()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "config.", sequential ? "layers" : "nodes", ": expected a non-empty list of layers");
  }
  return list;
}

// Makes every layer; in a sequence each layer's input is the one before it, in a graph the named
// ones, resolved once all names are known.
ParsedGraph parse_nodes(const Json &list, bool sequential, const std::vector<std::string> &input_names) {
  ParsedGraph g;
  auto is_input = [&](const std::string &n) { return std::find(input_names.begin(), input_names.end(), n) != input_names.end(); };
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = cat("config.", sequential ? "layers" : "nodes", "[", i, "]");
    if (!list[i].is_object()) fail(NNRT_ERR_INVALID_ARGUMENT, where, ": expected a layer object, got ", json_excerpt(list[i]));
    JsonReader r(list[i], where);
    std::string type = r.require_string("type");
    std::string name = r.get_string("name", sequential ? cat("layer", i) : "");
    if (name.empty()) fail(NNRT_ERR_INVALID_ARGUMENT, where, ".name is required in a graph (\"nodes\") config");
    if (name == "input" || is_input(name) || g.by_name.count(name)) {
      fail(NNRT_ERR_INVALID_ARGUMENT, where, ".name: \"", name, "\" is ",
           g.by_name.count(name) ? "used twice" : (name == "input" ? "reserved" : "the name of a model input"));
    }
    std::vector<std::string> inputs;
    if (sequential) {
      if (r.has("inputs")) fail(NNRT_ERR_INVALID_ARGUMENT, where, ".inputs: only graph (\"nodes\") configs name inputs");
      if (input_names.size() != 1) fail(NNRT_ERR_INVALID_ARGUMENT, "config: a model of several inputs is a graph (\"nodes\")");
      inputs = {i == 0 ? input_names[0] : g.nodes.back().layer->name};
    } else {
      inputs = r.get_string_list("inputs");
      if (inputs.empty()) fail(NNRT_ERR_INVALID_ARGUMENT, where, ".inputs is required: a list of node or model input names");
    }
    Node node;
    node.layer = make_layer(type, r);
    r.finish();
    node.layer->name = name;
    node.layer->type = type;
    for (auto it = list[i].begin(); it != list[i].end(); ++it) {
      if (it.key() != "type" && it.key() != "name" && it.key() != "inputs") node.layer->attributes[it.key()] = it.value();
    }
    g.by_name[name] = static_cast<int32_t>(g.nodes.size());
    g.nodes.push_back(std::move(node));
    g.inputs.push_back(std::move(inputs));
  }
  return g;
}

// Each node's inputs as indices in config order; model input k is -(k + 1).
std::vector<std::vector<int32_t>> resolve_inputs(const ParsedGraph &g, const std::vector<std::string> &input_names) {
  std::vector<std::vector<int32_t>> deps(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string &in : g.inputs[i]) {
      auto model_input = std::find(input_names.begin(), input_names.end(), in);
      if (model_input != input_names.end()) {
        deps[i].push_back(-static_cast<int32_t>(model_input - input_names.begin()) - 1);
        continue;
      }
      auto it = g.by_name.find(in);
      if (it == g.by_name.end()) {
        fail(NNRT_ERR_INVALID_ARGUMENT, "config.nodes[", i, "] ('", g.nodes[i].layer->name, "'): unknown input \"", in, "\"");
      }
      deps[i].push_back(it->second);
    }
  }
  return deps;
}

// An order in which every node comes after its inputs (config order where the graph allows).
std::vector<int32_t> topological_order(const std::vector<std::vector<int32_t>> &deps) {
  std::vector<int32_t> order;
  std::vector<bool> placed(deps.size(), false);
  while (order.size() < deps.size()) {
    bool progress = false;
    for (size_t i = 0; i < deps.size(); ++i) {
      if (placed[i]) continue;
      bool ready = std::all_of(deps[i].begin(), deps[i].end(), [&](int32_t d) { return d < 0 || placed[d]; });
      if (!ready) continue;
      placed[i] = true;
      order.push_back(static_cast<int32_t>(i));
      progress = true;
    }
    if (!progress) fail(NNRT_ERR_INVALID_ARGUMENT, "config.nodes: the graph has a cycle");
  }
  return order;
}

}  // namespace

std::shared_ptr<Model> Model::share() const {
  std::shared_lock<WriterPreferringSharedMutex> read(lock_);
  std::shared_ptr<Model> m(new Model);
  m->ctx_ = ctx_;
  m->config_ = config_;
  m->build(config_, [this](size_t i, const Param &) { return params_.at(i).value; }, this);  // same config, same params
  std::lock_guard<std::mutex> token(share_token_mutex_);
  if (!share_token_) share_token_ = std::make_shared<const int>(0);
  m->share_token_ = share_token_;
  return m;
}

std::unique_lock<WriterPreferringSharedMutex> Model::lock_for_writing() {
  std::unique_lock<WriterPreferringSharedMutex> write(lock_);
  std::lock_guard<std::mutex> token(share_token_mutex_);
  bool shared = share_token_ && share_token_.use_count() > 1;
  for (Param &p : params_) {
    const Storage &old = *p.value.storage();
    if (shared) {
      // Same layout (a padded parameter stays padded), so that prediction plans keep replaying.
      Array block = Array::allocate(ctx_->device(), p.value.dtype(), Shape{int64_t(old.bytes / dtype_size(p.value.dtype()))});
      Array copy = block.view(p.value.shape(), p.value.strides(), p.value.offset());
      ops::copy_into(*ctx_, p.value, copy);
      p.value = copy;
    } else if (old.lent) {
      // A view of a mapped checkpoint: into memory of the model's own, in the layout training wants
      // (prediction plans see the new layout and record again).
      Array copy = new_param(*ctx_, p.value.dtype(), p.value.shape());
      ops::copy_into(*ctx_, p.value, copy);
      p.value = copy;
    }
  }
  share_token_.reset();
  return write;
}

void Model::build(const Json &config, const ParamSource &source, const Model *placed_like) {
  JsonReader top(config, "config");
  uint64_t seed = read_input(top);
  top.get_string("name", "");
  bool sequential = false;
  const Json &list = layer_list(top, sequential);
  ParsedGraph graph = parse_nodes(list, sequential, input_names_);
  std::vector<std::vector<int32_t>> deps = resolve_inputs(graph, input_names_);
  std::vector<int32_t> order = topological_order(deps);
  // Every named input must be given to nnrt_model_predict_many: one that nothing reads is a mistake.
  for (size_t k = 0; k < input_names_.size() && config.contains("inputs"); ++k) {
    bool read = std::any_of(deps.begin(), deps.end(), [&](const std::vector<int32_t> &d) {
      return std::find(d.begin(), d.end(), -static_cast<int32_t>(k) - 1) != d.end();
    });
    if (!read) fail(NNRT_ERR_INVALID_ARGUMENT, "config.inputs[", k, "] '", input_names_[k], "': no node reads it");
  }
  std::vector<int32_t> position = adopt_in_order(std::move(graph.nodes), deps, order);
  read_outputs(top, sequential, graph.by_name, position);
  top.finish();
  infer_shapes_and_init(seed, source);
  if (placed_like) {
    // The same config, parameters and context as a model that ran: it would run the same ops.
    for (size_t i = 0; i < nodes_.size(); ++i) nodes_[i].placement->copy_forward(*placed_like->nodes_[i].placement);
    return;
  }
  // One example through the model: proves the graph runs, and fills in the forward placement.
  std::vector<Array> zeros;
  for (const Shape &s : input_shapes_) zeros.push_back(ops::zeros(*ctx_, NNRT_DTYPE_F32, with_batch(1, s)));
  predict(zeros);
}

namespace {

// One example's shape from a config list of dims; `where` names it in messages.
Shape example_shape(const std::vector<int64_t> &dims, const std::string &where, const Json &raw) {
  if (dims.empty() || dims.size() >= NNRT_MAX_DIMS) {
    fail(NNRT_ERR_INVALID_ARGUMENT, where, ": expected 1 to ", NNRT_MAX_DIMS - 1, " dims, got ", dims.size());
  }
  for (int64_t d : dims) {
    if (d <= 0) fail(NNRT_ERR_INVALID_ARGUMENT, where, ": dims must be positive, got ", json_excerpt(raw));
  }
  Shape s = Shape::of(dims);
  checked_numel(s, where.c_str());
  return s;
}

}  // namespace

uint64_t Model::read_input(JsonReader &top) {
  if (top.has("input") == top.has("inputs")) {
    fail(NNRT_ERR_INVALID_ARGUMENT, top.has("input") ? "config: give either \"input\" or \"inputs\", not both"
                                                     : "config.input is required: the shape of one example, e.g. [1, 28, 28] "
                                                       "(or \"inputs\": a list of named inputs)");
  }
  input_names_.clear();
  input_shapes_.clear();
  if (top.has("input")) {
    input_names_ = {"input"};
    input_shapes_ = {example_shape(top.get_int_list("input", {}), "config.input", top.raw("input"))};
  } else {
    const Json &list = top.raw("inputs");
    if (!list.is_array() || list.empty() || list.size() > kMaxModelInputs) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "config.inputs: expected a list of 1 to ", kMaxModelInputs,
           " inputs ({\"name\": ..., \"shape\": [...]}), got ", json_excerpt(list));
    }
    for (size_t k = 0; k < list.size(); ++k) {
      std::string where = cat("config.inputs[", k, "]");
      if (!list[k].is_object()) fail(NNRT_ERR_INVALID_ARGUMENT, where, ": expected an object, got ", json_excerpt(list[k]));
      JsonReader r(list[k], where);
      std::string name = r.require_string("name");
      if (name.empty()) fail(NNRT_ERR_INVALID_ARGUMENT, where, ".name: expected a non-empty name");
      if (std::find(input_names_.begin(), input_names_.end(), name) != input_names_.end()) {
        fail(NNRT_ERR_INVALID_ARGUMENT, where, ".name: \"", name, "\" is used twice");
      }
      if (!r.has("shape")) fail(NNRT_ERR_INVALID_ARGUMENT, where, ".shape is required: the shape of one example");
      input_shapes_.push_back(example_shape(r.get_int_list("shape", {}), where + ".shape", r.raw("shape")));
      r.finish();
      input_names_.push_back(std::move(name));
    }
  }
  return top.has("seed") ? static_cast<uint64_t>(top.get_int("seed", 0, 0)) : ctx_->next_seed();
}

std::vector<int32_t> Model::adopt_in_order(std::vector<Node> parsed, const std::vector<std::vector<int32_t>> &deps,
                                           const std::vector<int32_t> &order) {
  std::vector<int32_t> position(parsed.size(), -1);
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int32_t>(k);
  for (int32_t i : order) {
    Node node = std::move(parsed[i]);
    for (int32_t d : deps[i]) node.inputs.push_back(d < 0 ? d : position[d]);
    nodes_.push_back(std::move(node));
  }
  return position;
}

void Model::read_outputs(JsonReader &top, bool sequential, const std::map<std::string, int32_t> &by_name,
                         const std::vector<int32_t> &position) {
  if (sequential) {
    outputs_ = {static_cast<int32_t>(nodes_.size() - 1)};
    return;
  }
  std::vector<std::string> outs = top.get_string_list("outputs");
  if (outs.empty()) outs = {nodes_.back().layer->name};
  for (const std::string &o : outs) {
    auto it = by_name.find(o);
    if (it == by_name.end()) fail(NNRT_ERR_INVALID_ARGUMENT, "config.outputs: unknown node \"", o, "\"");
    if (std::find(outputs_.begin(), outputs_.end(), position[it->second]) != outputs_.end()) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "config.outputs: \"", o, "\" is listed twice");
    }
    outputs_.push_back(position[it->second]);
  }
}

void Model::infer_shapes_and_init(uint64_t seed, const ParamSource &source) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Node &node = nodes_[i];
    node.layer->index = static_cast<int32_t>(i);
    node.layer->seed = mix_seed(seed, 1000003 + i);
    std::vector<Shape> in_shapes;
    for (int32_t d : node.inputs) in_shapes.push_back(d < 0 ? input_shapes_[-d - 1] : nodes_[d].out_shape);
    node.out_shape = node.layer->build(in_shapes);
    // A layer's size attributes (units, padding, kernel) may make an output too large to count;
    // refused here, so that no later size computation starts from a wrapped number.
    checked_numel(node.out_shape, ("layer \"" + node.layer->name + "\" output").c_str());
    for (int32_t d : node.inputs)
      if (d >= 0) nodes_[d].consumers++;
    node.placement = std::make_unique<Placement>();
    for (const ParamSpec &spec : node.layer->param_specs()) {
      Param p;
      p.name = node.layer->name + "." + spec.suffix;
      p.spec = spec;
      p.node = static_cast<int32_t>(i);
      if (source) {
        p.value = source(params_.size(), p);
      } else {
        p.value = spec.dtype != NNRT_DTYPE_F32
                      ? ops::zeros(*ctx_, spec.dtype, spec.shape)
                      : param_storage(*ctx_, initialise(*ctx_, spec.init, spec.shape, spec.fan_in, spec.fan_out,
                                                        mix_seed(seed, params_.size())));
      }
      node.params.push_back(static_cast<int32_t>(params_.size()));
      params_.push_back(std::move(p));
    }
  }
  for (int32_t o : outputs_) nodes_[o].consumers++;
}

const OutputLayer *Model::output_layer() const {
  return dynamic_cast<const OutputLayer *>(nodes_[outputs_.front()].layer.get());
}

int64_t Model::param_count() const {
  int64_t n = 0;
  for (const Param &p : params_) n += p.value.numel();
  return n;
}

const Param *Model::find_param(const std::string &name) const {
  for (const Param &p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

// ---- passes ---------------------------------------------------------------------------------

void Model::check_input(const Array &x, const char *what) const {
  if (input_shapes_.size() != 1) {
    fail(NNRT_ERR_INVALID_ARGUMENT, what, ": the model takes ", input_shapes_.size(), " inputs (", input_list(),
         "), and this call gives one; predict with nnrt_model_predict_many");
  }
  check_input(x, 0, what);
}

void Model::check_input(const Array &x, size_t k, const char *what) const {
  Shape expected = with_batch(x.rank() > 0 ? x.dim(0) : 0, input_shapes_[k]);
  std::string which = input_shapes_.size() == 1 ? std::string(what) : cat(what, ": input ", k, " '", input_names_[k], "'");
  if (x.shape() != expected) {
    std::string want = to_string(input_shapes_[k]);
    fail(NNRT_ERR_SHAPE, which, ": expected [N, ", want.substr(1), " (a batch of examples shaped ", want, "), got ",
         to_string(x.shape()));
  }
}

void Model::check_inputs(const std::vector<Array> &xs, const char *what) const {
  if (xs.size() != input_shapes_.size()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, what, ": the model takes ", input_shapes_.size(), " input", input_shapes_.size() == 1 ? "" : "s",
         " (", input_list(), "), got ", xs.size());
  }
  for (size_t k = 0; k < xs.size(); ++k) check_input(xs[k], k, what);
  for (size_t k = 1; k < xs.size(); ++k) {
    if (xs[k].dim(0) != xs[0].dim(0)) {
      fail(NNRT_ERR_SHAPE, what, ": every input holds the same examples; input 0 '", input_names_[0], "' has ", xs[0].dim(0),
           " and input ", k, " '", input_names_[k], "' has ", xs[k].dim(0));
    }
  }
}

void Model::require_one_input(const char *what) const {
  if (input_shapes_.size() != 1) {
    fail(NNRT_ERR_UNSUPPORTED, what, ": the model takes ", input_shapes_.size(), " inputs (", input_list(), "); ", what,
         " takes models of one input in this version");
  }
}

std::string Model::input_list() const {
  std::string s;
  for (size_t k = 0; k < input_names_.size(); ++k) s += cat(k ? ", " : "", input_names_[k], " ", to_string(input_shapes_[k]));
  return s;
}

std::vector<Array> Model::params_as(nnrt_dtype dtype) const {
  std::vector<Array> values;
  for (const Param &p : params_) values.push_back(p.value);
  return params_as(dtype, values);
}

std::vector<Array> Model::params_as(nnrt_dtype dtype, const std::vector<Array> &values) const {
  if (values.size() != params_.size()) {
    fail(NNRT_ERR_INTERNAL, "params_as: ", values.size(), " values for ", params_.size(), " parameters");
  }
  std::vector<Array> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Param &p = params_[i];
    bool keep_f32 = !p.spec.trainable || nodes_[p.node].layer->type == "batchnorm";
    out.push_back(keep_f32 ? values[i] : as_dtype(*ctx_, values[i], dtype));
  }
  return out;
}

std::vector<Array> Model::gather_inputs(const Node &node, const std::vector<Array> &model_inputs,
                                        const std::vector<Array> &outs) const {
  std::vector<Array> in;
  for (int32_t d : node.inputs) in.push_back(d < 0 ? model_inputs[-d - 1] : outs[d]);
  return in;
}

std::vector<Array> Model::node_params(const Node &node, const std::vector<Array> &params) const {
  std::vector<Array> p;
  for (int32_t id : node.params) p.push_back(params[id]);
  return p;
}

Array Model::predict(const Array &x) const {
  check_input(x, "predict");
  return predict_checked({x}, nullptr).front();
}

std::vector<Array> Model::predict(const std::vector<Array> &xs) const {
  check_inputs(xs, "predict");
  return predict_checked(xs, nullptr);
}

std::vector<Array> Model::predict_checked(const std::vector<Array> &xs, const Array *into) const {
  std::shared_lock<WriterPreferringSharedMutex> read(lock_);
  backend::WeightsVersionScope stable = stable_params();
  return plans_->predict(*ctx_, xs, params_, [&] { return run_layers(xs); }, into);
}

void Model::predict_into(const Array &x, const Array &out) const {
  check_input(x, "predict");
  Shape expected = output_shape(x.dim(0));
  if (out.dtype() != NNRT_DTYPE_F32) {
    fail(NNRT_ERR_DTYPE, "output is ", dtype_name(out.dtype()), "; the prediction is f32");
  }
  if (out.shape() != expected) {
    fail(NNRT_ERR_SHAPE, "output is ", to_string(out.shape()), "; the prediction for this input is ", to_string(expected));
  }
  // An output in the input's memory (the caller passed one buffer as both) is written only after
  // the whole prediction is made: the plan's last op must not write what earlier ones still read.
  const Storage &in_mem = *x.storage(), &out_mem = *out.storage();
  const char *in_begin = static_cast<const char *>(in_mem.ptr), *out_begin = static_cast<const char *>(out_mem.ptr);
  bool overlap = in_begin < out_begin + out_mem.bytes && out_begin < in_begin + in_mem.bytes;
  Array y = predict_checked({x}, overlap ? nullptr : &out).front();
  if (y.storage() != out.storage() || y.offset() != out.offset()) ops::copy_into(*ctx_, y, out);
}

Shape Model::output_shape(int64_t batch) const {
  return with_batch(batch, nodes_[outputs_.front()].out_shape);
}

std::vector<Array> Model::predict_unplanned(const std::vector<Array> &xs) const {
  check_inputs(xs, "predict");
  std::shared_lock<WriterPreferringSharedMutex> read(lock_);
  backend::WeightsVersionScope stable = stable_params();
  return run_layers(xs);
}

backend::WeightsVersionScope Model::stable_params() const {
  std::vector<const Storage *> storages;
  for (const Param &p : params_) storages.push_back(p.value.storage().get());
  return backend::WeightsVersionScope(lock_.generation(), std::move(storages));
}

std::vector<Array> Model::run_layers(const std::vector<Array> &xs) const {
  nnrt_dtype dtype = ctx_->options().default_dtype;
  Pass pass{*ctx_, false, 0, dtype, {}};
  std::vector<Array> params = params_as(dtype);
  std::vector<Array> inputs;
  for (const Array &x : xs) inputs.push_back(as_dtype(*ctx_, x, dtype));
  std::vector<Array> outs(nodes_.size());
  std::vector<int32_t> remaining(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) remaining[i] = nodes_[i].consumers;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node &node = nodes_[i];
    Saved saved;
    {
      backend::PlacementScope scope(node.placement.get());
      outs[i] = node.layer->forward(pass, gather_inputs(node, inputs, outs), node_params(node, params), saved);
    }
    // Inference keeps an activation only until its last reader has run.
    for (int32_t d : node.inputs)
      if (d >= 0 && --remaining[d] == 0) outs[d] = Array();
  }
  // Row-major for the caller, whatever layout the last layer left (inference keeps images
  // channels-last between layers; see conv2d.cpp).
  std::vector<Array> results;
  for (int32_t o : outputs_) results.push_back(ops::contiguous(*ctx_, as_dtype(*ctx_, outs[o], NNRT_DTYPE_F32)));
  return results;
}

Activations Model::forward(Pass &pass, const std::vector<Array> &inputs, const std::vector<Array> &params) const {
  Activations a;
  a.inputs = inputs;
  a.out.resize(nodes_.size());
  a.saved.resize(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node &node = nodes_[i];
    node.placement->set_backward(false);
    backend::PlacementScope scope(node.placement.get());
    a.out[i] = node.layer->forward(pass, gather_inputs(node, a.inputs, a.out), node_params(node, params), a.saved[i]);
  }
  return a;
}

std::vector<Array> Model::backward(Pass &pass, const Activations &acts, const std::vector<Array> &params, int32_t from,
                                   const Array &grad, const std::function<void(size_t, const Array &)> &on_grad) const {
  std::vector<Array> grads(nodes_.size()), param_grads(params_.size());
  grads[from] = grad;
  for (int32_t i = from; i >= 0; --i) {
    if (!grads[i].defined()) continue;
    const Node &node = nodes_[i];
    std::vector<Array> in = gather_inputs(node, acts.inputs, acts.out);
    std::vector<Array> din(in.size()), dparams(node.params.size());
    pass.need_input_grad.assign(in.size(), false);
    for (size_t k = 0; k < in.size(); ++k) pass.need_input_grad[k] = node.inputs[k] >= 0;
    {
      node.placement->set_backward(true);
      backend::PlacementScope scope(node.placement.get());
      node.layer->backward(pass, in, node_params(node, params), acts.out[i], acts.saved[i], grads[i], din, dparams);
      node.placement->set_backward(false);
    }
    grads[i] = Array();
    for (size_t k = 0; k < in.size(); ++k) {
      int32_t d = node.inputs[k];
      if (d < 0 || !din[k].defined()) continue;
      // A node read by several others sums their gradients.
      grads[d] = grads[d].defined() ? ops::add(*ctx_, grads[d], din[k]) : din[k];
    }
    for (size_t j = 0; j < node.params.size(); ++j) {
      if (dparams[j].defined()) param_grads[node.params[j]] = dparams[j];
      if (on_grad) on_grad(static_cast<size_t>(node.params[j]), param_grads[node.params[j]]);
    }
  }
  return param_grads;
}

// ---- summary --------------------------------------------------------------------------------

std::string Model::summary() const {
  std::shared_lock<WriterPreferringSharedMutex> read(lock_);
  Json j;
  j["input"] = shape_json(input_shapes_[0]);
  Json inputs = Json::array();
  for (size_t k = 0; k < input_shapes_.size(); ++k) inputs.push_back({{"name", input_names_[k]}, {"shape", shape_json(input_shapes_[k])}});
  j["inputs"] = inputs;
  j["backend"] = ctx_->device()->name();
  j["dtype"] = dtype_name(ctx_->options().default_dtype);
  Json layers = Json::array();
  int64_t total = 0, trainable = 0;
  for (const Node &node : nodes_) {
    Json l;
    l["name"] = node.layer->name;
    l["type"] = node.layer->type;
    Json ins = Json::array();
    for (int32_t d : node.inputs) ins.push_back(d < 0 ? input_names_[-d - 1] : nodes_[d].layer->name);
    l["inputs"] = ins;
    l["output_shape"] = shape_json(node.out_shape);
    int64_t count = 0;
    Json params = Json::array();
    for (int32_t id : node.params) {
      const Param &p = params_[id];
      count += p.value.numel();
      if (p.spec.trainable) trainable += p.value.numel();
      params.push_back({{"name", p.name}, {"shape", shape_json(p.value.shape())}, {"trainable", p.spec.trainable}});
    }
    total += count;
    l["param_count"] = count;
    l["params"] = params;
    l["attributes"] = node.layer->attributes;
    l["ops"] = node.placement->to_json();
    layers.push_back(l);
  }
  j["layers"] = layers;
  Json outs = Json::array();
  for (int32_t o : outputs_) outs.push_back(nodes_[o].layer->name);
  j["outputs"] = outs;
  j["total_params"] = total;
  j["trainable_params"] = trainable;
  return j.dump();
}

}  // namespace nnrt::model
