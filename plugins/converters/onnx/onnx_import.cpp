#include "onnx_import.h"

#include <algorithm>
#include <set>

#include "onnx_import_pattern.h"


namespace nnrt::io::onnx_format {

namespace {

// The largest example (input or activation) an imported model may declare, in elements: building
// the model runs one example through it, so a huge declared dim must be refused, not allocated.
constexpr int64_t kMaxExampleElements = int64_t(1) << 28;

const std::map<std::string, Importer::Translator> &translators() {
  static const std::map<std::string, Importer::Translator> table = [] {
    std::map<std::string, Importer::Translator> t;
    register_conv_ops(t);
    register_math_ops(t);
    register_shape_ops(t);
    register_recurrent_ops(t);
    register_fold_ops(t);
    register_slice_ops(t);
    register_quantize_ops(t);
    return t;
  }();
  return table;
}

}  // namespace

ImportOptions parse_import_options(const Json &options) {
  ImportOptions o;
  JsonReader r(options, "options");
  o.batch = r.get_bool("batch", true);
  o.batch_axis = static_cast<int32_t>(r.get_int("batch_axis", 0, 0, NNRT_MAX_DIMS - 1));
  if (!o.batch && o.batch_axis != 0) fail(NNRT_ERR_INVALID_ARGUMENT, "options.batch_axis: given with \"batch\": false");
  o.loss = r.get_string("loss", "");
  o.input = r.get_int_list("input", {});
  for (int64_t d : o.input) {
    if (d <= 0) fail(NNRT_ERR_INVALID_ARGUMENT, "options.input: dims must be positive, got ", d);
  }
  if (o.input.size() >= NNRT_MAX_DIMS) fail(NNRT_ERR_INVALID_ARGUMENT, "options.input: at most ", NNRT_MAX_DIMS - 1, " dims");
  r.finish();
  return o;
}

Importer::Importer(const nnrt_onnx_host &host, onnx::ModelProto &model, std::string model_dir, ImportOptions options)
    : host_(host), model_(model), model_dir_(std::move(model_dir)), options_(std::move(options)) {}

std::string Importer::where() const {
  const onnx::NodeProto &n = *node_;
  std::string name = n.name().empty() ? (n.output_size() > 0 ? n.output(0) : std::string("")) : n.name();
  return cat("node ", node_index_, " '", name, "' (", n.op_type(), ", opset ", opset_, ")");
}

bool Importer::has_input(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }

const Value &Importer::value(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end()) corrupt("input \"", name, "\" is not a graph input, an initializer or an earlier node's output");
  return it->second;
}

const Value &Importer::input(int i) const {
  if (!has_input(i)) corrupt("input ", i, " is missing");
  return value(node_->input(i));
}

const Value &Importer::constant_value(int i, const char *what) const {
  const Value &v = input(i);
  if (!v.constant) unsupported(what, " (input ", i, ", \"", node_->input(i), "\") must be a constant (an initializer)");
  return v;
}

const HostTensor &Importer::constant_input(int i, const char *what) const {
  const Value &v = constant_value(i, what);
  if (v.batch_sized || v.filled) {
    unsupported(what, " (input ", i, ", \"", node_->input(i), "\") depends on the batch size, which nnrt knows only at "
                "run time");
  }
  return v.tensor;
}

HostTensor Importer::take_constant(int i, const char *what) {
  constant_input(i, what);
  const std::string &name = node_->input(i);
  Value &v = values_.at(name);
  if (readers_[name] > 1) return v.tensor;
  HostTensor t;
  t.name = v.tensor.name;
  t.elem_type = v.tensor.elem_type;
  t.dims = v.tensor.dims;
  t.bytes.swap(v.tensor.bytes);
  return t;
}

const Value &Importer::runtime_input(int i) const {
  const Value &v = input(i);
  if (v.constant) unsupported("input ", i, " (\"", node_->input(i), "\") is a constant; nnrt needs it computed from the model input");
  if (v.pending) {
    unsupported("input ", i, " (\"", node_->input(i), "\") is the 8-bit output of a QuantizeLinear; nnrt reads one only "
                "through a DequantizeLinear (the QDQ form), not with QLinear* operators");
  }
  check_batch_axis(node_->input(i), v);
  return v;
}

