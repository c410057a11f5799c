// CONV2D, CONV2D_BACKWARD_DATA and CONV2D_BACKWARD_WEIGHTS against a direct convolution written
// here, with stride, padding, dilation and groups; gradients against finite differences in f64;
// bit-identical results for any layout or thread count.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"

namespace nnrt::reftest {
namespace {

struct Conv {
  int64_t n, c, h, w, o, kh, kw;
  int stride[2], pad[4], dilation[2], groups;

  int64_t oh() const { return (h + pad[0] + pad[2] - dilation[0] * (kh - 1) - 1) / stride[0] + 1; }
  int64_t ow() const { return (w + pad[1] + pad[3] - dilation[1] * (kw - 1) - 1) / stride[1] + 1; }
  std::vector<int64_t> x_dims() const { return {n, c, h, w}; }
  std::vector<int64_t> w_dims() const { return {o, c / groups, kh, kw}; }
  std::vector<int64_t> y_dims() const { return {n, o, oh(), ow()}; }
  nnrt_op_attrs attrs() const {
    nnrt_op_attrs a = attrs_with(0);
    a.stride[0] = stride[0];
    a.stride[1] = stride[1];
    for (int i = 0; i < 4; ++i) a.pad[i] = pad[i];
    a.dilation[0] = dilation[0];
    a.dilation[1] = dilation[1];
    a.groups = groups;
    return a;
  }
};

const Conv kConfigs[] = {
    {2, 3, 6, 5, 4, 3, 3, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
    {2, 4, 7, 6, 6, 3, 2, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2},
    {1, 6, 9, 8, 3, 2, 3, {1, 3}, {2, 1, 0, 2}, {3, 1}, 3},
    {3, 2, 5, 5, 2, 1, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}, 2},  // depthwise 1x1 with padding
};

// y = conv(x, w) + bias, directly from the definition.
std::vector<double> direct_conv(const Conv &g, const Tensor &x, const Tensor &w, const Tensor *bias) {
  const int64_t cg = g.c / g.groups, og = g.o / g.groups, oh = g.oh(), ow = g.ow();
  const std::vector<double> xv = x.values(), wv = w.values();
  std::vector<double> y;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = bias ? bias->at(o) : 0;
          const int64_t group = o / og;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t p = 0; p < g.kh; ++p)
              for (int64_t q = 0; q < g.kw; ++q) {
                const int64_t r = i * g.stride[0] - g.pad[0] + p * g.dilation[0];
                const int64_t t = j * g.stride[1] - g.pad[1] + q * g.dilation[1];
                if (r < 0 || r >= g.h || t < 0 || t >= g.w) continue;
                s += xv[static_cast<size_t>(((n * g.c + group * cg + c) * g.h + r) * g.w + t)] *
                     wv[static_cast<size_t>(((o * cg + c) * g.kh + p) * g.kw + q)];
              }
          y.push_back(s);
        }
  return y;
}

Tensor conv_forward(const Conv &g, const Tensor &x, const Tensor &w, const Tensor *bias, int threads = 1, int fused = 0) {
  Tensor y = Tensor::zeros(x.dtype, g.y_dims());
  nnrt_op_attrs a = g.attrs();
  a.fused = fused;
  RunOptions o;
  o.threads = threads;
  nnrt_status s = bias ? run_op(NNRT_OP_CONV2D, a, {&x, &w, bias}, {&y}, o) : run_op(NNRT_OP_CONV2D, a, {&x, &w}, {&y}, o);
  if (s != NNRT_OK) ADD_FAILURE() << last_error();
  return y;
}

Tensor conv_backward_data(const Conv &g, const Tensor &dy, const Tensor &w, int threads = 1) {
  Tensor dx = Tensor::zeros(dy.dtype, g.x_dims());
  RunOptions o;
  o.threads = threads;
  if (run_op(NNRT_OP_CONV2D_BACKWARD_DATA, g.attrs(), {&dy, &w}, {&dx}, o) != NNRT_OK) ADD_FAILURE() << last_error();
  return dx;
}

