// ONNX import: an onnx.ModelProto mapped node by node onto an nnrt graph model (the "nodes" form of
// the JSON config), its initializers becoming the model's parameters. Every ONNX node becomes one
// or a few nnrt layers; what nnrt cannot express exactly is refused with NNRT_ERR_UNSUPPORTED naming
// the node, its op type and opset, never imported approximately.
//
// Each run-time input of the graph becomes a model input ("input" when there is one, else named as
// in ONNX), whose dim 0 is the batch. By default the ONNX input is read the same way (dim 0 is the
// batch, of any size); for a graph of one input, {"batch_axis": k} takes ONNX dim k instead, for
// time-major inputs [T, N, F], and with {"batch": false} the ONNX input is one example and nnrt adds
// a batch dim in front, so ops over ONNX's dim 0 can be expressed too.
//
// Each run-time value keeps the ONNX axis of its batch: nnrt holds it with that axis first and the
// others in order, so that a Transpose which only moves the batch (as around PyTorch's time-major
// LSTM) costs nothing. Only the translators that say so read values whose batch is not in dim 0.
//
// Each ONNX op type has a translator, found by op type in a table; the translators live by family,
// beside the exporters of the same layers: onnx_import_conv.cpp (Conv, ConvTranspose, pooling,
// BatchNormalization), onnx_import_math.cpp (Gemm, MatMul, elementwise ops, activations, Softmax,
// LayerNormalization, Clip, reductions), onnx_import_shape.cpp (Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Concat, Identity, Dropout, Constant, Gather), onnx_import_slice.cpp, onnx_import_fold.cpp (Shape,
// ConstantOfShape, Expand: shapes computed at import) and onnx_import_lstm.cpp. A new op's import is
// one translator and one line in its file's register_*_ops.
//
// Before the translators run, fusions (onnx_import_pattern.h) recognize the subgraphs exporters
// write for one nnrt layer (PyTorch's attention, erf GELU, decomposed layer norms): their nodes are
// skipped and the layer is emitted at the last of them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "converter_base.h"
#include "onnx_tensor.h"
#include "nnrt/onnx_converter.h"

namespace nnrt::io::onnx_format {

// The opsets nnrt reads: 7 (the oldest with broadcasting as today) to the newest of the schema it
// was built with (Debian's libonnx 1.12: 17).
inline constexpr int64_t kOldestImportOpset = 7;
inline constexpr int64_t kNewestImportOpset = 17;
// A graph's run-time inputs (as a config's "inputs" takes them).
inline constexpr size_t kMaxImportInputs = 64;

struct ImportOptions {
  bool batch = true;            // an ONNX dim of the input is the batch
  int32_t batch_axis = 0;       // which one
  std::string loss;             // non-empty: the final dense (+ softmax) becomes an output layer
  std::vector<int64_t> input;   // the per-example input shape, for inputs with symbolic dims
};
ImportOptions parse_import_options(const Json &options);

// The tensor a Constant node holds (its one attribute: value, value_float(s) or value_int(s));
// false for another attribute or count (the Constant translator says which).
bool constant_node_tensor(const onnx::NodeProto &n, onnx::TensorProto &t);

// What an import makes: the nnrt graph config and the parameters' values by "<layer>.<suffix>".
struct ImportResult {
  std::string config;  // JSON text
  std::vector<std::pair<std::string, HostTensor>> params;
  std::vector<float> converted;  // the parameter handed out last, when it was not stored as floats
};

// Maps the parsed `model` onto nnrt. `model_dir` is where external data is looked up ("" for
// memory); `host` answers the layers' shapes. Throws nnrt::Error: NNRT_ERR_CORRUPT for a malformed
// model (the message names the node or tensor), NNRT_ERR_UNSUPPORTED for what nnrt cannot run.
ImportResult import_model(const nnrt_onnx_host &host, onnx::ModelProto &model, const std::string &model_dir,
                          const ImportOptions &options);

// In shapes the graph computes (Shape of a run-time value, and what is made of it), the batch
// size, which is known only at run time.
inline constexpr int64_t kBatchSize = INT64_MIN;

// ONNX's 8-bit quantization of a tensor (QuantizeLinear's y_scale and y_zero_point, per tensor).
struct Quantization {
  int32_t elem_type = onnx::TensorProto::UINT8;  // UINT8 or INT8
  double scale = 1;
  int32_t zero_point = 0;
  std::string unclipped;  // on a DequantizeLinear's output: the ONNX name of the value before the pair
};

// A constant that DequantizeLinear made from INT8 values with zero point 0: the integers, and their
// scale for the whole tensor (axis -1) or per slice along `axis`.
struct Int8Constant {
  HostTensor values;  // INT8
  std::vector<float> scales;
  int64_t axis = -1;
};

// What the importer knows of an ONNX value.
struct Value {
  std::string node;        // the nnrt node that makes it (a model input's name for a model input)
  Shape shape;             // per example, as nnrt sees it
  int32_t batch_axis = 0;  // the ONNX axis of the batch (nnrt holds it first, the others in order)
  bool constant = false;   // an initializer, a Constant's output or a folded shape: `tensor` holds it
  HostTensor tensor;
  // A constant that depends on the batch size: int64 values of which some are kBatchSize
  // (batch_sized), or ConstantOfShape / Expand of a shape that holds it (filled: `tensor` holds the
  // one value, `fill_dims` the ONNX dims).
  bool batch_sized = false;
  bool filled = false;
  std::vector<int64_t> fill_dims;
  // ONNX's QDQ form (onnx_import_quantize.cpp). `pending` on a QuantizeLinear's output: 8-bit values
  // that only a DequantizeLinear reads (nnrt holds the float value before it). `quantized` on the
  // DequantizeLinear's: the value clipped to the 8-bit range; a conv2d or dense layer reading it
  // runs in int8 with that quantization, from the unclipped value. A constant dequantized from INT8
  // keeps its integers in `int8`.
  std::optional<Quantization> pending, quantized;
  std::shared_ptr<const Int8Constant> int8;
};

// The state of one import; the per-op translators (onnx_import_*.cpp) work through it.
class Importer {
 public:
  Importer(const nnrt_onnx_host &host, onnx::ModelProto &model, std::string model_dir, ImportOptions options);
  ImportResult run();

