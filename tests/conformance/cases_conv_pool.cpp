// Cases for CONV2D (forward, backward data, backward weights) and POOL2D (forward, backward):
// strides, asymmetric padding, dilation, groups (depthwise too), bias, fused activations,
// NHWC / padded / transposed tensors, tied maxima, windows that lie wholly in padding.
#include <cmath>

#include "cases.h"

namespace nnrt::conformance {
namespace {

struct ConvShape {
  int64_t n, c, o, h, w, kh, kw, groups;
  int32_t sh, sw, dh, dw, pt, pl, pb, pr;
  int64_t oh() const { return (h + pt + pb - ((kh - 1) * dh + 1)) / sh + 1; }
  int64_t ow() const { return (w + pl + pr - ((kw - 1) * dw + 1)) / sw + 1; }
  std::string name() const {
    auto s = [](int64_t v) { return std::to_string(v); };
    return "n" + s(n) + "c" + s(c) + "o" + s(o) + "h" + s(h) + "w" + s(w) + "/k" + s(kh) + "x" + s(kw) + "/s" +
           s(sh) + "x" + s(sw) + "/d" + s(dh) + "x" + s(dw) + "/p" + s(pt) + "," + s(pl) + "," + s(pb) + "," + s(pr) +
           "/g" + s(groups);
  }
};

// A random convolution whose output is at least 1x1.
ConvShape pick_conv(Picker &p) {
  ConvShape s{};
  s.n = p.between(1, 3);
  switch (p.between(0, 5)) {
    case 0: s.groups = 2; break;
    case 1: s.groups = 3; break;
    case 2: s.groups = -1; break;  // depthwise
    default: s.groups = 1; break;
  }
  if (s.groups == -1) {
    s.c = p.between(1, 6);
    s.groups = s.c;
    s.o = s.c * p.between(1, 2);
  } else {
    s.c = s.groups * p.between(1, 3);
    s.o = s.groups * p.between(1, 3);
  }
  static const std::vector<int64_t> kernels{1, 2, 3, 3, 5};
  s.kh = p.one_of(kernels);
  s.kw = p.chance(0.7) ? s.kh : p.one_of(kernels);
  s.sh = static_cast<int32_t>(p.between(1, 3));
  s.sw = p.chance(0.7) ? s.sh : static_cast<int32_t>(p.between(1, 3));
  s.dh = p.chance(0.75) ? 1 : 2;
  s.dw = p.chance(0.75) ? 1 : 2;
  s.pt = static_cast<int32_t>(p.between(0, s.kh - 1));
  s.pb = static_cast<int32_t>(p.chance(0.6) ? s.pt : p.between(0, s.kh - 1));
  s.pl = static_cast<int32_t>(p.between(0, s.kw - 1));
  s.pr = static_cast<int32_t>(p.chance(0.6) ? s.pl : p.between(0, s.kw - 1));
  int64_t ext_h = (s.kh - 1) * s.dh + 1, ext_w = (s.kw - 1) * s.dw + 1;
  s.h = p.between(std::max<int64_t>(1, ext_h - s.pt - s.pb), 13);
  s.w = p.between(std::max<int64_t>(1, ext_w - s.pl - s.pr), 13);
  return s;
}

nnrt_op_attrs conv_attrs(const ConvShape &s, int32_t fused = 0, double alpha = 0) {
  nnrt_op_attrs a = no_attrs();
  a.groups = static_cast<int32_t>(s.groups);
  a.stride[0] = s.sh;
  a.stride[1] = s.sw;
  a.dilation[0] = s.dh;
  a.dilation[1] = s.dw;
  a.pad[0] = s.pt;
  a.pad[1] = s.pl;
  a.pad[2] = s.pb;
  a.pad[3] = s.pr;
  a.fused = fused;
  a.alpha = alpha;
  return a;
}

Layout activation_layout(Picker &p) {
  switch (p.between(0, 5)) {
    case 0: return Layout::channels_last;
    case 1: return Layout::padded;
    default: return Layout::contiguous;
  }
}

void add_conv_triplet(Picker &p, int32_t t, const ConvShape &s, std::vector<Case> &out, bool concurrent = false) {
  const Dims xd{s.n, s.c, s.h, s.w}, wd{s.o, s.c / s.groups, s.kh, s.kw}, yd{s.n, s.o, s.oh(), s.ow()};
  const double fan_in = double(s.c / s.groups * s.kh * s.kw), fan_out = double(s.o / s.groups * s.kh * s.kw);
  const double taps = double(s.n * s.oh() * s.ow());
  struct Fused {
    int32_t alg;
    const char *name;
    double alpha;
  };
  static const std::vector<Fused> fused{{0, "none", 0},          {0, "none", 0},
                                        {NNRT_UNARY_RELU, "relu", 0}, {NNRT_UNARY_LEAKY_RELU, "leaky_relu", 0.1},
                                        {NNRT_UNARY_TANH, "tanh", 0}, {NNRT_UNARY_ELU, "elu", 1.0}};
  const Fused &f = p.one_of(fused);
  const bool bias = p.chance(0.6);
  Layout lx = activation_layout(p), ly = activation_layout(p);
  Layout lw = p.chance(0.2) ? Layout::transposed : Layout::contiguous;
  const std::string dt = dtype_name(t);
  const std::string layouts = std::string("/x:") + layout_name(lx) + "/w:" + layout_name(lw) + "/y:" + layout_name(ly);

  {
    std::string group = "conv2d/" + dt + (bias ? "/bias" : "") + "/fused:" + f.name;
    CaseBuilder b(NNRT_OP_CONV2D, group + "/" + s.name() + layouts, group);
    b.in(make_tensor(t, xd, lx)).in(make_tensor(t, wd, lw));
    if (bias) b.in(make_tensor(t, {s.o}));
    b.out(make_tensor(t, yd, ly), std::sqrt(fan_in) + 1).attrs(conv_attrs(s, f.alg, f.alpha));
    if (concurrent) b.concurrent();
    out.push_back(b.done());
  }
  {
    std::string group = "conv2d_backward_data/" + dt;
    CaseBuilder b(NNRT_OP_CONV2D_BACKWARD_DATA, group + "/" + s.name() + layouts, group);
    b.in(make_tensor(t, yd, ly)).in(make_tensor(t, wd, lw)).out(make_tensor(t, xd, lx), std::sqrt(fan_out));
    b.attrs(conv_attrs(s));
    if (concurrent) b.concurrent();
    out.push_back(b.done());
  }
  {
    std::string group = "conv2d_backward_weights/" + dt + (bias ? "/bias" : "");
    CaseBuilder b(NNRT_OP_CONV2D_BACKWARD_WEIGHTS, group + "/" + s.name() + layouts, group);
    b.in(make_tensor(t, xd, lx)).in(make_tensor(t, yd, ly)).out(make_tensor(t, wd, lw), std::sqrt(taps));
    if (bias) b.out(make_tensor(t, {s.o}), std::sqrt(taps));
    b.attrs(conv_attrs(s));
    if (concurrent) b.concurrent();
    out.push_back(b.done());
  }
}

// Convolutions with a fused activation as inference runs them (ReLU6's clip to [0, 6] in MobileNets,
// SiLU in EfficientNets, hard swish and hard sigmoid in MobileNetV3): f32 and bf16, depthwise among
// them, channels-last as the layers keep images, and with NaN and infinities in x (a backend whose
// clip turns NaN into the lower bound must not). They draw from their own copy of the picker
// (`salt` tells the copies apart), so that the cases after them stay what they were.
void add_conv_fused(Picker picked, uint64_t salt, const FusedActivation &f, int reps, std::vector<Case> &out) {
  Picker p(picked.seed() ^ salt);
  for (int rep = 0; rep < reps; ++rep) {
    const int32_t t = rep % 3 == 2 ? NNRT_DTYPE_BF16 : NNRT_DTYPE_F32;
    ConvShape s = pick_conv(p);
    if (rep % 4 == 1) s.o = s.groups = s.c;  // depthwise
    const Dims xd{s.n, s.c, s.h, s.w}, wd{s.o, s.c / s.groups, s.kh, s.kw}, yd{s.n, s.o, s.oh(), s.ow()};
    const double fan_in = double(s.c / s.groups * s.kh * s.kw);
    const Layout l = rep % 2 ? Layout::channels_last : activation_layout(p);
    const std::string group = std::string("conv2d/") + dtype_name(t) + "/bias/fused:" + f.name;
    CaseBuilder b(NNRT_OP_CONV2D, group + "/" + s.name() + "/x:" + layout_name(l) + "/y:" + layout_name(l), group);
    b.in(make_tensor(t, xd, l)).in(make_tensor(t, wd)).in(make_tensor(t, {s.o}));
    nnrt_op_attrs a = conv_attrs(s, f.alg, f.alpha);
    a.beta = f.beta;
    b.out(make_tensor(t, yd, l), std::sqrt(fan_in) + 1).attrs(a);
    out.push_back(b.done());
    if (t != NNRT_DTYPE_F32 || rep % 3 != 0) continue;
    Case special = out.back();
    special.input_fills[0] = Fill::Special(-1, 1);
    special.linear_magnitudes = true;  // finite results may come from cancelling +-3e9 or 1e30 terms
    special.name += "/nan-inf";
    out.push_back(special);
  }
}

void add_conv(Picker &p, std::vector<Case> &out) {
  for (int rep = 0; rep < 40; ++rep) add_conv_triplet(p, NNRT_DTYPE_F32, pick_conv(p), out);
  for (int rep = 0; rep < 12; ++rep) add_conv_triplet(p, NNRT_DTYPE_BF16, pick_conv(p), out);
  for (int rep = 0; rep < 3; ++rep) add_conv_triplet(p, NNRT_DTYPE_F16, pick_conv(p), out);
  for (int rep = 0; rep < 3; ++rep) add_conv_triplet(p, NNRT_DTYPE_F64, pick_conv(p), out);
  // LeNet's two convolutions (examples/lenet.json), on a small batch.
  ConvShape conv1{2, 1, 20, 28, 28, 5, 5, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  ConvShape conv2{2, 20, 50, 12, 12, 5, 5, 1, 2, 2, 1, 1, 0, 0, 0, 0};
  add_conv_triplet(p, NNRT_DTYPE_F32, conv1, out, true);
  add_conv_triplet(p, NNRT_DTYPE_F32, conv2, out, true);
  add_conv_triplet(p, NNRT_DTYPE_BF16, conv2, out);
  // NaN and infinities in x, through the fused activations.
  for (int rep = 0; rep < 4; ++rep) {
    std::vector<Case> three;
    add_conv_triplet(p, NNRT_DTYPE_F32, pick_conv(p), three);
    for (Case &c : three) {
      c.input_fills[c.desc.kind == NNRT_OP_CONV2D_BACKWARD_DATA ? 1 : 0] = Fill::Special(-1, 1);
      c.linear_magnitudes = true;  // finite results may come from cancelling +-3e9 or 1e30 terms
      c.name += "/nan-inf";
      out.push_back(c);
    }
  }
  // A NaN bias (every byte 0xff) in an f32 convolution with a fused relu (a copy of the first such
  // case above): a backend that scans only x and w for NaN would let its relu drop it.
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].desc.kind != NNRT_OP_CONV2D || out[i].name.rfind("conv2d/f32/bias/fused:relu/", 0) != 0) continue;
    Case nan_bias = out[i];
    nan_bias.input_fills[2] = Fill::Poison();
    nan_bias.name += "/nan-bias";
    out.push_back(nan_bias);
    break;
  }
  add_conv_fused(p, 0x5e1u, {NNRT_UNARY_CLIP, "clip", 0, 6}, 12, out);
  // The activations added after SIGN, which the triplets above do not draw.
  for (const FusedActivation &f : fused_activations())
    if (f.alg > NNRT_UNARY_SIGN) add_conv_fused(p, 0xac7u + static_cast<uint64_t>(f.alg), f, 6, out);
}