std::pair<Tensor, Tensor> conv_backward_weights(const Conv &g, const Tensor &x, const Tensor &dy, int threads = 1) {
  Tensor dw = Tensor::zeros(x.dtype, g.w_dims()), db = Tensor::zeros(x.dtype, {g.o});
  RunOptions o;
  o.threads = threads;
  if (run_op(NNRT_OP_CONV2D_BACKWARD_WEIGHTS, g.attrs(), {&x, &dy}, {&dw, &db}, o) != NNRT_OK) ADD_FAILURE() << last_error();
  return {dw, db};
}

TEST(Conv2d, ForwardMatchesDirectConvolution) {
  for (const Conv &g : kConfigs)
    for (int32_t dtype : kFloatDtypes) {
      Tensor x = Tensor::random(dtype, g.x_dims(), 1), w = Tensor::random(dtype, g.w_dims(), 2);
      Tensor bias = Tensor::random(dtype, {g.o}, 3);
      const double tol = dtype == NNRT_DTYPE_F64 ? 1e-14 : (dtype == NNRT_DTYPE_F32 ? 1e-5 : (dtype == NNRT_DTYPE_F16 ? 4e-3 : 3e-2));
      EXPECT_LT(max_relative_error(conv_forward(g, x, w, &bias).values(), direct_conv(g, x, w, &bias)), tol)
          << dtype_label(dtype) << " groups " << g.groups;
    }
}

