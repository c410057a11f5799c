// ONNX's QDQ form of quantized models (what ONNX Runtime's quantize_static writes by default, and
// PyTorch's quantized exports): QuantizeLinear -> DequantizeLinear pairs around float operators.
//
// A pair on a run-time value rounds it to an 8-bit grid and back, saturating at the grid's ends. A
// Conv, Gemm or MatMul reading the pair's output whose weight is dequantized from INT8 (zero point
// 0, one scale or one per output unit) becomes an int8 conv2d or dense layer (nnrt_model_quantize's
// layers) with exactly that input quantization and those integer weights. Every other operator
// reads the value clipped to the grid's range (a clip layer, dropped when only int8 layers read the
// pair): the saturation is applied, the rounding is not, so such a result differs from a runtime
// that rounds by at most about half a step of that grid per input.
//
// On constants both operators are computed at import: a weight or bias stored as integers becomes
// its float value (and keeps its integers for an int8 layer). QLinear* operators (the QOperator form)
// and 8-bit model inputs are refused.
#include <cmath>

#include "onnx_import.h"

namespace nnrt::io::onnx_format {

namespace {

// Scale and zero point (inputs 1 and 2), one per tensor or per slice along `axis`.
struct Params {
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  int32_t elem_type = onnx::TensorProto::UINT8;  // of the zero point, so of the 8-bit side
  int64_t axis = 1;
};

Params read_params(Importer &im, int32_t elem_type_if_none) {
  Params p;
  p.scales = im.constant_input(1, "the scale").floats();
  if (im.has_input(2)) {
    const HostTensor &zp = im.constant_input(2, "the zero point");
    p.zero_points = zp.ints();
    p.elem_type = zp.elem_type;
  } else {
    p.zero_points.assign(p.scales.size(), 0);
    p.elem_type = elem_type_if_none;
  }
  if (p.scales.empty() || p.scales.size() != p.zero_points.size()) {
    im.corrupt("the scale has ", p.scales.size(), " values and the zero point ", p.zero_points.size());
  }
  for (float s : p.scales)
    if (!(s > 0) || !std::isfinite(s)) im.unsupported("a scale of ", s, " (nnrt takes finite scales > 0)");
  p.axis = im.attr_int("axis", 1);
  return p;
}

// The slice along p.axis of each element of a constant of `dims` (0 for one scale for all).
std::vector<size_t> slices(Importer &im, const Params &p, const std::vector<int64_t> &dims) {
  const int64_t n = Shape::of(dims).numel();
  std::vector<size_t> which(static_cast<size_t>(n), 0);
  if (p.scales.size() == 1) return which;
  const int64_t rank = static_cast<int64_t>(dims.size()), axis = p.axis < 0 ? p.axis + rank : p.axis;
  if (axis < 0 || axis >= rank || dims[axis] != static_cast<int64_t>(p.scales.size())) {
    im.corrupt("axis ", p.axis, " of ", to_string(Shape::of(dims)), " does not have the ", p.scales.size(), " scales");
  }
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= dims[d];
  for (int64_t i = 0; i < n; ++i) which[i] = static_cast<size_t>(i / inner % dims[axis]);
  return which;
}

bool eight_bit(int32_t elem_type) { return elem_type == onnx::TensorProto::UINT8 || elem_type == onnx::TensorProto::INT8; }

void quantize_linear(Importer &im) {
  im.check_attrs({"axis"});
  im.check_outputs(1);
  Params p = read_params(im, onnx::TensorProto::UINT8);
  if (!eight_bit(p.elem_type)) im.unsupported("quantization to ", element_type_name(p.elem_type), " (nnrt takes 8 bits)");
  const bool is_unsigned = p.elem_type == onnx::TensorProto::UINT8;
  const double lo = is_unsigned ? 0 : -128, hi = is_unsigned ? 255 : 127;
  const Value &x = im.input(0);
  if (x.constant) {
    // A weight stored in float and quantized by the graph: the integers, computed now.
    const HostTensor &t = im.constant_input(0, "x");
    std::vector<float> v = t.floats();
    std::vector<size_t> which = slices(im, p, t.dims);
    HostTensor q;
    q.name = t.name;
    q.elem_type = p.elem_type;
    q.dims = t.dims;
    q.bytes.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      double r = std::nearbyint(static_cast<double>(v[i]) / p.scales[which[i]]) + static_cast<double>(p.zero_points[which[i]]);
      r = std::min(hi, std::max(lo, r));
      q.bytes[i] = static_cast<char>(is_unsigned ? static_cast<uint8_t>(r) : static_cast<uint8_t>(static_cast<int8_t>(r)));
    }
    im.set_constant(im.node().output(0), std::move(q));
    return;
  }
  im.runtime_input(0);
  if (p.scales.size() != 1) im.unsupported("a scale per slice of a run-time value (nnrt quantizes activations per tensor)");
  Value v = x;
  v.pending = Quantization{p.elem_type, p.scales[0], static_cast<int32_t>(p.zero_points[0])};
  v.quantized.reset();
  im.set_value(im.node().output(0), std::move(v));
}

void dequantize_linear(Importer &im) {
  im.check_attrs({"axis"});
  im.check_outputs(1);
  const Value &x = im.input(0);
  if (!x.constant) {
    if (!x.pending) {
      im.unsupported("DequantizeLinear of a run-time value that no QuantizeLinear made (an 8-bit model input) is not "
                     "supported");
    }
    Params p = read_params(im, x.pending->elem_type);
    if (p.scales.size() != 1 || p.elem_type != x.pending->elem_type || p.scales[0] != static_cast<float>(x.pending->scale) ||
        p.zero_points[0] != x.pending->zero_point) {
      im.unsupported("a DequantizeLinear whose scale or zero point differs from its QuantizeLinear's");
    }
    Quantization q = *x.pending;
    const std::string &out = im.node().output(0);
    // The float value before the pair, under a name of its own (the QuantizeLinear's output is its
    // 8-bit form, which no layer reads).
    q.unclipped = out + "\x02unclipped";
    Value unclipped = x;
    unclipped.pending.reset();
    im.set_value(q.unclipped, std::move(unclipped));
    const bool is_unsigned = q.elem_type == onnx::TensorProto::UINT8;
    const double lo = q.scale * ((is_unsigned ? 0 : -128) - q.zero_point), hi = q.scale * ((is_unsigned ? 255 : 127) - q.zero_point);
    im.emit("clip", {{"min", lo}, {"max", hi}}, {q.unclipped}, {}, out);
    im.drop_if_unread(out);
    Value v = im.value(out);
    v.quantized = std::move(q);
    im.set_value(out, std::move(v));
    return;
  }
  const HostTensor &t = im.constant_input(0, "x");
  if (!eight_bit(t.elem_type) && t.elem_type != onnx::TensorProto::INT32) {
    im.unsupported("dequantizing ", element_type_name(t.elem_type), " (nnrt reads INT8, UINT8 and INT32)");
  }
  Params p = read_params(im, t.elem_type);
  if (p.elem_type != t.elem_type) im.corrupt("x is ", element_type_name(t.elem_type), " but the zero point ", element_type_name(p.elem_type));
  std::vector<int64_t> q = t.ints();
  std::vector<size_t> which = slices(im, p, t.dims);
  std::vector<float> real(q.size());
  bool zero_points = false;
  for (size_t i = 0; i < q.size(); ++i) {
    real[i] = static_cast<float>(q[i] - p.zero_points[which[i]]) * p.scales[which[i]];
    zero_points |= p.zero_points[which[i]] != 0;
  }
  Value v;
  v.constant = true;
  v.tensor.name = t.name;
  v.tensor.elem_type = onnx::TensorProto::FLOAT;
  v.tensor.dims = t.dims;
  v.tensor.bytes.assign(reinterpret_cast<const char *>(real.data()), real.size() * sizeof(float));
  if (t.elem_type == onnx::TensorProto::INT8 && !zero_points) {
    auto int8 = std::make_shared<Int8Constant>();
    int8->values = t;
    int8->scales = p.scales;
    int8->axis = p.scales.size() == 1 ? -1 : (p.axis < 0 ? p.axis + static_cast<int64_t>(t.dims.size()) : p.axis);
    v.int8 = std::move(int8);
  }
  im.set_value(im.node().output(0), std::move(v));
}

}  // namespace