  // ---- for the translators: the node being translated ----
  const onnx::NodeProto &node() const { return *node_; }
  int64_t opset() const { return opset_; }
  bool batch() const { return options_.batch; }
  // Throws NNRT_ERR_UNSUPPORTED / NNRT_ERR_CORRUPT: "node 'n' (Op, opset k): ...".
  template <class... Parts>
  [[noreturn]] void unsupported(Parts &&...parts) const {
    fail(NNRT_ERR_UNSUPPORTED, where(), ": ", std::forward<Parts>(parts)...);
  }
  template <class... Parts>
  [[noreturn]] void corrupt(Parts &&...parts) const {
    fail(NNRT_ERR_CORRUPT, where(), ": ", std::forward<Parts>(parts)...);
  }
  // Throws NNRT_ERR_SHAPE: shapes of the graph that do not fit together.
  template <class... Parts>
  [[noreturn]] void shape_mismatch(Parts &&...parts) const {
    fail(NNRT_ERR_SHAPE, where(), ": ", std::forward<Parts>(parts)...);
  }
  std::string where() const;

  // Inputs: whether input i is given (optional inputs may be empty names), and its value.
  bool has_input(int i) const;
  const Value &input(int i) const;
  // Input i as a constant; NNRT_ERR_UNSUPPORTED when it is computed at run time or depends on the
  // batch size.
  const HostTensor &constant_input(int i, const char *what) const;
  // Input i as a constant that may depend on the batch size (a shape computed from one, and what is
  // filled or expanded to it).
  const Value &constant_value(int i, const char *what) const;
  // Input i as a constant that becomes a parameter: moved out of the importer when this node is its
  // last reader (so that the weights are held once), else copied.
  HostTensor take_constant(int i, const char *what);
  // Input i as a run-time value (an nnrt node); NNRT_ERR_UNSUPPORTED when it is a constant, or
  // when its batch is not in ONNX dim 0 and the translator has not called accept_moved_batch().
  const Value &runtime_input(int i) const;
  // The node being translated reads values whose batch is in any ONNX dim (it maps their axes
  // with example_axis(Value, ...) and says where its outputs' batch is with move_batch).
  void accept_moved_batch() { moved_batch_ok_ = true; }
  // A value's ONNX dims: a constant's, or the example's with kBatchSize at the batch axis (when
  // importing with a batch).
  std::vector<int64_t> onnx_dims(const Value &v) const;
  int inputs() const { return node_->input_size(); }