TEST(Conv2d, HandComputedWithFusedRelu) {
  // x 1x1x3x3 = 1..9, w = [[1, 0], [0, -1]], bias 1: y = x[i][j] - x[i+1][j+1] + 1 = -3 everywhere.
  Conv g{1, 1, 3, 3, 1, 2, 2, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1};
  Tensor x = Tensor::of(NNRT_DTYPE_F32, g.x_dims(), {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = Tensor::of(NNRT_DTYPE_F32, g.w_dims(), {1, 0, 0, -1}), bias = Tensor::of(NNRT_DTYPE_F32, {1}, {1});
  EXPECT_EQ(conv_forward(g, x, w, &bias).values(), (std::vector<double>{-3, -3, -3, -3}));
  Tensor w2 = Tensor::of(NNRT_DTYPE_F32, g.w_dims(), {-1, 0, 0, 1});
  EXPECT_EQ(conv_forward(g, x, w2, &bias, 1, NNRT_UNARY_RELU).values(), (std::vector<double>{5, 5, 5, 5}));
}

TEST(Conv2dBackward, FiniteDifferencesInF64) {
  for (const Conv &g : kConfigs) {
    Tensor x = Tensor::random(NNRT_DTYPE_F64, g.x_dims(), 4), w = Tensor::random(NNRT_DTYPE_F64, g.w_dims(), 5);
    Tensor bias = Tensor::random(NNRT_DTYPE_F64, {g.o}, 6), dy = Tensor::random(NNRT_DTYPE_F64, g.y_dims(), 7);
    const Tensor dx = conv_backward_data(g, dy, w);
    const auto [dw, db] = conv_backward_weights(g, x, dy);
    auto with_x = [&](const std::vector<double> &v) {
      return conv_forward(g, Tensor::of(NNRT_DTYPE_F64, g.x_dims(), v), w, &bias).values();
    };
    auto with_w = [&](const std::vector<double> &v) {
      return conv_forward(g, x, Tensor::of(NNRT_DTYPE_F64, g.w_dims(), v), &bias).values();
    };
    auto with_bias = [&](const std::vector<double> &v) {
      Tensor b = Tensor::of(NNRT_DTYPE_F64, {g.o}, v);
      return conv_forward(g, x, w, &b).values();
    };
    EXPECT_LT(max_relative_error(dx.values(), numeric_gradient(with_x, x.values(), dy.values())), 1e-8) << g.groups;
    EXPECT_LT(max_relative_error(dw.values(), numeric_gradient(with_w, w.values(), dy.values())), 1e-8) << g.groups;
    EXPECT_LT(max_relative_error(db.values(), numeric_gradient(with_bias, bias.values(), dy.values())), 1e-8);
  }
}

// A LeNet-sized layer: many tiles, weight-gradient chunks, image blocks.
TEST(Conv2dBackward, LargerShapesLayoutsAndThreadsGiveIdenticalBits) {
  const Conv shapes[] = {{16, 1, 28, 28, 20, 5, 5, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
                         {16, 20, 12, 12, 50, 5, 5, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1},
                         {4, 8, 10, 10, 12, 3, 3, {1, 1}, {1, 1, 1, 1}, {2, 2}, 4}};
  for (const Conv &g : shapes) {
    Tensor x = Tensor::random(NNRT_DTYPE_F32, g.x_dims(), 8), w = Tensor::random(NNRT_DTYPE_F32, g.w_dims(), 9);
    Tensor dy = Tensor::random(NNRT_DTYPE_F32, g.y_dims(), 10);
    const Tensor y = conv_forward(g, x, w, nullptr);
    const Tensor dx = conv_backward_data(g, dy, w);
    const auto [dw, db] = conv_backward_weights(g, x, dy);
    EXPECT_LT(max_relative_error(y.values(), direct_conv(g, x, w, nullptr), 1.0), 1e-5);
    // Layouts: x stored NHWC, w stored [KH, KW, C, O], dy with gaps.
    Tensor x_nhwc = x.relayout({0, 2, 3, 1}), w_hwco = w.relayout({2, 3, 1, 0}), dy_spread = dy.relayout({0, 1, 2, 3}, 2);
    EXPECT_EQ(conv_forward(g, x_nhwc, w_hwco, nullptr, 2).values(), y.values());
    EXPECT_EQ(conv_backward_data(g, dy_spread, w_hwco, 2).values(), dx.values());
    const auto [dw2, db2] = conv_backward_weights(g, x_nhwc, dy_spread, 2);
    EXPECT_EQ(dw2.values(), dw.values());
    EXPECT_EQ(db2.values(), db.values());
    // dx and dw against their definitions, summed in double here.
    std::vector<double> dx_ref(static_cast<size_t>(x.numel())), dw_ref(static_cast<size_t>(w.numel()));
    const std::vector<double> xv = x.values(), wv = w.values(), dyv = dy.values();
    const int64_t cg = g.c / g.groups, og = g.o / g.groups;
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t o = 0; o < g.o; ++o)
        for (int64_t i = 0; i < g.oh(); ++i)
          for (int64_t j = 0; j < g.ow(); ++j) {
            const double d = dyv[static_cast<size_t>(((n * g.o + o) * g.oh() + i) * g.ow() + j)];
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t p = 0; p < g.kh; ++p)
                for (int64_t q = 0; q < g.kw; ++q) {
                  const int64_t r = i * g.stride[0] - g.pad[0] + p * g.dilation[0], t = j * g.stride[1] - g.pad[1] + q * g.dilation[1];
                  if (r < 0 || r >= g.h || t < 0 || t >= g.w) continue;
                  const int64_t xi = ((n * g.c + o / og * cg + c) * g.h + r) * g.w + t, wi = ((o * cg + c) * g.kh + p) * g.kw + q;
                  dx_ref[static_cast<size_t>(xi)] += d * wv[static_cast<size_t>(wi)];
                  dw_ref[static_cast<size_t>(wi)] += d * xv[static_cast<size_t>(xi)];
                }
          }
    // dw sums up to 9216 terms: its f32 rounding error is relative to the terms' magnitude (~100x
    // the sum's), hence the looser bound.
    EXPECT_LT(max_relative_error(dx.values(), dx_ref, 1.0), 1e-5);
    EXPECT_LT(max_relative_error(dw.values(), dw_ref, 1.0), 1e-4);
  }
}

TEST(Conv2d, HalvesInBackwardOps) {
  const Conv &g = kConfigs[1];
  for (int32_t dtype : {NNRT_DTYPE_F16, NNRT_DTYPE_BF16}) {
    Tensor x = Tensor::random(dtype, g.x_dims(), 11), w = Tensor::random(dtype, g.w_dims(), 12), dy = Tensor::random(dtype, g.y_dims(), 13);
    const double tol = dtype == NNRT_DTYPE_F16 ? 4e-3 : 3e-2;
    Tensor x64 = x.cast(NNRT_DTYPE_F64), w64 = w.cast(NNRT_DTYPE_F64), dy64 = dy.cast(NNRT_DTYPE_F64);
    EXPECT_LT(max_relative_error(conv_backward_data(g, dy, w).values(), conv_backward_data(g, dy64, w64).values()), tol);
    const auto [dw, db] = conv_backward_weights(g, x, dy);
    const auto [dw64, db64] = conv_backward_weights(g, x64, dy64);
    EXPECT_LT(max_relative_error(dw.values(), dw64.values()), tol);
    EXPECT_LT(max_relative_error(db.values(), db64.values()), tol);
  }
}

TEST(Conv2d, EmptyBatch) {
  Conv g{0, 2, 5, 5, 3, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, g.x_dims()), w = Tensor::random(NNRT_DTYPE_F32, g.w_dims(), 1);
  Tensor dy = Tensor::zeros(NNRT_DTYPE_F32, g.y_dims());
  EXPECT_EQ(conv_forward(g, x, w, nullptr).numel(), 0);
  EXPECT_EQ(conv_backward_data(g, dy, w).numel(), 0);
  const auto [dw, db] = conv_backward_weights(g, x, dy);
  EXPECT_EQ(dw.values(), std::vector<double>(static_cast<size_t>(dw.numel()), 0.0));
}

TEST(Conv2d, RejectsBadDescriptors) {
  Conv g = kConfigs[1];
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, g.x_dims()), w = Tensor::zeros(NNRT_DTYPE_F32, g.w_dims());
  Tensor wrong_y = Tensor::zeros(NNRT_DTYPE_F32, {2, 6, 4, 4});
  EXPECT_EQ(run_op(NNRT_OP_CONV2D, g.attrs(), {&x, &w}, {&wrong_y}), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("floor("), std::string::npos) << last_error();
  EXPECT_NE(last_error().find("[2, 6, 4, 4]"), std::string::npos) << last_error();
  Tensor y = Tensor::zeros(NNRT_DTYPE_F32, g.y_dims());
  nnrt_op_attrs a = g.attrs();
  a.groups = 3;  // does not divide C = 4
  EXPECT_EQ(run_op(NNRT_OP_CONV2D, a, {&x, &w}, {&y}), NNRT_ERR_SHAPE);
  a = g.attrs();
  a.dilation[0] = 0;
  EXPECT_EQ(run_op(NNRT_OP_CONV2D, a, {&x, &w}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
  a = g.attrs();
  a.pad[2] = -1;
  EXPECT_EQ(run_op(NNRT_OP_CONV2D, a, {&x, &w}, {&y}), NNRT_ERR_INVALID_ARGUMENT);
  Tensor big_w = Tensor::zeros(NNRT_DTYPE_F32, {6, 2, 30, 2});
  EXPECT_EQ(run_op(NNRT_OP_CONV2D, g.attrs(), {&x, &big_w}, {&y}), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("does not fit"), std::string::npos) << last_error();
  Tensor w64 = Tensor::zeros(NNRT_DTYPE_F64, g.w_dims());
  EXPECT_EQ(run_op(NNRT_OP_CONV2D, g.attrs(), {&x, &w64}, {&y}), NNRT_ERR_DTYPE);
  Tensor bias = Tensor::zeros(NNRT_DTYPE_F32, {5});
  EXPECT_EQ(run_op(NNRT_OP_CONV2D, g.attrs(), {&x, &w, &bias}, {&y}), NNRT_ERR_SHAPE);
  Tensor db = Tensor::zeros(NNRT_DTYPE_F32, {7}), dw = Tensor::zeros(NNRT_DTYPE_F32, g.w_dims());
  EXPECT_EQ(run_op(NNRT_OP_CONV2D_BACKWARD_WEIGHTS, g.attrs(), {&x, &y}, {&dw, &db}), NNRT_ERR_SHAPE);
}

}  // namespace
}  // namespace nnrt::reftest
