// Activations that exporters write as several nodes (opset 17 has no Gelu or Swish op), recognized
// at import and mapped onto nnrt's activations (nnrt's export writes the same nodes back):
//   silu       x * Sigmoid(x), as torch.onnx.export writes nn.SiLU (EfficientNets' activation);
//   gelu       x * 0.5 * (1 + erf(x / sqrt(2))): Div (or Mul by 1/sqrt(2)), Erf, Add 1, then Mul by
//              x and by 0.5 in either order;
//   gelu_tanh  x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), as torch.onnx.export writes
//              GELU(approximate="tanh"): x * (x * x) (or Pow 3), Mul, Add x, Mul, Tanh, then the same
//              tail.
#include <algorithm>
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

// The node computing x * (1 + f) * 0.5, or (x * 0.5) * (1 + f), where `f` is the value the Add of 1
// reads; nullptr when the graph does not continue so.
const onnx::NodeProto *times_half_x(const GraphPattern &g, const std::string &f, const std::string &x) {
  const onnx::NodeProto *plus1 = g.sole_reader(f, "Add");
  if (!plus1 || !with_constant(g, *plus1, f, 1.0)) return nullptr;
  const onnx::NodeProto *product = g.sole_reader(plus1->output(0), "Mul");
  if (!product) return nullptr;
  const std::string &factor = other(*product, plus1->output(0));
  if (factor == x) {
    const onnx::NodeProto *result = g.sole_reader(product->output(0), "Mul");
    return result && with_constant(g, *result, product->output(0), 0.5) ? result : nullptr;
  }
  const onnx::NodeProto *half = g.producer(factor, "Mul");
  return half && with_constant(g, *half, x, 0.5) ? product : nullptr;
}

// The fusion of the nodes from x to `result` into one activation layer.
std::optional<Fusion> as_activation(const GraphPattern &g, const std::string &x, const std::string &result,
                                    const char *activation) {
  std::string act = activation;
  return g.fusion(x, result, [x, result, act](Importer &im) {
    const Value &v = im.value(x);
    if (v.constant) im.unsupported(act, " of a constant is not supported");
    im.accept_moved_batch();  // elementwise: wherever the batch is
    const Json attrs = {{"activation", act}};
    const auto &reads = im.node().input();
    if (im.fuse_activation(attrs, x, static_cast<int>(std::count(reads.begin(), reads.end(), x)))) return;
    int32_t batch_axis = v.batch_axis;
    im.emit("activation", attrs, {x}, {}, result);
    im.move_batch(result, batch_axis);
  });
}

std::optional<Fusion> at_erf(const GraphPattern &g, int index) {
  const onnx::NodeProto &erf = g.node(index);
  if (erf.input_size() != 1) return std::nullopt;
  // x / sqrt(2) or x * (1 / sqrt(2))
  const onnx::NodeProto *scaled = g.producer(erf.input(0), "Div");
  if (scaled && scaled->input_size() != 2) return std::nullopt;
  if (scaled && !with_constant(g, *scaled, scaled->input(0), std::sqrt(2.0))) scaled = nullptr;
  if (!scaled) {
    scaled = g.producer(erf.input(0), "Mul");
    if (!scaled || scaled->input_size() != 2) return std::nullopt;
    bool first = with_constant(g, *scaled, scaled->input(0), std::sqrt(0.5));
    if (!first && !with_constant(g, *scaled, scaled->input(1), std::sqrt(0.5))) return std::nullopt;
  }
  const std::string x = g.is_constant(scaled->input(0)) ? scaled->input(1) : scaled->input(0);
  const onnx::NodeProto *result = times_half_x(g, erf.output(0), x);
  if (!result) return std::nullopt;
  return as_activation(g, x, result->output(0), "gelu");
}

// The run-time operand of a two-input node whose other operand is the constant `value`, or nullptr.
const std::string *times_constant(const GraphPattern &g, const onnx::NodeProto *n, double value) {
  if (!n || n->input_size() != 2) return nullptr;
  for (int i = 0; i < 2; ++i)
    if (with_constant(g, *n, n->input(i), value)) return &n->input(i);
  return nullptr;
}

// Whether `name` is x^3: Pow(x, 3), or x * (x * x) in any order (as torch.onnx.export writes it).
bool is_cube(const GraphPattern &g, const std::string &name, const std::string &x) {
  if (const onnx::NodeProto *pow = g.producer(name, "Pow"))
    return pow->input_size() == 2 && pow->input(0) == x && g.scalar(pow->input(1)) == 3.0;
  const onnx::NodeProto *outer = g.producer(name, "Mul");
  if (!outer || outer->input_size() != 2) return false;
  for (int side = 0; side < 2; ++side) {
    if (outer->input(side) != x) continue;
    const onnx::NodeProto *square = g.producer(outer->input(1 - side), "Mul");
    if (square && square->input_size() == 2 && square->input(0) == x && square->input(1) == x) return true;
  }
  return false;
}

std::optional<Fusion> at_tanh(const GraphPattern &g, int index) {
  const onnx::NodeProto &tanh = g.node(index);
  if (tanh.input_size() != 1) return std::nullopt;
  // sqrt(2 / pi) * inner
  const std::string *inner = times_constant(g, g.producer(tanh.input(0), "Mul"), std::sqrt(2.0 / M_PI));
  if (!inner) return std::nullopt;
  // inner = x + 0.044715 * x^3
  const onnx::NodeProto *sum = g.producer(*inner, "Add");
  if (!sum || sum->input_size() != 2) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const std::string &x = sum->input(side);
    const std::string *cube = times_constant(g, g.producer(sum->input(1 - side), "Mul"), 0.044715);
    if (!cube || !is_cube(g, *cube, x)) continue;
    const onnx::NodeProto *result = times_half_x(g, tanh.output(0), x);
    if (!result) return std::nullopt;
    return as_activation(g, x, result->output(0), "gelu_tanh");
  }
  return std::nullopt;
}

std::optional<Fusion> at_sigmoid(const GraphPattern &g, int index) {
  const onnx::NodeProto &sigmoid = g.node(index);
  if (sigmoid.input_size() != 1) return std::nullopt;
  const std::string &x = sigmoid.input(0);
  const onnx::NodeProto *product = g.sole_reader(sigmoid.output(0), "Mul");
  if (!product || product->input_size() != 2 || other(*product, sigmoid.output(0)) != x) return std::nullopt;
  return as_activation(g, x, product->output(0), "silu");
}

}  // namespace

void find_activations(const GraphPattern &g, std::vector<Fusion> &out) {
  for (int i = 0; i < g.graph().node_size(); ++i) {
    if (g.node(i).output_size() != 1) continue;  // every node of these chains makes one value
    const std::string &op = g.node(i).op_type();
    std::optional<Fusion> f = op == "Erf"       ? at_erf(g, i)
                              : op == "Tanh"    ? at_tanh(g, i)
                              : op == "Sigmoid" ? at_sigmoid(g, i)
                                                : std::nullopt;
    if (f) out.push_back(std::move(*f));
  }
}

}  // namespace nnrt::io::onnx_format
