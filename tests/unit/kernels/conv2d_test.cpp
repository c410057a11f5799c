// kernels/conv2d.h: the per-element input gradient against the CPU's formulation (every product
// w * dy scattered into the dx element its tap reads, as im2col's gradient and col2im add them),
// over strides, dilations, asymmetric padding and groups, with NaN and infinite weights: the same
// elements come out NaN or infinite, and the finite ones agree.
#include "nnrt/kernels/conv2d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

using nnrt::kernels::Conv2dGeometry;

struct Problem {
  Conv2dGeometry g;
  int64_t pad_bottom, pad_right;
  std::vector<float> dy, w;
};

std::vector<float> scattered(const Problem &p) {
  const Conv2dGeometry &g = p.g;
  const int64_t cg = g.c / g.groups, og = g.o / g.groups;
  std::vector<float> dx(static_cast<size_t>(g.n * g.c * g.h * g.w), 0.0f);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t y = 0; y < g.oh; ++y)
        for (int64_t x = 0; x < g.ow; ++x)
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t kh = 0; kh < g.kh; ++kh)
              for (int64_t kw = 0; kw < g.kw; ++kw) {
                const int64_t ih = y * g.stride_h - g.pad_top + kh * g.dilation_h;
                const int64_t iw = x * g.stride_w - g.pad_left + kw * g.dilation_w;
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;  // the window reads padding
                const int64_t c = o / og * cg + ci;
                dx[static_cast<size_t>(((n * g.c + c) * g.h + ih) * g.w + iw)] +=
                    p.w[static_cast<size_t>(((o * cg + ci) * g.kh + kh) * g.kw + kw)] *
                    p.dy[static_cast<size_t>(((n * g.o + o) * g.oh + y) * g.ow + x)];
              }
  return dx;
}

std::vector<float> gathered(const Problem &p) {
  const Conv2dGeometry &g = p.g;
  const int64_t cg = g.c / g.groups;
  auto dy_at = [&](int64_t n, int64_t o, int64_t y, int64_t x) {
    return p.dy[static_cast<size_t>(((n * g.o + o) * g.oh + y) * g.ow + x)];
  };
  auto w_at = [&](int64_t o, int64_t ci, int64_t kh, int64_t kw) {
    return p.w[static_cast<size_t>(((o * cg + ci) * g.kh + kh) * g.kw + kw)];
  };
  std::vector<float> dx;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t ih = 0; ih < g.h; ++ih)
        for (int64_t iw = 0; iw < g.w; ++iw)
          dx.push_back(nnrt::kernels::conv2d_input_gradient<float>(g, n, c, ih, iw, dy_at, w_at));
  return dx;
}

int64_t out_size(int64_t in, int64_t pad0, int64_t pad1, int64_t k, int64_t dilation, int64_t stride) {
  const int64_t span = (k - 1) * dilation + 1, padded = in + pad0 + pad1;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

TEST(Conv2dInputGradient, MatchesTheScatteredProductsWithNonFiniteWeights) {
  std::mt19937_64 rng(11);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 0.0f};
  int checked = 0, nonfinite = 0;
  for (int round = 0; round < 300; ++round) {
    Problem p;
    Conv2dGeometry &g = p.g;
    g.groups = pick(1, 3);
    g.c = g.groups * pick(1, 3);
    g.o = g.groups * pick(1, 3);
    g.n = pick(1, 2);
    g.h = pick(1, 9);
    g.w = pick(1, 9);
    g.kh = pick(1, 4);
    g.kw = pick(1, 4);
    g.stride_h = pick(1, 3);
    g.stride_w = pick(1, 3);
    g.dilation_h = pick(1, 2);
    g.dilation_w = pick(1, 2);
    g.pad_top = pick(0, 3);
    g.pad_left = pick(0, 3);
    p.pad_bottom = pick(0, 3);
    p.pad_right = pick(0, 3);
    g.oh = out_size(g.h, g.pad_top, p.pad_bottom, g.kh, g.dilation_h, g.stride_h);
    g.ow = out_size(g.w, g.pad_left, p.pad_right, g.kw, g.dilation_w, g.stride_w);
    if (g.oh == 0 || g.ow == 0) continue;
    p.dy.resize(static_cast<size_t>(g.n * g.o * g.oh * g.ow));
    p.w.resize(static_cast<size_t>(g.o * (g.c / g.groups) * g.kh * g.kw));
    for (float &v : p.dy) v = value(rng);
    for (float &v : p.w) v = pick(0, 9) == 0 ? specials[pick(0, 3)] : value(rng);
    const std::vector<float> want = scattered(p), got = gathered(p);
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ++checked;
      if (std::isnan(want[i]) || std::isinf(want[i])) {
        ++nonfinite;
        if (std::isnan(want[i]))
          EXPECT_TRUE(std::isnan(got[i])) << "round " << round << " element " << i << " got " << got[i];
        else
          EXPECT_EQ(want[i], got[i]) << "round " << round << " element " << i;
      } else {
        EXPECT_NEAR(want[i], got[i], 1e-4f * (1.0f + std::fabs(want[i]))) << "round " << round << " element " << i;
      }
    }
  }
  EXPECT_GT(checked, 10000);
  EXPECT_GT(nonfinite, 100);  // the non-finite weights did reach some elements, and not all
  EXPECT_LT(nonfinite, checked / 2);
}

}  // namespace