struct PoolShape {
  int64_t n, c, h, w;
  int32_t kh, kw, sh, sw, pt, pl, pb, pr;
  int64_t oh() const { return (h + pt + pb - kh) / sh + 1; }
  int64_t ow() const { return (w + pl + pr - kw) / sw + 1; }
  std::string name() const {
    auto s = [](int64_t v) { return std::to_string(v); };
    return "n" + s(n) + "c" + s(c) + "h" + s(h) + "w" + s(w) + "/k" + s(kh) + "x" + s(kw) + "/s" + s(sh) + "x" +
           s(sw) + "/p" + s(pt) + "," + s(pl) + "," + s(pb) + "," + s(pr);
  }
};

PoolShape pick_pool(Picker &p, bool whole_padding) {
  PoolShape s{};
  s.n = p.between(1, 3);
  s.c = p.size();
  s.kh = static_cast<int32_t>(p.between(1, 3));
  s.kw = p.chance(0.7) ? s.kh : static_cast<int32_t>(p.between(1, 3));
  s.sh = static_cast<int32_t>(p.between(1, 3));
  s.sw = p.chance(0.7) ? s.sh : static_cast<int32_t>(p.between(1, 3));
  if (whole_padding) {  // the first or last windows see only padding
    s.pt = s.kh;
    s.pl = static_cast<int32_t>(p.between(0, s.kw - 1));
    s.pb = static_cast<int32_t>(p.between(0, s.kh));
    s.pr = s.kw + 1;
  } else {
    s.pt = static_cast<int32_t>(p.between(0, (s.kh - 1) / 2 + (s.kh > 1 ? 1 : 0)));
    s.pt = std::min(s.pt, s.kh - 1);
    s.pb = p.chance(0.6) ? s.pt : static_cast<int32_t>(p.between(0, s.kh - 1));
    s.pl = static_cast<int32_t>(p.between(0, s.kw - 1));
    s.pr = p.chance(0.6) ? s.pl : static_cast<int32_t>(p.between(0, s.kw - 1));
  }
  s.h = p.between(std::max<int64_t>(1, s.kh - s.pt - s.pb), 12);
  s.w = p.between(std::max<int64_t>(1, s.kw - s.pl - s.pr), 12);
  return s;
}