std::optional<Int8Layer> int8_layer(const Importer &im, int x, int w, int64_t unit_axis, int64_t units) {
  const Value &xv = im.input(x), &wv = im.input(w);
  if (!xv.quantized || !wv.int8) return std::nullopt;
  const Int8Constant &c = *wv.int8;
  if (c.axis != -1 && c.axis != unit_axis) return std::nullopt;  // scales along the inputs: not nnrt's form
  Int8Layer l;
  const Quantization &q = *xv.quantized;
  l.input = q.unclipped;
  std::vector<int64_t> values = c.values.ints();
  int64_t largest = 0;
  for (int64_t v : values) largest = std::max<int64_t>(largest, v < 0 ? -v : v);
  l.config = {{"input_dtype", q.elem_type == onnx::TensorProto::UINT8 ? "u8" : "i8"},
              {"input_scale", q.scale},
              {"input_zero_point", q.zero_point},
              {"weight_bits", largest <= 63 ? 7 : 8}};
  l.weight.assign(values.begin(), values.end());
  l.scales = c.scales.size() == 1 ? std::vector<float>(static_cast<size_t>(units), c.scales[0]) : c.scales;
  if (static_cast<int64_t>(l.scales.size()) != units) return std::nullopt;
  return l;
}

void register_quantize_ops(std::map<std::string, Importer::Translator> &t) {
  t["QuantizeLinear"] = quantize_linear;
  t["DequantizeLinear"] = dequantize_linear;
}

}  // namespace nnrt::io::onnx_format
