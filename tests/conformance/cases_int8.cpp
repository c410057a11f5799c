// Cases for int8 inference: COPY to and from I8, QUANTIZE (ties, saturation, NaN, every layout),
// MATMUL_INT8 and CONV2D_INT8 (u8 and i8 inputs, zero points, 7-bit weights with their flag and
// full 8-bit ones without it, bias, fused activations, strided and channels-last tensors, grouped
// and depthwise convolutions). The integer sums are exact on every backend, so only the float
// epilogue (scale, bias, activation) is held to a tolerance.
#include "cases.h"

namespace nnrt::conformance {
namespace {

using Fused = FusedActivation;
// The activations quantized models fuse most (none, relu, relu6's clip), and one of the others.
const std::vector<Fused> kFused{fused_activations()[0], fused_activations()[1], fused_activations()[8],
                                fused_activations()[6]};

Fill input_fill(int32_t dtype) { return dtype == NNRT_DTYPE_U8 ? Fill::Ints(0, 255) : Fill::Ints(-128, 127); }
int32_t pick_zero_point(Picker &p, int32_t dtype) {
  if (p.chance(0.5)) return 0;
  return static_cast<int32_t>(dtype == NNRT_DTYPE_U8 ? p.between(1, 255) : p.between(-128, 127));
}

void add_int8_copy_cases(Picker &p, std::vector<Case> &out) {
  for (int32_t other : {NNRT_DTYPE_F32, NNRT_DTYPE_I32, NNRT_DTYPE_U8, NNRT_DTYPE_I8, NNRT_DTYPE_BF16})
    for (bool from_i8 : {true, false}) {
      if (other == NNRT_DTYPE_I8 && !from_i8) continue;
      Dims d{p.size(), p.size()};
      const int32_t from = from_i8 ? NNRT_DTYPE_I8 : other, to = from_i8 ? other : NNRT_DTYPE_I8;
      std::string tag = std::string(dtype_name(from)) + "->" + dtype_name(to);
      Fill f = from == NNRT_DTYPE_I8 ? Fill::Ints(-128, 127) : (from == NNRT_DTYPE_U8 ? Fill::Ints(0, 255) : Fill::Special(-300, 300));
      out.push_back(CaseBuilder(NNRT_OP_COPY, "copy/" + tag + "/" + dims_name(d), "copy/" + tag)
                        .in(make_tensor(from, d, p.chance(0.5) ? Layout::transposed : Layout::contiguous), f)
                        .out(make_tensor(to, d))
                        .exact()
                        .done());
    }
}

void add_quantize_cases(Picker &p, std::vector<Case> &out) {
  for (int32_t to : {NNRT_DTYPE_U8, NNRT_DTYPE_I8})
    for (Layout l : {Layout::contiguous, Layout::transposed, Layout::channels_last, Layout::padded})
      for (bool special : {false, true}) {
        Dims d{p.small_size(), p.size(), p.size(), p.size()};
        nnrt_op_attrs a = no_attrs();
        // With scale 1, the ties fill's halves (k / 2) are exact ties of the rounding.
        a.scale = p.chance(0.5) ? 1.0 : 0.01 + 0.2 * static_cast<double>(p.between(0, 1000)) / 1000.0;
        a.zero_point = pick_zero_point(p, to);
        std::string group = std::string("quantize/") + dtype_name(to);
        std::string name = group + "/" + dims_name(d) + "/" + layout_name(l) + "/scale:" + std::to_string(a.scale) +
                           "/zp:" + std::to_string(a.zero_point) + (special ? "/special" : "/ties");
        out.push_back(CaseBuilder(NNRT_OP_QUANTIZE, name, group)
                          .in(make_tensor(NNRT_DTYPE_F32, d, l), special ? Fill::Special(-40, 40) : Fill::Ties(-160, 160))
                          .out(make_tensor(to, d, l == Layout::transposed ? Layout::contiguous : l))
                          .attrs(a)
                          .exact()
                          .done());
      }
}

// The flag and the weights' fill: 7-bit weights promised, or full 8-bit ones without the promise.
Fill weight_fill(bool seven_bit) { return seven_bit ? Fill::Ints(-63, 63) : Fill::Ints(-128, 127); }

nnrt_op_attrs int8_attrs(Picker &p, int32_t x_dtype, bool seven_bit, const Fused &f) {
  nnrt_op_attrs a = no_attrs();
  a.scale = 0.002 + 0.02 * static_cast<double>(p.between(0, 1000)) / 1000.0;
  a.zero_point = pick_zero_point(p, x_dtype);
  a.flags = seven_bit ? NNRT_FLAG_WEIGHTS_7BIT : 0;
  a.fused = f.alg;
  a.alpha = f.alpha;
  a.beta = f.beta;
  return a;
}

void add_matmul_int8_cases(Picker &p, std::vector<Case> &out) {
  for (int32_t x : {NNRT_DTYPE_U8, NNRT_DTYPE_I8})
    for (bool seven_bit : {true, false})
      for (const Fused &f : kFused) {
        const int64_t m = p.size(), k = p.between(1, 300), n = p.size();
        const bool bias = p.chance(0.7);
        Layout la = p.chance(0.3) ? Layout::padded : Layout::contiguous;
        Layout lb = p.chance(0.6) ? Layout::transposed : Layout::contiguous;  // a dense layer's W^T
        nnrt_op_attrs a = int8_attrs(p, x, seven_bit, f);
        std::string group = std::string("matmul_int8/") + dtype_name(x) + (seven_bit ? "/7bit" : "/8bit") +
                            (bias ? "/bias" : "") + "/fused:" + f.name;
        std::string name = group + "/" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + "/a:" +
                           layout_name(la) + "/b:" + layout_name(lb) + "/zp:" + std::to_string(a.zero_point);
        CaseBuilder b(NNRT_OP_MATMUL_INT8, name, group);
        b.in(make_tensor(x, {m, k}, la), input_fill(x))
            .in(make_tensor(NNRT_DTYPE_I8, {k, n}, lb), weight_fill(seven_bit))
            .in(make_tensor(NNRT_DTYPE_F32, {n}), Fill::U(0.001, 0.05));
        if (bias) b.in(make_tensor(NNRT_DTYPE_F32, {n}), Fill::U(-2, 2));
        b.out(make_tensor(NNRT_DTYPE_F32, {m, n}), 1).attrs(a);
        if (f.alg == 0 && x == NNRT_DTYPE_U8 && seven_bit) b.concurrent();
        out.push_back(b.done());
      }
}

void add_conv2d_int8_cases(Picker &p, std::vector<Case> &out) {
  struct Shape {
    int64_t c, o, groups, k, stride, pad, dilation;
    const char *what;
  };
  const std::vector<Shape> shapes{{3, 8, 1, 3, 1, 1, 1, "3x3"},           {16, 16, 1, 3, 2, 1, 1, "3x3/stride2"},
                                  {8, 16, 1, 1, 1, 0, 1, "1x1"},          {16, 16, 16, 3, 1, 1, 1, "depthwise"},
                                  {8, 12, 2, 3, 1, 2, 2, "grouped/dilated"}, {5, 7, 1, 5, 3, 2, 1, "5x5/stride3"}};
  for (const Shape &s : shapes)
    for (int32_t x : {NNRT_DTYPE_U8, NNRT_DTYPE_I8})
      for (bool seven_bit : {true, false}) {
        const Fused &f = p.one_of(kFused);
        const int64_t n = p.small_size(), h = p.between(s.k, 14), w = p.between(s.k, 14);
        const int64_t oh = (h + 2 * s.pad - s.dilation * (s.k - 1) - 1) / s.stride + 1;
        const int64_t ow = (w + 2 * s.pad - s.dilation * (s.k - 1) - 1) / s.stride + 1;
        const bool bias = p.chance(0.7);
        Layout l = p.chance(0.7) ? Layout::channels_last : Layout::contiguous;  // inference keeps NHWC
        nnrt_op_attrs a = int8_attrs(p, x, seven_bit, f);
        a.groups = static_cast<int32_t>(s.groups);
        a.stride[0] = a.stride[1] = static_cast<int32_t>(s.stride);
        for (int i = 0; i < 4; ++i) a.pad[i] = static_cast<int32_t>(s.pad);
        a.dilation[0] = a.dilation[1] = static_cast<int32_t>(s.dilation);
        std::string group = std::string("conv2d_int8/") + dtype_name(x) + (seven_bit ? "/7bit" : "/8bit") +
                            (bias ? "/bias" : "") + "/fused:" + f.name;
        std::string name = group + "/" + s.what + "/" + dims_name({n, s.c, h, w}) + "->" + std::to_string(s.o) + "/" +
                           layout_name(l) + "/zp:" + std::to_string(a.zero_point);
        CaseBuilder b(NNRT_OP_CONV2D_INT8, name, group);
        b.in(make_tensor(x, {n, s.c, h, w}, l), input_fill(x))
            .in(make_tensor(NNRT_DTYPE_I8, {s.o, s.c / s.groups, s.k, s.k}), weight_fill(seven_bit))
            .in(make_tensor(NNRT_DTYPE_F32, {s.o}), Fill::U(0.001, 0.05));
        if (bias) b.in(make_tensor(NNRT_DTYPE_F32, {s.o}), Fill::U(-2, 2));
        b.out(make_tensor(NNRT_DTYPE_F32, {n, s.o, oh, ow}, l), 1).attrs(a);
        out.push_back(b.done());
      }
}

}  // namespace

void add_int8_cases(Picker &p, std::vector<Case> &out) {
  add_int8_copy_cases(p, out);
  add_quantize_cases(p, out);
  add_matmul_int8_cases(p, out);
  add_conv2d_int8_cases(p, out);
}

}  // namespace nnrt::conformance