nnrt_op_attrs pool_attrs(const PoolShape &s, int32_t alg) {
  nnrt_op_attrs a = no_attrs();
  a.alg = alg;
  a.kernel[0] = s.kh;
  a.kernel[1] = s.kw;
  a.stride[0] = s.sh;
  a.stride[1] = s.sw;
  a.pad[0] = s.pt;
  a.pad[1] = s.pl;
  a.pad[2] = s.pb;
  a.pad[3] = s.pr;
  return a;
}

// What x of a pool case holds: the usual values (ties for max pooling), NaN and infinities
// sprinkled in, or the edges of max pooling (Fill::max_edges).
enum class PoolFill { usual, special, edges };

// A forward and a backward case. Layouts are picked, or, when `layout` is given, that one for every
// tensor.
void add_pool_pair(Picker &p, int32_t t, int32_t alg, const PoolShape &s, std::vector<Case> &out,
                   bool concurrent = false, PoolFill fill = PoolFill::usual, const Layout *layout = nullptr) {
  static const char *names[] = {"", "max", "avg_include_pad", "avg_exclude_pad"};
  const Dims xd{s.n, s.c, s.h, s.w}, yd{s.n, s.c, s.oh(), s.ow()};
  // Max pooling on tied values: the first maximum of a window wins, in forward and backward.
  // With NaN and infinities: max propagates NaN (the first NaN takes the gradient).
  Fill x = fill == PoolFill::special ? Fill::Special(-2, 2)
           : fill == PoolFill::edges ? Fill::MaxEdges(-2, 2)
                                     : (alg == NNRT_POOL_MAX ? Fill::Ties(-2, 2) : Fill::U(-2, 2));
  const Layout lx = layout ? *layout : activation_layout(p), ly = layout ? *layout : activation_layout(p);
  const double window = double(s.kh * s.kw);
  static const char *fill_names[] = {"", "/nan-inf", "/nan-ninf-ties"};
  std::string layouts = std::string("/x:") + layout_name(lx) + "/y:" + layout_name(ly) + fill_names[int(fill)];
  std::string group = std::string("pool2d/") + names[alg] + "/" + dtype_name(t);
  CaseBuilder f(NNRT_OP_POOL2D, group + "/" + s.name() + layouts, group);
  f.in(make_tensor(t, xd, lx), x).out(make_tensor(t, yd, ly), 1).attrs(pool_attrs(s, alg));
  if (concurrent) f.concurrent();
  out.push_back(f.done());
  std::string bgroup = std::string("pool2d_backward/") + names[alg] + "/" + dtype_name(t);
  CaseBuilder b(NNRT_OP_POOL2D_BACKWARD, bgroup + "/" + s.name() + layouts, bgroup);
  b.in(make_tensor(t, yd, ly)).in(make_tensor(t, xd, lx), x).out(make_tensor(t, xd, lx), std::sqrt(window));
  b.attrs(pool_attrs(s, alg));
  if (concurrent) b.concurrent();
  out.push_back(b.done());
}