void Importer::check_batch_axis(const std::string &name, const Value &v) const {
  if (v.batch_axis == 0 || moved_batch_ok_) return;
  unsupported("\"", name, "\" has the batch in ONNX dim ", v.batch_axis, " (moved there by a Transpose, or a time-major "
              "input), and this op needs it in dim 0");
}

std::vector<int64_t> Importer::onnx_dims(const Value &v) const {
  if (v.constant) return v.filled ? v.fill_dims : v.tensor.dims;
  std::vector<int64_t> dims = v.shape.vec();
  if (options_.batch) dims.insert(dims.begin() + v.batch_axis, kBatchSize);
  return dims;
}

namespace {
const onnx::AttributeProto *find_attr(const onnx::NodeProto &n, const std::string &name) {
  for (const auto &a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
}  // namespace

bool Importer::has_attr(const std::string &name) const { return find_attr(*node_, name) != nullptr; }

int64_t Importer::attr_int(const std::string &name, int64_t fallback) const {
  const auto *a = find_attr(*node_, name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INT && !a->has_i()) corrupt("attribute ", name, " should be an int");
  return a->i();
}

double Importer::attr_float(const std::string &name, double fallback) const {
  const auto *a = find_attr(*node_, name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT && !a->has_f()) corrupt("attribute ", name, " should be a float");
  return a->f();
}

std::string Importer::attr_string(const std::string &name, const std::string &fallback) const {
  const auto *a = find_attr(*node_, name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::STRING && !a->has_s()) corrupt("attribute ", name, " should be a string");
  return a->s();
}

std::vector<int64_t> Importer::attr_ints(const std::string &name, const std::vector<int64_t> &fallback) const {
  const auto *a = find_attr(*node_, name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INTS && a->ints_size() == 0 && a->type() != onnx::AttributeProto::UNDEFINED) {
    corrupt("attribute ", name, " should be a list of ints");
  }
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

const onnx::TensorProto *Importer::attr_tensor(const std::string &name) const {
  const auto *a = find_attr(*node_, name);
  return a && a->has_t() ? &a->t() : nullptr;
}

void Importer::check_attrs(std::initializer_list<const char *> known) const {
  for (const auto &a : node_->attribute()) {
    bool ok = false;
    for (const char *k : known) ok = ok || a.name() == k;
    if (!ok) unsupported("attribute \"", a.name(), "\" is not supported");
  }
}

void Importer::check_outputs(int n) const {
  for (int i = n; i < node_->output_size(); ++i) {
    if (!node_->output(i).empty()) unsupported("output ", i, " (\"", node_->output(i), "\") is not supported");
  }
  if (node_->output_size() == 0 || node_->output(0).empty()) corrupt("the node has no output");
}

bool Importer::output_read(int i) const {
  if (i >= node_->output_size() || node_->output(i).empty()) return false;
  auto it = readers_.find(node_->output(i));
  return it != readers_.end() && it->second > 0;
}

int32_t Importer::example_axis(int64_t axis, int32_t onnx_rank) const {
  if (axis < -onnx_rank || axis >= onnx_rank) corrupt("axis ", axis, " is out of range for rank ", onnx_rank);
  int64_t a = axis < 0 ? axis + onnx_rank : axis;
  if (options_.batch) {
    if (a == 0) unsupported("axis ", axis, " is the batch dim; import with {\"batch\": false} if dim 0 is not a batch");
    --a;
  }
  return static_cast<int32_t>(a);
}

int32_t Importer::example_axis(const Value &v, int64_t axis) const {
  if (v.batch_axis == 0) return example_axis(axis, onnx_rank(v));
  int32_t rank = onnx_rank(v);
  if (axis < -rank || axis >= rank) corrupt("axis ", axis, " is out of range for rank ", rank);
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a == v.batch_axis) unsupported("axis ", axis, " is the batch dim");
  return static_cast<int32_t>(a < v.batch_axis ? a : a - 1);
}

Shape Importer::layer_shape(const std::string &type, const Json &attrs, const std::vector<Shape> &in_shapes) const {
  std::string text = attrs.dump();
  std::vector<const int64_t *> dims;
  std::vector<int32_t> ranks;
  for (const Shape &s : in_shapes) {
    dims.push_back(s.dims.data());
    ranks.push_back(s.rank);
  }
  int64_t out_dims[NNRT_MAX_DIMS] = {};
  int32_t out_rank = 0;
  char message[NNRT_ONNX_MESSAGE_SIZE] = "";
  nnrt_status st = host_.layer_shape(host_.self, type.c_str(), text.c_str(), static_cast<int32_t>(in_shapes.size()),
                                     dims.data(), ranks.data(), out_dims, &out_rank, message, sizeof message);
  // A config the layer refuses is an ONNX node nnrt cannot express.
  if (st != NNRT_OK) fail(st == NNRT_ERR_INVALID_ARGUMENT ? NNRT_ERR_UNSUPPORTED : st, where(), " as nnrt ", type, ": ", message);
  return Shape::of(out_dims, out_rank);
}

std::string Importer::emit(const std::string &type, Json attrs, const std::vector<std::string> &inputs,
                           std::vector<std::pair<std::string, HostTensor>> params, const std::string &output) {
  // A unique layer name from the ONNX value's name.
  std::string base = output.empty() ? (node_->output_size() ? node_->output(0) : type) + "/" + type : output;
  if (base.empty() || base == "input") base = "v_" + base;
  std::string name = base;
  for (int k = 2; node_names_.count(name); ++k) name = cat(base, "_", k);
  node_names_[name] = true;

  std::vector<Shape> in_shapes;
  Json in_names = Json::array();
  for (const std::string &in : inputs) {
    const size_t k = in_shapes.size();  // this input's position
    const Value &v = value(in);
    if (v.constant) unsupported("input \"", in, "\" is a constant where nnrt needs a computed value");
    if (v.pending) unsupported("input \"", in, "\" is the 8-bit output of a QuantizeLinear, which nnrt reads only through a DequantizeLinear");
    check_batch_axis(in, v);
    // Integers (and booleans) are read as embedding indices or as attention's key mask only.
    bool indices_or_mask = type == "embedding" || (type == "multi_head_attention" && k == 1);
    if (integer_inputs_.count(v.node) && !indices_or_mask) {
      unsupported("the model's integer input '", v.node, "' feeds nnrt ", type, "; nnrt computes in floats and reads "
                  "integers only as embedding indices (Gather) or an attention's key mask");
    }
    in_shapes.push_back(v.shape);
    in_names.push_back(v.node);
  }
  // Shape inference now, with the layer itself, so that later nodes know their input's shape.
  Shape out = layer_shape(type, attrs, in_shapes);
  if (out.numel() > kMaxExampleElements) unsupported("its output ", to_string(out), " is too large");

  Json node = attrs;
  node["type"] = type;
  node["name"] = name;
  node["inputs"] = in_names;
  nodes_.push_back(node);
  shapes_[name] = out;
  if (!params.empty()) params_[name] = std::move(params);
  Value v;
  v.node = name;
  v.shape = out;
  values_[output.empty() ? "\x01" + name : output] = v;
  return output.empty() ? "\x01" + name : output;
}

const Value *Importer::find_value(const std::string &name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

void Importer::alias(const std::string &output, const std::string &input) { values_[output] = value(input); }

// Convolution or dense layer, then activation, as exporters write them (ResNets' Relu, MobileNets'
// Clip(0, 6), transformers' GELU after their first feed-forward MatMul): one layer with a fused
// activation, so that the activation runs as the product's post-op instead of as a pass of its own
// over the output.
Json *Importer::sole_maker(const std::string &in, int own_reads) {
  const Value &x = value(in);
  if (x.constant || nodes_.empty() || readers_[in] != own_reads) return nullptr;
  Json &layer = nodes_.back();
  if (layer["name"] != x.node) return nullptr;
  // Another name for the layer's output (an Identity) that a later node still reads.
  for (const auto &[name, v] : values_) {
    auto r = readers_.find(name);
    if (name != in && !v.constant && v.node == x.node && r != readers_.end() && r->second > 0) return nullptr;
  }
  return &layer;
}

bool Importer::fuse_activation(const Json &activation) { return fuse_activation(activation, node_->input(0), 1); }

bool Importer::fuse_activation(const Json &activation, const std::string &in, int own_reads) {
  Json *layer = sole_maker(in, own_reads);
  if (!layer || ((*layer)["type"] != "conv2d" && (*layer)["type"] != "dense") || layer->contains("activation")) return false;
  for (const auto &[key, value] : activation.items()) (*layer)[key] = value;
  alias(node_->output(0), in);
  return true;
}

// MatMul then Add of a bias, as torch.onnx.export writes nn.Linear on inputs of more than 2 dims:
// the matmul's own bias, so that it is added as the product is written.
bool Importer::fuse_bias_into_dense(const std::string &in, const HostTensor &bias) {
  Json *layer = sole_maker(in, 1);
  if (!layer || (*layer)["type"] != "dense" || (*layer)["bias"] != false || layer->contains("activation") ||
      layer->contains("int8") || bias.elem_type != onnx::TensorProto::FLOAT || bias.dims.empty())
    return false;
  const int64_t units = (*layer)["units"].get<int64_t>();
  if (bias.dims.back() != units || bias.numel() != units) return false;
  (*layer)["bias"] = true;
  HostTensor b = bias;
  b.dims = {units};
  params_[(*layer)["name"].get<std::string>()].emplace_back("bias", std::move(b));
  alias(node_->output(0), in);
  return true;
}

void Importer::set_value(const std::string &output, Value v) { values_[output] = std::move(v); }

void Importer::move_batch(const std::string &output, int32_t axis) { values_.at(output).batch_axis = axis; }

void Importer::set_constant(const std::string &output, HostTensor tensor) {
  Value v;
  v.constant = true;
  v.tensor = std::move(tensor);
  values_[output] = std::move(v);
}

namespace {

// The graph's run-time inputs: the inputs that are not initializers.
std::vector<const onnx::ValueInfoProto *> runtime_graph_inputs(const onnx::GraphProto &g,
                                                               const std::set<std::string> &initializers) {
  std::vector<const onnx::ValueInfoProto *> inputs;
  for (const auto &vi : g.input()) {
    if (initializers.count(vi.name())) continue;  // older IR versions list initializers as inputs
    inputs.push_back(&vi);
  }
  if (inputs.empty()) fail(NNRT_ERR_UNSUPPORTED, "the graph has no input that is not an initializer");
  if (inputs.size() > kMaxImportInputs) {
    fail(NNRT_ERR_UNSUPPORTED, "the graph has ", inputs.size(), " inputs; nnrt models take at most ", kMaxImportInputs);
  }
  return inputs;
}

// The per-example dims of the graph's input `in`: its declared dims less the batch axis, or
// options.input (which must agree with the declared dims that are not symbolic).
std::vector<int64_t> example_dims(const onnx::ValueInfoProto &in, const ImportOptions &options) {
  const auto &tt = in.type().tensor_type();
  std::vector<int64_t> dims;
  if (!tt.has_shape()) fail(NNRT_ERR_UNSUPPORTED, "input '", in.name(), "' has no declared shape");
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto &d = tt.shape().dim(i);
    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  if (options.batch) {
    if (static_cast<int32_t>(dims.size()) <= options.batch_axis) {
      if (dims.empty()) fail(NNRT_ERR_UNSUPPORTED, "input '", in.name(), "' is a scalar; its dim 0 cannot be the batch");
      fail(NNRT_ERR_INVALID_ARGUMENT, "options.batch_axis ", options.batch_axis, ": input '", in.name(), "' has ",
           dims.size(), " dims");
    }
    dims.erase(dims.begin() + options.batch_axis);
  }
  if (!options.input.empty()) {
    if (options.input.size() != dims.size()) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "options.input has ", options.input.size(), " dims, but input '", in.name(),
           "' has ", dims.size(), " per example");
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] > 0 && dims[i] != options.input[i]) {
        fail(NNRT_ERR_INVALID_ARGUMENT, "options.input ", to_string(Shape::of(options.input)), " disagrees with input '",
             in.name(), "' declared ", to_string(Shape::of(dims)));
      }
    }
    dims = options.input;
  }
  if (dims.empty()) fail(NNRT_ERR_UNSUPPORTED, "input '", in.name(), "': examples must have at least one dim");
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d <= 0) {
      fail(NNRT_ERR_UNSUPPORTED, "input '", in.name(), "' has a symbolic or zero dim besides the batch; give the example shape as options {\"input\": [...]}");
    }
    if (d > kMaxExampleElements / n) fail(NNRT_ERR_UNSUPPORTED, "input '", in.name(), "': its declared dims are too large");
    n *= d;
  }
  if (dims.size() >= NNRT_MAX_DIMS) fail(NNRT_ERR_UNSUPPORTED, "input '", in.name(), "' has too many dims");
  return dims;
}

}  // namespace