  // Attributes.
  bool has_attr(const std::string &name) const;
  int64_t attr_int(const std::string &name, int64_t fallback) const;
  double attr_float(const std::string &name, double fallback) const;
  std::string attr_string(const std::string &name, const std::string &fallback) const;
  std::vector<int64_t> attr_ints(const std::string &name, const std::vector<int64_t> &fallback) const;
  const onnx::TensorProto *attr_tensor(const std::string &name) const;
  // Refuses attributes other than `known` (so that none is silently ignored).
  void check_attrs(std::initializer_list<const char *> known) const;
  // Refuses a node with more than n outputs in use.
  void check_outputs(int n) const;
  // Whether output i is named and read by a later node or as the graph's output (for ops whose
  // exporters name outputs that nothing reads, as LSTM's Y, Y_h and Y_c).
  bool output_read(int i) const;

  // Axes: ONNX axis (negative counts from the end) of a value of ONNX rank `rank` -> per-example
  // axis; NNRT_ERR_UNSUPPORTED for the batch dim.
  int32_t example_axis(int64_t axis, int32_t onnx_rank) const;
  int32_t onnx_rank(const Value &v) const { return v.shape.rank + (options_.batch ? 1 : 0); }
  // As example_axis, for a run-time value whose batch may be in any ONNX dim.
  int32_t example_axis(const Value &v, int64_t axis) const;

  // Output: one nnrt layer of `type` with config `attrs`, reading the run-time values `inputs` (ONNX
  // names), owning `params` (suffix -> tensor, copied into the model after build). `output` names
  // the ONNX value it makes ("" for an internal step: the layer's name is returned).
  std::string emit(const std::string &type, Json attrs, const std::vector<std::string> &inputs,
                   std::vector<std::pair<std::string, HostTensor>> params, const std::string &output);
  // For an activation node (Relu, Clip(0, 6), Erf-GELU, ...): when its input 0 is made by the
  // conv2d or dense layer emitted last and nothing else reads it, that layer takes `activation`
  // (its config keys, as {"activation": "relu6"}) and the node's output names it; true then, false
  // (nothing done) otherwise (onnx_import_conv.cpp). The second form is for fusions: the activation
  // of value `in` is the fused region that ends at this node, which itself reads `in` `own_reads`
  // times.
  bool fuse_activation(const Json &activation);
  bool fuse_activation(const Json &activation, const std::string &in, int own_reads);
  // For an Add of constant `bias` to value `in`: when `in` is made by the dense layer emitted last,
  // without bias or activation, nothing else reads it and `bias` holds one value per unit ([units],
  // or dims of 1 before it), that layer takes it as its bias and the node's output names it; true
  // then, false (nothing done) otherwise (onnx_import_math.cpp).
  bool fuse_bias_into_dense(const std::string &in, const HostTensor &bias);
  // The layer that made `output` (a translator's own step, as the clip of a QDQ pair) is dropped at
  // the end of the import when no node reads it.
  void drop_if_unread(const std::string &output);
  // Output `output` is the same value as `input` (Identity, inference-time Dropout).
  void alias(const std::string &output, const std::string &input);
  void set_constant(const std::string &output, HostTensor tensor);
  // Output `output` is the constant or batch-dependent constant `v`.
  void set_value(const std::string &output, Value v);
  // The batch of run-time value `output` is in ONNX axis `axis` (a translator that moved it).
  void move_batch(const std::string &output, int32_t axis);
  const Value &value(const std::string &name) const;
  // The value named, when the importer knows it yet (initializers are known before any node).
  const Value *find_value(const std::string &name) const;

  using Translator = std::function<void(Importer &)>;

 private:
  // The graph in four steps: its initializers as constants (their names returned), its one
  // run-time input as the model input, every node through its op type's translator, and its output
  // as the model's.
  void translate_graph();
  std::set<std::string> read_initializers(onnx::GraphProto &g);
  // Graph input `in` as model input `node` ("input" when it is the only one, else its ONNX name).
  void read_input(const onnx::ValueInfoProto &in, const std::string &node);
  bool is_input(const std::string &node) const;
  void translate_nodes(const onnx::GraphProto &g);
  void read_output(const onnx::GraphProto &g);
  void apply_loss();
  // The per-example output shape of an nnrt layer, from the layer's own rules in the core.
  Shape layer_shape(const std::string &type, const Json &attrs, const std::vector<Shape> &in_shapes) const;

