// ONNX LSTM onto nnrt's lstm layer: PyTorch's nn.LSTM with one layer, batch-first (ONNX layout 1),
// forward, from a zero state, with the default activations. What that layer does not compute
// (layout 0, reverse or bidirectional, peepholes, a cell clip, other activations, non-zero initial
// states, sequences of different lengths, the cell state as an output) is refused by name.
#include <algorithm>

#include "io/onnx/onnx_import.h"

namespace nnrt::io::onnx_format {

namespace {

// ONNX orders the gate blocks i, o, f, c; nnrt, as PyTorch, i, f, c, o: nnrt's block k is ONNX's
// block kOnnxBlock[k].
constexpr int kOnnxBlock[4] = {0, 2, 3, 1};

// The four gate blocks of `hidden` rows of `cols` values each, from `values` at `offset`, in
// nnrt's order: a [4 * hidden, cols] tensor ([4 * hidden] when cols is 1).
HostTensor in_nnrt_gate_order(const std::string &name, const std::vector<float> &values, size_t offset, int64_t hidden,
                              int64_t cols) {
  size_t block = static_cast<size_t>(hidden * cols);
  std::vector<float> out(4 * block);
  for (int k = 0; k < 4; ++k) std::copy_n(values.begin() + offset + kOnnxBlock[k] * block, block, out.begin() + k * block);
  HostTensor t;
  t.name = name;
  t.elem_type = onnx::TensorProto::FLOAT;
  t.dims = cols == 1 ? std::vector<int64_t>{4 * hidden} : std::vector<int64_t>{4 * hidden, cols};
  t.bytes.assign(reinterpret_cast<const char *>(out.data()), out.size() * sizeof(float));
  return t;
}

// Input i, when given, must be a constant of zeros (nnrt's lstm has no peepholes and starts from
// a zero state).
void require_zeros(Importer &im, int i, const char *what, const char *why) {
  if (!im.has_input(i)) return;
  for (float v : im.constant_input(i, what).floats())
    if (v != 0) im.unsupported(what, " is not all zeros: ", why);
}

void lstm(Importer &im) {
  im.check_attrs({"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size",
                  "input_forget", "layout"});
  for (const auto &a : im.node().attribute()) {
    if (a.name() == "activation_alpha" || a.name() == "activation_beta") im.unsupported(a.name(), " is not supported");
    if (a.name() != "activations") continue;
    std::vector<std::string> acts(a.strings().begin(), a.strings().end());
    if (acts != std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}) {
      im.unsupported("activations other than Sigmoid, Tanh, Tanh are not supported");
    }
  }
  if (im.has_attr("clip")) im.unsupported("clip (a cell clip) is not supported");
  if (im.attr_int("input_forget", 0)) im.unsupported("input_forget = 1 is not supported");
  std::string direction = im.attr_string("direction", "forward");
  if (direction != "forward") im.unsupported("direction \"", direction, "\" is not supported (nnrt's lstm runs forward)");
  int64_t hidden = im.attr_int("hidden_size", 0);
  if (hidden < 1) im.corrupt("hidden_size must be given and positive");
  if (im.attr_int("layout", 0) != 1) {
    im.unsupported("layout 0 (time in dim 0, the batch in dim 1) is not supported; nnrt runs LSTMs batch-first "
                   "(layout 1: X [N, T, F])");
  }
  const Value &x = im.runtime_input(0);
  if (!im.batch()) im.unsupported("it needs the batch in dim 0 (import without {\"batch\": false})");
  if (x.shape.rank != 2) im.unsupported("X must be [N, T, F], got rank ", x.shape.rank + 1);
  int64_t steps = x.shape[0], features = x.shape[1];

  // Outputs: Y [N, T, 1, H] or Y_h [N, 1, H], one of them.
  bool y = im.output_read(0), y_h = im.output_read(1);
  if (im.output_read(2)) im.unsupported("output Y_c (the last cell state) is not supported");
  if (y && y_h) im.unsupported("outputs Y and Y_h are both read; nnrt's lstm gives one of them");
  if (!y && !y_h) {  // read by nothing: make the first one named
    y = im.node().output_size() > 0 && !im.node().output(0).empty();
    y_h = !y;
  }
  if (y_h && (im.node().output_size() < 2 || im.node().output(1).empty())) im.corrupt("the node has no output");

  // sequence_lens: every sequence runs all T steps.
  if (im.has_input(4)) {
    for (int64_t n : im.constant_input(4, "sequence_lens").ints())
      if (n != steps) im.unsupported("sequence_lens ", n, " differs from the ", steps, " steps of X");
  }
  require_zeros(im, 5, "initial_h", "nnrt's lstm starts from a zero state");
  require_zeros(im, 6, "initial_c", "nnrt's lstm starts from a zero state");
  require_zeros(im, 7, "P", "nnrt's lstm has no peepholes");

  HostTensor w = im.take_constant(1, "W"), r = im.take_constant(2, "R");
  if (w.dims != std::vector<int64_t>{1, 4 * hidden, features}) {
    im.corrupt("W is ", to_string(Shape::of(w.dims)), ", expected [1, ", 4 * hidden, ", ", features, "]");
  }
  if (r.dims != std::vector<int64_t>{1, 4 * hidden, hidden}) {
    im.corrupt("R is ", to_string(Shape::of(r.dims)), ", expected [1, ", 4 * hidden, ", ", hidden, "]");
  }
  std::vector<float> b(static_cast<size_t>(8 * hidden), 0.0f);
  if (im.has_input(3)) {
    const HostTensor &bt = im.constant_input(3, "B");
    if (bt.dims != std::vector<int64_t>{1, 8 * hidden}) {
      im.corrupt("B is ", to_string(Shape::of(bt.dims)), ", expected [1, ", 8 * hidden, "]");
    }
    b = bt.floats();
  }
  std::vector<std::pair<std::string, HostTensor>> params;
  params.emplace_back("weight_ih_l0", in_nnrt_gate_order(w.name, w.floats(), 0, hidden, features));
  std::string().swap(w.bytes);
  params.emplace_back("weight_hh_l0", in_nnrt_gate_order(r.name, r.floats(), 0, hidden, hidden));
  std::string().swap(r.bytes);
  params.emplace_back("bias_ih_l0", in_nnrt_gate_order("B", b, 0, hidden, 1));
  params.emplace_back("bias_hh_l0", in_nnrt_gate_order("B", b, static_cast<size_t>(4 * hidden), hidden, 1));

  std::string h = im.emit("lstm", {{"units", hidden}, {"return_sequences", y}}, {im.node().input(0)}, std::move(params), "");
  // ONNX keeps a directions dim of 1: Y [N, T, 1, H], Y_h [N, 1, H].
  if (y) im.emit("reshape", {{"shape", {steps, 1, hidden}}}, {h}, {}, im.node().output(0));
  else im.emit("reshape", {{"shape", {1, hidden}}}, {h}, {}, im.node().output(1));
}

}  // namespace

void register_recurrent_ops(std::map<std::string, Importer::Translator> &t) { t["LSTM"] = lstm; }

}  // namespace nnrt::io::onnx_format