void Importer::translate_graph() {
  onnx::GraphProto &g = *model_.mutable_graph();
  std::set<std::string> initializers = read_initializers(g);
  std::vector<const onnx::ValueInfoProto *> inputs = runtime_graph_inputs(g, initializers);
  if (inputs.size() > 1 && (!options_.input.empty() || options_.batch_axis != 0 || !options_.batch)) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "options.input, batch_axis and batch apply to a graph of one input; this one has ",
         inputs.size());
  }
  for (const onnx::ValueInfoProto *in : inputs) node_names_[inputs.size() == 1 ? "input" : in->name()] = true;
  for (const onnx::ValueInfoProto *in : inputs) read_input(*in, inputs.size() == 1 ? "input" : in->name());
  for (Fusion &f : find_fusions(GraphPattern(g, *this))) {
    fused_nodes_.insert(f.nodes.begin(), f.nodes.end());
    fusion_at_[f.at] = std::move(f.emit);
  }
  translate_nodes(g);
  read_output(g);
  drop_unread_layers();
}

bool Importer::is_input(const std::string &node) const {
  return std::any_of(inputs_.begin(), inputs_.end(), [&](const auto &in) { return in.first == node; });
}

void Importer::drop_if_unread(const std::string &output) { droppable_.insert(value(output).node); }