  const nnrt_onnx_host &host_;
  onnx::ModelProto &model_;
  std::string model_dir_;
  ImportOptions options_;
  int64_t opset_ = 0;
  const onnx::NodeProto *node_ = nullptr;
  int node_index_ = 0;
  std::map<std::string, Value> values_;
  std::map<std::string, int> readers_;  // nodes (and graph outputs) still to read each value
  std::map<std::string, bool> node_names_;
  // Recognized subgraphs (onnx_import_pattern.h): their nodes, and the fusion emitted at each's last.
  std::set<int> fused_nodes_;
  std::map<int, std::function<void(Importer &)>> fusion_at_;
  Json nodes_ = Json::array();
  std::map<std::string, std::vector<std::pair<std::string, HostTensor>>> params_;  // by layer
  std::map<std::string, Shape> shapes_;  // per layer
  std::set<std::string> droppable_;      // layers drop_if_unread named
  void drop_unread_layers();
  // The layer emitted last, when it makes value `in`, which no node but the one being translated
  // (reading it `own_reads` times) and no other name of it still reads; nullptr otherwise.
  Json *sole_maker(const std::string &in, int own_reads);
  std::string output_;
  std::vector<std::pair<std::string, Shape>> inputs_;  // the model's inputs: node name, per-example shape
  // Inputs of integers or booleans: only an embedding (indices) or an attention (its key mask) reads them.
  std::set<std::string> integer_inputs_;
  bool moved_batch_ok_ = false;  // the node being translated reads values whose batch is not in dim 0
  // Refuses value `name` (read by the node being translated) when its batch is not in ONNX dim 0
  // and the translator does not map it.
  void check_batch_axis(const std::string &name, const Value &v) const;
};

// The translators, one registry per file: op type -> translator.
void register_conv_ops(std::map<std::string, Importer::Translator> &table);
void register_math_ops(std::map<std::string, Importer::Translator> &table);
void register_shape_ops(std::map<std::string, Importer::Translator> &table);
void register_recurrent_ops(std::map<std::string, Importer::Translator> &table);
void register_fold_ops(std::map<std::string, Importer::Translator> &table);
void register_slice_ops(std::map<std::string, Importer::Translator> &table);
void register_quantize_ops(std::map<std::string, Importer::Translator> &table);

// For a conv2d or dense translator (onnx_import_quantize.cpp): when input `x` went through a
// QuantizeLinear -> DequantizeLinear pair and input `w` is a weight dequantized from INT8 with one
// scale, or one per output unit along weight axis `unit_axis`, the layer's "int8" config, its
// integer weights (as floats, in the weight's ONNX layout), one scale per unit (`units`) and the
// ONNX name of the value it reads (before the pair's clip); nullopt otherwise (the layer runs in
// float on the dequantized weight).
struct Int8Layer {
  std::string input;
  Json config;
  std::vector<float> weight;
  std::vector<float> scales;
};
std::optional<Int8Layer> int8_layer(const Importer &im, int x, int w, int64_t unit_axis, int64_t units);
// Gather, Concat and arithmetic of constants (onnx_import_fold.cpp), for the translators of those ops.
void fold_gather(Importer &im);
void fold_concat(Importer &im, int64_t axis);
// Add, Sub, Mul or Div ("add", ...) of two constants, numpy broadcasting; the batch size refused.
void fold_binary(Importer &im, const std::string &op);

}  // namespace nnrt::io::onnx_format

namespace nnrt::io::onnx_format {

// A .onnx file or buffer mapped onto nnrt. Throws NNRT_ERR_IO (file), NNRT_ERR_CORRUPT (not a
// parsable ModelProto) and what import_model throws.
ImportResult import_file(const nnrt_onnx_host &host, const std::string &path, const ImportOptions &options);
ImportResult import_memory(const nnrt_onnx_host &host, const void *data, size_t nbytes, const ImportOptions &options);

}  // namespace nnrt::io::onnx_format