void add_pool(Picker &p, std::vector<Case> &out) {
  for (int32_t alg : {NNRT_POOL_MAX, NNRT_POOL_AVG_INCLUDE_PAD, NNRT_POOL_AVG_EXCLUDE_PAD}) {
    for (int rep = 0; rep < 12; ++rep) add_pool_pair(p, NNRT_DTYPE_F32, alg, pick_pool(p, false), out);
    for (int rep = 0; rep < 4; ++rep) add_pool_pair(p, NNRT_DTYPE_BF16, alg, pick_pool(p, false), out);
    add_pool_pair(p, NNRT_DTYPE_F16, alg, pick_pool(p, false), out);
    add_pool_pair(p, NNRT_DTYPE_F64, alg, pick_pool(p, false), out);
    for (int rep = 0; rep < 2; ++rep) add_pool_pair(p, NNRT_DTYPE_F32, alg, pick_pool(p, true), out);
    for (int32_t t : {NNRT_DTYPE_F32, NNRT_DTYPE_BF16})
      for (int rep = 0; rep < 2; ++rep) add_pool_pair(p, t, alg, pick_pool(p, false), out, false, PoolFill::special);
  }
  // LeNet's pooling.
  PoolShape lenet{4, 20, 24, 24, 2, 2, 2, 2, 0, 0, 0, 0};
  add_pool_pair(p, NNRT_DTYPE_F32, NNRT_POOL_MAX, lenet, out, true);
  // Windows that tile the input (kernel == stride, no padding), which a backend may compute with a
  // kernel of its own: window widths 2, 3 and others, rows and columns no window covers, ties,
  // NaN and infinities, strided layouts. Their own picker, so that the cases above keep theirs.
  Picker tiled(p.seed());
  for (PoolShape s : {PoolShape{2, 3, 9, 11, 2, 2, 2, 2, 0, 0, 0, 0}, PoolShape{1, 5, 10, 9, 3, 3, 3, 3, 0, 0, 0, 0},
                      PoolShape{2, 2, 8, 13, 2, 4, 2, 4, 0, 0, 0, 0}, PoolShape{3, 4, 7, 7, 1, 3, 1, 3, 0, 0, 0, 0}}) {
    add_pool_pair(tiled, NNRT_DTYPE_F32, NNRT_POOL_MAX, s, out);
    add_pool_pair(tiled, NNRT_DTYPE_F32, NNRT_POOL_MAX, s, out, false, PoolFill::special);
  }
  // Such windows with every tensor plain or every one channels-last (as prediction plans pass
  // activations), on inputs full of -inf, NaN and ties; LeNet's pools among them.
  for (Layout l : {Layout::contiguous, Layout::channels_last})
    for (PoolShape s : {PoolShape{2, 3, 9, 11, 2, 2, 2, 2, 0, 0, 0, 0},
                        PoolShape{2, 20, 24, 24, 2, 2, 2, 2, 0, 0, 0, 0},
                        PoolShape{3, 50, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0},
                        PoolShape{1, 5, 10, 11, 3, 3, 3, 3, 0, 0, 0, 0},
                        PoolShape{2, 9, 5, 3, 2, 2, 2, 2, 0, 0, 0, 0},
                        PoolShape{1, 4, 8, 7, 2, 4, 2, 4, 0, 0, 0, 0}}) {
      add_pool_pair(tiled, NNRT_DTYPE_F32, NNRT_POOL_MAX, s, out, false, PoolFill::edges, &l);
      add_pool_pair(tiled, NNRT_DTYPE_F32, NNRT_POOL_MAX, s, out, false, PoolFill::usual, &l);
    }
  // Global windows over channels-last images (a network's global pooling as prediction plans run
  // it), whose [N, C, 1, 1] output is the same memory in NCHW and NHWC.
  Picker global(tiled.seed());
  const Layout channels_last = Layout::channels_last;
  for (int32_t alg : {NNRT_POOL_AVG_INCLUDE_PAD, NNRT_POOL_MAX})
    for (PoolShape s : {PoolShape{2, 16, 7, 7, 7, 7, 7, 7, 0, 0, 0, 0}, PoolShape{1, 40, 5, 5, 5, 5, 5, 5, 0, 0, 0, 0},
                        PoolShape{3, 24, 4, 6, 4, 6, 4, 6, 0, 0, 0, 0}})
      add_pool_pair(global, NNRT_DTYPE_F32, alg, s, out, false, PoolFill::usual, &channels_last);
}

}  // namespace