void Importer::drop_unread_layers() {
  std::set<std::string> read{output_};
  for (const Json &n : nodes_)
    for (const Json &in : n["inputs"]) read.insert(in.get<std::string>());
  Json kept = Json::array();
  for (Json &n : nodes_) {
    const std::string name = n["name"].get<std::string>();
    if (droppable_.count(name) && !read.count(name)) {
      shapes_.erase(name);
      continue;
    }
    kept.push_back(std::move(n));
  }
  nodes_ = std::move(kept);
}

std::set<std::string> Importer::read_initializers(onnx::GraphProto &g) {
  std::set<std::string> initializers;
  for (int i = 0; i < g.initializer_size(); ++i) {
    onnx::TensorProto &t = *g.mutable_initializer(i);
    std::string where = cat("initializer ", i, " '", t.name(), "'");
    if (t.name().empty()) fail(NNRT_ERR_CORRUPT, where, ": it has no name");
    if (!initializers.insert(t.name()).second) fail(NNRT_ERR_CORRUPT, where, ": the name is used twice");
    Value v;
    v.constant = true;
    v.tensor = read_tensor(t, model_dir_, where);
    values_[t.name()] = std::move(v);
  }
  if (g.sparse_initializer_size() > 0) fail(NNRT_ERR_UNSUPPORTED, "sparse initializers are not supported");
  return initializers;
}

