// The exact GELU as exporters write it (opset 17 has no Gelu op): x * 0.5 * (1 + erf(x / sqrt(2))),
// as Div (or Mul by 1/sqrt(2)), Erf, Add 1, then Mul by x and by 0.5 in either order, recognized at
// import and mapped onto nnrt's gelu activation (nnrt's export writes the same nodes back).
#include <cmath>

#include "onnx_import_pattern.h"

namespace nnrt::io::onnx_format {

namespace {

// For a two-input node reading `name` and a constant: whether that constant is `value` (to float
// precision).
bool with_constant(const GraphPattern &g, const onnx::NodeProto &n, const std::string &name, double value) {
  if (n.input_size() != 2) return false;
  int c = n.input(0) == name ? 1 : (n.input(1) == name ? 0 : -1);
  if (c < 0 || (n.op_type() == "Div" && c != 1)) return false;
  std::optional<double> s = g.scalar(n.input(c));
  return s && std::abs(*s - value) <= 1e-6 * std::abs(value);
}

// The operand of two-input node n that is not `name`.
const std::string &other(const onnx::NodeProto &n, const std::string &name) {
  return n.input(0) == name ? n.input(1) : n.input(0);
}

std::optional<Fusion> at_erf(const GraphPattern &g, int index) {
  const onnx::NodeProto &erf = g.node(index);
  if (erf.input_size() != 1) return std::nullopt;
  // x / sqrt(2) or x * (1 / sqrt(2))
  const onnx::NodeProto *scaled = g.producer(erf.input(0), "Div");
  if (scaled && !with_constant(g, *scaled, scaled->input(0), std::sqrt(2.0))) scaled = nullptr;
  if (!scaled) {
    scaled = g.producer(erf.input(0), "Mul");
    if (!scaled) return std::nullopt;
    bool first = with_constant(g, *scaled, scaled->input(0), std::sqrt(0.5));
    if (!first && !with_constant(g, *scaled, scaled->input(1), std::sqrt(0.5))) return std::nullopt;
  }
  const std::string x = g.is_constant(scaled->input(0)) ? scaled->input(1) : scaled->input(0);
  // 1 + erf
  const onnx::NodeProto *plus1 = g.sole_reader(erf.output(0), "Add");
  if (!plus1 || !with_constant(g, *plus1, erf.output(0), 1.0)) return std::nullopt;
  // x * (1 + erf) * 0.5, or (x * 0.5) * (1 + erf)
  const onnx::NodeProto *product = g.sole_reader(plus1->output(0), "Mul");
  if (!product) return std::nullopt;
  const std::string &factor = other(*product, plus1->output(0));
  const onnx::NodeProto *result = nullptr;
  if (factor == x) {
    result = g.sole_reader(product->output(0), "Mul");
    if (!result || !with_constant(g, *result, product->output(0), 0.5)) return std::nullopt;
  } else {
    const onnx::NodeProto *half = g.producer(factor, "Mul");
    if (!half || !with_constant(g, *half, x, 0.5)) return std::nullopt;
    result = product;
  }
  std::string out = result->output(0);
  return g.fusion(x, out, [x, out](Importer &im) {
    const Value &v = im.value(x);
    if (v.constant) im.unsupported("GELU of a constant is not supported");
    im.accept_moved_batch();  // elementwise: wherever the batch is
    int32_t batch_axis = v.batch_axis;
    im.emit("activation", {{"activation", "gelu"}}, {x}, {}, out);
    im.move_batch(out, batch_axis);
  });
}

}  // namespace

void find_gelu(const GraphPattern &g, std::vector<Fusion> &out) {
  for (int i = 0; i < g.graph().node_size(); ++i) {
    if (g.node(i).op_type() != "Erf") continue;
    if (std::optional<Fusion> f = at_erf(g, i)) out.push_back(std::move(*f));
  }
}

}  // namespace nnrt::io::onnx_format
