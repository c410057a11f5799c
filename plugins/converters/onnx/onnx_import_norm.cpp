// Layer and RMS normalization in the decomposed form exporters write before opset 17 (PyTorch 1.13's
// nn.LayerNorm at opsets 14-16), recognized at import and mapped onto nnrt's layer_norm and rms_norm:
//   layer: (x - ReduceMean(x)) / Sqrt(ReduceMean((x - mean) ^ 2) + eps) [* weight] [+ bias]
//   RMS:   x / Sqrt(ReduceMean(x ^ 2) + eps) [* weight] [+ bias]
// over the trailing axes (both ReduceMeans the same negative axes -k..-1, keepdims), the square as
// Pow(c, 2) or Mul(c, c) (nnrt's export of rms_norm).
#include <algorithm>
#include <cmath>

#include "onnx_import_pattern.h"

namespace nnrt::io::onnx_format {

namespace {

// The number of trailing axes a ReduceMean (keepdims) averages over, or 0.
int64_t trailing_axes(const onnx::NodeProto &mean) {
  if (mean.input_size() != 1 || GraphPattern::attr_int(mean, "keepdims", 1) != 1) return 0;
  std::vector<int64_t> axes = GraphPattern::attr_ints(mean, "axes");
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != static_cast<int64_t>(i) - static_cast<int64_t>(axes.size())) return 0;
  return static_cast<int64_t>(axes.size());
}

// `name` times (or plus) a constant operand: that constant and the node, or nothing.
std::optional<HostTensor> with_constant(const GraphPattern &g, const onnx::NodeProto *n, const std::string &name) {
  if (!n || n->input_size() != 2) return std::nullopt;
  const std::string &c = n->input(0) == name ? n->input(1) : n->input(0);
  return g.constant(c);
}

struct Norm {
  std::string x, out;
  bool rms = false;
  int64_t axes = 0;
  double eps = 0;
  std::optional<HostTensor> weight, bias;
};

void emit_norm(Importer &im, const Norm &n) {
  const Value &x = im.value(n.x);
  if (x.constant) im.unsupported("normalization of a constant is not supported");
  if (n.axes > x.shape.rank) im.unsupported("it normalizes over ", n.axes, " axes, and its input has the batch among them");
  const Shape normalized = Shape::of(x.shape.dims.data() + x.shape.rank - n.axes, static_cast<int32_t>(n.axes));
  std::vector<std::pair<std::string, HostTensor>> params;
  const std::optional<HostTensor> *given[] = {&n.weight, &n.bias};
  const char *names[] = {"weight", "bias"};
  for (int i = 0; i < 2; ++i) {
    if (!*given[i]) continue;
    HostTensor t = **given[i];
    if (t.numel() != normalized.numel())
      im.unsupported("its ", names[i], " has shape ", to_string(Shape::of(t.dims)), "; nnrt takes one value per normalized "
                     "element ", to_string(normalized));
    t.dims = normalized.vec();
    params.emplace_back(names[i], std::move(t));
  }
  Json attrs = {{"normalized_dims", n.axes}, {"eps", n.eps}};
  if (!n.weight) {
    // No scale: the layer's own weight is kept at its initial ones.
    HostTensor ones;
    ones.dims = normalized.vec();
    std::vector<float> v(static_cast<size_t>(normalized.numel()), 1.0f);
    ones.bytes.assign(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
    params.emplace(params.begin(), "weight", std::move(ones));
  }
  attrs["bias"] = n.bias.has_value();
  im.accept_moved_batch();  // over the trailing axes: wherever the batch is before them
  const int32_t batch_axis = x.batch_axis;
  if (im.batch() && batch_axis >= im.onnx_rank(x) - n.axes) im.unsupported("it normalizes over the batch dim");
  im.emit(n.rms ? "rms_norm" : "layer_norm", attrs, {n.x}, std::move(params), n.out);
  im.move_batch(n.out, batch_axis);
}

std::optional<Fusion> at_sqrt(const GraphPattern &g, int index) {
  const onnx::NodeProto &sqrt = g.node(index);
  Norm n;
  // Sqrt(ReduceMean(Pow(c, 2)) + eps)
  const onnx::NodeProto *plus_eps = g.producer(sqrt.input(0), "Add");
  const onnx::NodeProto *variance = nullptr;
  if (plus_eps) {
    for (int i = 0; i < 2 && !variance; ++i) {
      variance = g.producer(plus_eps->input(i), "ReduceMean");
      std::optional<double> eps = g.scalar(plus_eps->input(1 - i));
      if (!eps || *eps < 0) variance = nullptr;
      else n.eps = *eps;
    }
  }
  if (!variance || !(n.axes = trailing_axes(*variance))) return std::nullopt;
  // c ^ 2, or c * c
  const onnx::NodeProto *square = g.producer(variance->input(0), "Pow");
  std::optional<double> two = square && square->input_size() == 2 ? g.scalar(square->input(1)) : std::nullopt;
  if (!two || *two != 2) {
    square = g.producer(variance->input(0), "Mul");
    if (!square || square->input_size() != 2 || square->input(0) != square->input(1)) return std::nullopt;
  }
  const std::string centered = square->input(0);
  // layer: centered = x - ReduceMean(x); RMS: centered is x
  const onnx::NodeProto *sub = g.producer(centered, "Sub");
  const onnx::NodeProto *mean = sub ? g.producer(sub->input(1), "ReduceMean") : nullptr;
  if (mean && mean->input(0) == sub->input(0) && trailing_axes(*mean) == n.axes) {
    n.x = sub->input(0);
  } else {
    n.x = centered;
    n.rms = true;
  }
  // centered / Sqrt, the only other reader of centered (besides Pow)
  const onnx::NodeProto *div = g.sole_reader(sqrt.output(0), "Div");
  if (!div || div->input(0) != centered || div->input(1) != sqrt.output(0)) return std::nullopt;
  std::string out = div->output(0);
  const onnx::NodeProto *scale = g.sole_reader(out, "Mul");
  if ((n.weight = with_constant(g, scale, out))) out = scale->output(0);
  const onnx::NodeProto *shift = g.sole_reader(out, "Add");
  if ((n.bias = with_constant(g, shift, out))) out = shift->output(0);
  if (n.bias && !n.weight) return std::nullopt;  // nnrt's bias comes after a weight
  n.out = out;

  return g.fusion(n.x, out, [n](Importer &im) { emit_norm(im, n); });
}

}  // namespace

void find_decomposed_norm(const GraphPattern &g, std::vector<Fusion> &out) {
  for (int i = 0; i < g.graph().node_size(); ++i) {
    if (g.node(i).op_type() != "Sqrt" || g.node(i).input_size() != 1) continue;
    if (std::optional<Fusion> f = at_sqrt(g, i)) out.push_back(std::move(*f));
  }
}

}  // namespace nnrt::io::onnx_format