void Importer::read_input(const onnx::ValueInfoProto &in, const std::string &node) {
  if (!in.type().has_tensor_type()) fail(NNRT_ERR_UNSUPPORTED, "input '", in.name(), "' is not a tensor");
  int32_t et = in.type().tensor_type().elem_type();
  if (et != onnx::TensorProto::FLOAT && et != onnx::TensorProto::INT64 && et != onnx::TensorProto::INT32 &&
      et != onnx::TensorProto::BOOL) {
    fail(NNRT_ERR_UNSUPPORTED, "input '", in.name(), "' holds ", element_type_name(et),
         "; nnrt imports float inputs, integer index inputs and integer or bool masks");
  }
  Value input;
  input.node = node;
  input.shape = Shape::of(example_dims(in, options_));
  input.batch_axis = options_.batch_axis;
  if (et != onnx::TensorProto::FLOAT) integer_inputs_.insert(node);
  values_[in.name()] = input;
  inputs_.emplace_back(node, input.shape);
}

void Importer::translate_nodes(const onnx::GraphProto &g) {
  // Every name some node makes, to tell a dangling input from a cycle.
  std::set<std::string> produced;
  for (const auto &node : g.node()) {
    for (const auto &o : node.output()) produced.insert(o);
    for (const auto &i : node.input()) readers_[i]++;
  }
  for (const auto &o : g.output()) readers_[o.name()]++;

  const auto &table = translators();
  for (int i = 0; i < g.node_size(); ++i) {
    node_ = &g.node(i);
    node_index_ = i;
    const std::string &domain = node_->domain();
    if (!domain.empty() && domain != "ai.onnx") unsupported("domain \"", domain, "\" is not supported");
    // A fused node reads values made inside its region, which no translator makes.
    for (const std::string &name : node_->input()) {
      if (name.empty() || values_.count(name) || fused_nodes_.count(i)) continue;
      if (produced.count(name)) corrupt("input \"", name, "\" is made by a later node: the graph has a cycle or is not sorted");
      corrupt("input \"", name, "\" is not a graph input, an initializer or any node's output (a dangling name)");
    }
    moved_batch_ok_ = false;
    auto fusion = fusion_at_.find(i);
    if (fusion != fusion_at_.end()) {
      fusion->second(*this);
    } else if (!fused_nodes_.count(i)) {  // a fused node is made by its fusion's last
      auto it = table.find(node_->op_type());
      if (it == table.end()) unsupported("op type ", node_->op_type(), " is not supported");
      it->second(*this);
    }
    for (const std::string &name : node_->input()) readers_[name]--;
  }
  node_ = nullptr;
}

