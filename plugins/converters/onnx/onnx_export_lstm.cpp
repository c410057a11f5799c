// ONNX export of the lstm layer as an ONNX LSTM (its import: onnx_import_lstm.cpp).
#include "converter_base.h"
#include "onnx_export.h"
#include "nnrt/nnrt.h"

namespace nnrt::io::onnx_format {

namespace {

// ONNX orders an LSTM's gate blocks i, o, f, c; nnrt, as PyTorch, i, f, c, o: ONNX's block k is
// nnrt's block kNnrtBlock[k].
constexpr int kNnrtBlock[4] = {0, 3, 1, 2};

// The gate blocks of `values` ([4 * block] in nnrt's order) appended to `out` in ONNX's order.
void append_in_onnx_order(const std::vector<float> &values, std::vector<float> &out) {
  size_t block = values.size() / 4;
  for (int k : kNnrtBlock) out.insert(out.end(), values.begin() + k * block, values.begin() + (k + 1) * block);
}

// An lstm over [time, features] examples: time-major, between Transposes; every step's output
// (return_sequences) or the last hidden state.
void lstm(Exporter &ex) {
  const std::string &name = ex.name(), &out = ex.output();
  const Shape &in_shape = ex.in_shape();
  if (in_shape.rank != 2) {
    fail(NNRT_ERR_UNSUPPORTED, "ONNX export: ", ex.node().where, ": an lstm over examples ", to_string(in_shape),
         " has no ONNX form here (only [time, features])");
  }
  int64_t hidden = ex.attrs().value("units", int64_t(0)), steps = in_shape[0], features = in_shape[1];
  bool sequences = ex.attrs().value("return_sequences", false);
  std::vector<float> w, r, b;
  append_in_onnx_order(ex.values_of(name + ".weight_ih_l0"), w);
  append_in_onnx_order(ex.values_of(name + ".weight_hh_l0"), r);
  append_in_onnx_order(ex.values_of(name + ".bias_ih_l0"), b);
  append_in_onnx_order(ex.values_of(name + ".bias_hh_l0"), b);
  ex.tensor(name + "/W", {1, 4 * hidden, features}, w);
  ex.tensor(name + "/R", {1, 4 * hidden, hidden}, r);
  ex.tensor(name + "/B", {1, 8 * hidden}, b);
  // Layout 0 (time-major) between Transposes, as torch.onnx.export writes it: ONNX Runtime's LSTM
  // kernels refuse layout 1 ("batchwise recurrent operations are not supported").
  Exporter::set_ints(ex.add("Transpose", {ex.inputs()[0]}, name + "/time_major"), "perm", {1, 0, 2});
  std::string y = name + (sequences ? "/Y" : "/Y_h");
  onnx::NodeProto &n = ex.add("LSTM", {name + "/time_major", name + "/W", name + "/R", name + "/B"}, y);
  if (!sequences) {
    n.clear_output();
    n.add_output("");
    n.add_output(y);
  }
  Exporter::set_int(n, "hidden_size", hidden);
  if (sequences) {
    // Y [T, 1, N, H] -> [N, T, 1, H] -> [N, T, H]
    Exporter::set_ints(ex.add("Transpose", {y}, name + "/batch_first"), "perm", {2, 0, 1, 3});
    ex.add("Reshape", {name + "/batch_first", ex.ints(name + "/shape", {0, steps, hidden})}, out);
  } else {
    ex.add("Squeeze", {y, ex.ints(name + "/axes", {0})}, out);  // Y_h [1, N, H] -> [N, H]
  }
}

}  // namespace

void register_recurrent_layers(std::map<std::string, Exporter::LayerWriter> &t) { t["lstm"] = lstm; }

}  // namespace nnrt::io::onnx_format