void add_conv_cases(Picker &p, std::vector<Case> &out) { add_conv(p, out); }

// Fixed channels-last cases, added after every random case (whose seeds follow the order of the
// list). Backward data with dY and dX both channels-last, as training passes them on a CPU, which
// the oneDNN plugin may compute as one batched product and a col2im: LeNet's conv2, windows partly
// in padding, and strides that skip input pixels (their gradient is 0).
void add_conv_channels_last_cases(std::vector<Case> &out) {
  for (const ConvShape &s : {ConvShape{3, 20, 50, 12, 12, 5, 5, 1, 2, 2, 1, 1, 0, 0, 0, 0},
                             ConvShape{2, 3, 4, 7, 6, 3, 3, 1, 1, 1, 1, 1, 2, 1, 1, 2},
                             ConvShape{2, 5, 6, 10, 9, 2, 3, 1, 3, 2, 1, 1, 0, 1, 1, 0}}) {
    const Dims xd{s.n, s.c, s.h, s.w}, wd{s.o, s.c, s.kh, s.kw}, yd{s.n, s.o, s.oh(), s.ow()};
    const std::string group = "conv2d_backward_data/f32";
    CaseBuilder b(NNRT_OP_CONV2D_BACKWARD_DATA, group + "/" + s.name() + "/x:nhwc/w:contiguous/y:nhwc", group);
    b.in(make_tensor(NNRT_DTYPE_F32, yd, Layout::channels_last)).in(make_tensor(NNRT_DTYPE_F32, wd, Layout::contiguous));
    b.out(make_tensor(NNRT_DTYPE_F32, xd, Layout::channels_last), std::sqrt(double(s.o * s.kh * s.kw)));
    b.attrs(conv_attrs(s));
    out.push_back(b.done());
  }
  // The weight gradient of a strided 1x1 convolution whose 2 input channels do not fill a vector,
  // channels-last, with a bias (oneDNN 2.6's NHWC kernel wrote past its scratchpad and got it wrong).
  const ConvShape s{3, 2, 1, 12, 3, 1, 1, 1, 3, 3, 1, 1, 0, 0, 0, 0};
  const std::string group = "conv2d_backward_weights/f32/bias";
  CaseBuilder b(NNRT_OP_CONV2D_BACKWARD_WEIGHTS, group + "/" + s.name() + "/x:nhwc/w:contiguous/y:nhwc", group);
  b.in(make_tensor(NNRT_DTYPE_F32, {s.n, s.c, s.h, s.w}, Layout::channels_last))
      .in(make_tensor(NNRT_DTYPE_F32, {s.n, s.o, s.oh(), s.ow()}, Layout::channels_last));
  b.out(make_tensor(NNRT_DTYPE_F32, {s.o, s.c, s.kh, s.kw}), std::sqrt(double(s.n * s.oh() * s.ow())))
      .out(make_tensor(NNRT_DTYPE_F32, {s.o}), std::sqrt(double(s.n * s.oh() * s.ow())));
  b.attrs(conv_attrs(s));
  out.push_back(b.done());
}

void add_pool_cases(Picker &p, std::vector<Case> &out) { add_pool(p, out); }

}  // namespace nnrt::conformance