void Importer::read_output(const onnx::GraphProto &g) {
  if (g.output_size() != 1) fail(NNRT_ERR_UNSUPPORTED, "the graph has ", g.output_size(), " outputs; nnrt models predict one");
  auto out = values_.find(g.output(0).name());
  if (out == values_.end()) fail(NNRT_ERR_CORRUPT, "graph output '", g.output(0).name(), "' is made by no node");
  if (out->second.constant) fail(NNRT_ERR_UNSUPPORTED, "graph output '", g.output(0).name(), "' is a constant");
  if (out->second.pending) {
    fail(NNRT_ERR_UNSUPPORTED, "graph output '", g.output(0).name(), "' is the 8-bit output of a QuantizeLinear; nnrt models give floats");
  }
  if (out->second.batch_axis != 0) {
    fail(NNRT_ERR_UNSUPPORTED, "graph output '", g.output(0).name(), "' has the batch in ONNX dim ", out->second.batch_axis,
         "; nnrt models give it in dim 0");
  }
  output_ = out->second.node;
  if (is_input(output_)) {
    onnx::NodeProto identity;  // the model must hold a layer: an identity one
    identity.set_op_type("Identity");
    identity.add_output(g.output(0).name());
    node_ = &identity;
    output_ = value(emit("activation", {{"activation", "identity"}}, {g.output(0).name()}, {}, "")).node;
    node_ = nullptr;
  }
}

void Importer::apply_loss() {
  // The last layer must be dense, maybe followed by a softmax over its units: together they
  // become one output layer with the loss.
  auto find = [&](const std::string &name) -> Json * {
    for (Json &n : nodes_)
      if (n["name"] == name) return &n;
    return nullptr;
  };
  auto consumers = [&](const std::string &name) {
    int c = 0;
    for (Json &n : nodes_)
      for (auto &i : n["inputs"]) c += i == name;
    return c;
  };
  Json *last = find(output_);
  std::string activation;
  if ((*last)["type"] == "softmax" && shapes_[output_].rank == 1) {
    activation = (*last).value("log", false) ? "log_softmax" : "softmax";
    std::string prev = (*last)["inputs"][0];
    if (is_input(prev) || consumers(prev) != 1) {
      fail(NNRT_ERR_UNSUPPORTED, "options.loss: the softmax '", output_, "' does not follow a Gemm/MatMul of its own");
    }
    Json *dense = find(prev);
    for (auto it = nodes_.begin(); it != nodes_.end(); ++it) {
      if ((*it)["name"] == output_) {
        nodes_.erase(it);
        break;
      }
    }
    output_ = prev;
    last = find(prev);
    (void)dense;
  }
  if ((*last)["type"] != "dense" || (*last).value("activation", "identity") != "identity") {
    fail(NNRT_ERR_UNSUPPORTED, "options.loss: the model must end in a Gemm or MatMul with weights (then maybe Softmax or "
         "LogSoftmax) to train; it ends in nnrt ", (*last)["type"].get<std::string>(), " '", output_, "'");
  }
  const std::string &loss = options_.loss;
  bool class_loss = loss == "nll" || loss == "cross_entropy";
  if (activation.empty()) activation = class_loss ? "softmax" : (loss == "bce" ? "sigmoid" : "identity");
  (*last)["type"] = "output";
  (*last)["activation"] = activation;
  (*last)["loss"] = loss;
}

