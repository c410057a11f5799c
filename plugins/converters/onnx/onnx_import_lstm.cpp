// ONNX LSTM onto nnrt's lstm layer: PyTorch's nn.LSTM with one layer, forward, from a zero state,
// with the default activations. Layout 1 (batch-first) maps straight on; layout 0 (time-major:
// X [T, N, F]) when the batch is ONNX dim 1 of X, as after the Transpose torch.onnx.export writes
// for a batch_first nn.LSTM, or for a time-major input imported with {"batch_axis": 1} (nnrt
// holds the batch first either way). Imported as one example ({"batch": false}), the LSTM's batch
// is a dim of the example, which nnrt's lstm runs as more sequences. What that layer does not
// compute (reverse or bidirectional, peepholes, a cell clip, other activations, non-zero initial
// states, sequences of different lengths, the cell state as an output) is refused by name.
#include <algorithm>

#include "onnx_import.h"

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

// Input i, when given, must be a constant of zeros, or zeros filled to a shape of the batch size
// (nnrt's lstm has no peepholes and starts from a zero state).
void require_zeros(Importer &im, int i, const char *what, const char *why) {
  if (!im.has_input(i)) return;
  const Value &v = im.constant_value(i, what);
  if (v.batch_sized) im.corrupt(what, " is a shape, not values");
  for (float x : v.tensor.floats())
    if (x != 0) im.unsupported(what, " is not all zeros: ", why);
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
  int64_t layout = im.attr_int("layout", 0);
  if (layout != 0 && layout != 1) im.corrupt("layout ", layout, " is neither 0 nor 1");
  bool time_major = layout == 0;
  im.accept_moved_batch();
  const Value &x = im.runtime_input(0);
  if (im.onnx_rank(x) != 3) im.corrupt("X must have 3 dims, got ", im.onnx_rank(x));
  // The batch must be where the layout says: dim 1 for layout 0, dim 0 for layout 1.
  if (im.batch() && x.batch_axis != (time_major ? 1 : 0)) {
    if (time_major && x.batch_axis == 0) {
      im.unsupported("layout 0 reads X's dim 0 as time, but the import takes it as the batch; import a time-major "
                     "input [T, N, F] with {\"batch_axis\": 1}, or as one example with {\"batch\": false}");
    }
    im.unsupported("X has the batch in dim ", x.batch_axis, ", layout ", layout, " wants it in dim ", time_major ? 1 : 0);
  }
  // Per example, as nnrt holds it: [T, F] with a batch; else ONNX's [T, B, F] or [B, T, F].
  int32_t t_dim = im.batch() ? 0 : (time_major ? 0 : 1), f_dim = im.batch() ? 1 : 2;
  int64_t steps = x.shape[t_dim], features = x.shape[f_dim];
  int64_t sequences = im.batch() ? 1 : x.shape[time_major ? 1 : 0];

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

  // One example holding time-major sequences [T, B, F] runs them as B sequences [B, T, F].
  bool swap = !im.batch() && time_major;
  std::string in = im.node().input(0);
  if (swap) in = im.emit("transpose", {{"perm", {1, 0, 2}}}, {in}, {}, "");
  std::string h = im.emit("lstm", {{"units", hidden}, {"return_sequences", y}}, {in}, std::move(params), "");
  // ONNX keeps a directions dim of 1: Y [T, 1, N, H] (layout 0) or [N, T, 1, H], Y_h [1, N, H] or
  // [N, 1, H]. With the batch (held first by nnrt) the examples are [T, 1, H] and [1, H] either way.
  const std::string &out = im.node().output(y ? 0 : 1);
  if (im.batch()) {
    im.emit("reshape", {{"shape", y ? std::vector<int64_t>{steps, 1, hidden} : std::vector<int64_t>{1, hidden}}}, {h}, {}, out);
    im.move_batch(out, time_major ? (y ? 2 : 1) : 0);
  } else if (y && swap) {
    std::string t = im.emit("transpose", {{"perm", {1, 0, 2}}}, {h}, {}, "");
    im.emit("reshape", {{"shape", {steps, 1, sequences, hidden}}}, {t}, {}, out);
  } else if (y) {
    im.emit("reshape", {{"shape", {sequences, steps, 1, hidden}}}, {h}, {}, out);
  } else {
    im.emit("reshape", {{"shape", time_major ? std::vector<int64_t>{1, sequences, hidden} : std::vector<int64_t>{sequences, 1, hidden}}},
            {h}, {}, out);
  }
}

}  // namespace

void register_recurrent_ops(std::map<std::string, Importer::Translator> &t) { t["LSTM"] = lstm; }

}  // namespace nnrt::io::onnx_format