ImportResult Importer::run() {
  if (!model_.has_graph()) fail(NNRT_ERR_CORRUPT, "the model has no graph");
  bool found = false;
  for (const auto &op : model_.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") {
      opset_ = op.version();
      found = true;
    }
  }
  if (!found && model_.opset_import_size() > 0) {
    // Valid, when every node is of that other domain (ai.onnx.preview.training, ai.onnx.ml, ...).
    fail(NNRT_ERR_UNSUPPORTED, "the model imports only the opsets of other domains (\"", model_.opset_import(0).domain(),
         "\", ...); nnrt imports the default ONNX domain");
  }
  if (!found) fail(NNRT_ERR_CORRUPT, "the model imports no opset");
  if (opset_ < kOldestImportOpset || opset_ > kNewestImportOpset) {
    fail(NNRT_ERR_UNSUPPORTED, "opset ", opset_, ": nnrt imports opsets ", kOldestImportOpset, " to ", kNewestImportOpset);
  }
  translate_graph();
  if (!options_.loss.empty()) apply_loss();

  Json config;
  if (inputs_.size() == 1) {
    config["input"] = inputs_[0].second.vec();
  } else {
    config["inputs"] = Json::array();
    for (const auto &[name, shape] : inputs_) config["inputs"].push_back({{"name", name}, {"shape", shape.vec()}});
  }
  config["seed"] = 0;
  config["nodes"] = nodes_;
  config["outputs"] = Json::array({output_});
  ImportResult result;
  result.config = config.dump();
  for (auto &[layer, params] : params_) {
    for (auto &[suffix, tensor] : params) result.params.emplace_back(layer + "." + suffix, std::move(tensor));
  }
  params_.clear();
  return result;
}

ImportResult import_model(const nnrt_onnx_host &host, onnx::ModelProto &model, const std::string &model_dir,
                          const ImportOptions &options) {
  Importer importer(host, model, model_dir, options);
  return importer.run();
}

}  // namespace nnrt::io::onnx_format

// ---- files and buffers ----------------------------------------------------------------------

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

namespace nnrt::io::onnx_format {

namespace {

// A protobuf parse that fails says little; nnrt says what it was reading.
void parse_or_corrupt(bool ok, const std::string &what) {
  if (!ok) fail(NNRT_ERR_CORRUPT, what, ": not a valid ONNX model (the protobuf is truncated or malformed)");
}

}  // namespace

ImportResult import_file(const nnrt_onnx_host &host, const std::string &path, const ImportOptions &options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(NNRT_ERR_IO, "cannot open \"", path, "\": ", std::strerror(errno));
  onnx::ModelProto proto;
  bool ok;
  {
    // Parsed straight from the file: the weights are held once, in the message.
    google::protobuf::io::FileInputStream in(fd);
    in.SetCloseOnDelete(true);
    ok = proto.ParseFromZeroCopyStream(&in);
  }
  parse_or_corrupt(ok, "\"" + path + "\"");
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  return import_model(host, proto, dir, options);
}

ImportResult import_memory(const nnrt_onnx_host &host, const void *data, size_t nbytes, const ImportOptions &options) {
  if (nbytes > static_cast<size_t>(INT32_MAX)) fail(NNRT_ERR_UNSUPPORTED, "an ONNX buffer of 2 GiB or more");
  onnx::ModelProto proto;
  parse_or_corrupt(proto.ParseFromArray(data, static_cast<int>(nbytes)), "the buffer");
  return import_model(host, proto, "", options);
}

}  // namespace nnrt::io::onnx_format
