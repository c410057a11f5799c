// POOL2D and POOL2D_BACKWARD: max and both averages against a direct loop written here, windows
// in the padding, NaN, ties, gradients by finite differences in f64.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"

namespace nnrt::reftest {
namespace {

struct Pool {
  int64_t n, c, h, w;
  int kernel[2], stride[2], pad[4];
  int64_t oh() const { return (h + pad[0] + pad[2] - kernel[0]) / stride[0] + 1; }
  int64_t ow() const { return (w + pad[1] + pad[3] - kernel[1]) / stride[1] + 1; }
  std::vector<int64_t> x_dims() const { return {n, c, h, w}; }
  std::vector<int64_t> y_dims() const { return {n, c, oh(), ow()}; }
  nnrt_op_attrs attrs(int alg) const {
    nnrt_op_attrs a = attrs_with(alg);
    for (int i = 0; i < 2; ++i) {
      a.kernel[i] = kernel[i];
      a.stride[i] = stride[i];
    }
    for (int i = 0; i < 4; ++i) a.pad[i] = pad[i];
    return a;
  }
};

const Pool kConfigs[] = {
    {2, 3, 6, 6, {2, 2}, {2, 2}, {0, 0, 0, 0}},
    {1, 2, 7, 5, {3, 2}, {2, 1}, {1, 1, 1, 0}},
    {2, 1, 4, 5, {2, 3}, {1, 2}, {0, 2, 1, 2}},
    {1, 1, 2, 2, {2, 2}, {2, 2}, {2, 2, 2, 2}},  // windows wholly in the padding
};

std::vector<double> direct_pool(const Pool &g, const Tensor &x, int alg) {
  std::vector<double> y;
  const std::vector<double> xv = x.values();
  for (int64_t p = 0; p < g.n * g.c; ++p)
    for (int64_t i = 0; i < g.oh(); ++i)
      for (int64_t j = 0; j < g.ow(); ++j) {
        double m = -INFINITY, s = 0;
        int count = 0;
        for (int64_t r = i * g.stride[0] - g.pad[0]; r < i * g.stride[0] - g.pad[0] + g.kernel[0]; ++r)
          for (int64_t q = j * g.stride[1] - g.pad[1]; q < j * g.stride[1] - g.pad[1] + g.kernel[1]; ++q) {
            if (r < 0 || r >= g.h || q < 0 || q >= g.w) continue;
            const double v = xv[static_cast<size_t>((p * g.h + r) * g.w + q)];
            m = isnan(v) || isnan(m) ? NAN : fmax(m, v);
            s += v;
            ++count;
          }
        if (alg == NNRT_POOL_MAX) y.push_back(m);
        else if (count == 0) y.push_back(0);
        else y.push_back(s / (alg == NNRT_POOL_AVG_INCLUDE_PAD ? g.kernel[0] * g.kernel[1] : count));
      }
  return y;
}

Tensor pool(const Pool &g, const Tensor &x, int alg, int threads = 1) {
  Tensor y = Tensor::zeros(x.dtype, g.y_dims());
  RunOptions o;
  o.threads = threads;
  if (run_op(NNRT_OP_POOL2D, g.attrs(alg), {&x}, {&y}, o) != NNRT_OK) ADD_FAILURE() << last_error();
  return y;
}

Tensor pool_backward(const Pool &g, const Tensor &dy, const Tensor &x, int alg, int threads = 1) {
  Tensor dx = Tensor::zeros(x.dtype, g.x_dims());
  RunOptions o;
  o.threads = threads;
  if (run_op(NNRT_OP_POOL2D_BACKWARD, g.attrs(alg), {&dy, &x}, {&dx}, o) != NNRT_OK) ADD_FAILURE() << last_error();
  return dx;
}

TEST(Pool2d, ForwardMatchesDirectLoopForEveryAlgAndDtype) {
  for (const Pool &g : kConfigs)
    for (int alg = NNRT_POOL_MAX; alg <= NNRT_POOL_AVG_EXCLUDE_PAD; ++alg)
      for (int32_t dtype : kFloatDtypes) {
        Tensor x = Tensor::random(dtype, g.x_dims(), 1);
        const std::vector<double> got = pool(g, x, alg).values(), want = direct_pool(g, x, alg);
        for (size_t i = 0; i < got.size(); ++i) {
          if (isinf(want[i])) {
            EXPECT_EQ(got[i], want[i]);  // a window wholly in the padding: -inf
            continue;
          }
          EXPECT_NEAR(got[i], want[i], dtype == NNRT_DTYPE_BF16 ? 1e-2 : (dtype == NNRT_DTYPE_F16 ? 1e-3 : 1e-6))
              << "alg " << alg << " " << dtype_label(dtype) << " at " << i;
        }
      }
}

TEST(Pool2d, HandComputedWithPaddingAndNaN) {
  Pool g{1, 1, 2, 2, {2, 2}, {1, 1}, {1, 1, 0, 0}};  // 2x2 output, top-left window 3/4 padding
  Tensor x = Tensor::of(NNRT_DTYPE_F32, g.x_dims(), {-1, -2, -3, -4});
  EXPECT_EQ(pool(g, x, NNRT_POOL_MAX).values(), (std::vector<double>{-1, -1, -1, -1}));
  EXPECT_EQ(pool(g, x, NNRT_POOL_AVG_INCLUDE_PAD).values(), (std::vector<double>{-0.25, -0.75, -1, -2.5}));
  EXPECT_EQ(pool(g, x, NNRT_POOL_AVG_EXCLUDE_PAD).values(), (std::vector<double>{-1, -1.5, -2, -2.5}));
  Tensor n = Tensor::of(NNRT_DTYPE_F32, g.x_dims(), {1, NAN, 3, 4});
  const std::vector<double> m = pool(g, n, NNRT_POOL_MAX).values();
  EXPECT_EQ(m[0], 1);
  EXPECT_TRUE(isnan(m[1]) && isnan(m[3]));
  EXPECT_EQ(m[2], 3);
}

TEST(Pool2dBackward, FiniteDifferencesInF64) {
  for (const Pool &g : kConfigs)
    for (int alg = NNRT_POOL_MAX; alg <= NNRT_POOL_AVG_EXCLUDE_PAD; ++alg) {
      Tensor x = Tensor::random(NNRT_DTYPE_F64, g.x_dims(), 2), dy = Tensor::random(NNRT_DTYPE_F64, g.y_dims(), 3);
      const Tensor dx = pool_backward(g, dy, x, alg);
      std::vector<double> weights = dy.values();
      for (size_t i = 0; i < weights.size(); ++i)  // -inf outputs (windows in the padding) have no gradient
        if (isinf(direct_pool(g, x, alg)[i])) weights[i] = 0;
      auto f = [&](const std::vector<double> &v) {
        std::vector<double> y = pool(g, Tensor::of(NNRT_DTYPE_F64, g.x_dims(), v), alg).values();
        for (double &e : y)
          if (isinf(e)) e = 0;
        return y;
      };
      EXPECT_LT(max_relative_error(dx.values(), numeric_gradient(f, x.values(), weights)), 1e-8) << "alg " << alg;
    }
}

TEST(Pool2dBackward, TiesGoToTheFirstMaximumAndThreadsAgree) {
  Pool g{1, 1, 2, 3, {2, 2}, {1, 1}, {0, 0, 0, 0}};
  Tensor x = Tensor::of(NNRT_DTYPE_F32, g.x_dims(), {5, 5, 1, 5, 5, 5}), dy = Tensor::of(NNRT_DTYPE_F32, g.y_dims(), {1, 10});
  EXPECT_EQ(pool_backward(g, dy, x, NNRT_POOL_MAX).values(), (std::vector<double>{1, 10, 0, 0, 0, 0}));
  Pool big{8, 16, 24, 24, {3, 3}, {2, 2}, {1, 1, 1, 1}};
  Tensor bx = Tensor::random(NNRT_DTYPE_F32, big.x_dims(), 4), bdy = Tensor::random(NNRT_DTYPE_F32, big.y_dims(), 5);
  for (int alg = NNRT_POOL_MAX; alg <= NNRT_POOL_AVG_EXCLUDE_PAD; ++alg) {
    Tensor strided = bx.relayout({0, 2, 3, 1});
    EXPECT_EQ(pool(big, strided, alg, 2).values(), pool(big, bx, alg).values());
    EXPECT_EQ(pool_backward(big, bdy, strided, alg, 2).values(), pool_backward(big, bdy, bx, alg).values());
  }
  Tensor h = bx.cast(NNRT_DTYPE_BF16), hdy = bdy.cast(NNRT_DTYPE_BF16);
  Tensor h64 = h.cast(NNRT_DTYPE_F64), hdy64 = hdy.cast(NNRT_DTYPE_F64);
  EXPECT_LT(max_relative_error(pool_backward(big, hdy, h, NNRT_POOL_AVG_INCLUDE_PAD).values(),
                               pool_backward(big, hdy64, h64, NNRT_POOL_AVG_INCLUDE_PAD).values()),
            1e-2);
}

TEST(Pool2d, RejectsBadDescriptors) {
  const Pool &g = kConfigs[0];
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, g.x_dims()), y = Tensor::zeros(NNRT_DTYPE_F32, {2, 3, 2, 2});
  EXPECT_EQ(run_op(NNRT_OP_POOL2D, g.attrs(NNRT_POOL_MAX), {&x}, {&y}), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("[2, 3, 3, 3]"), std::string::npos) << last_error();
  Tensor good = Tensor::zeros(NNRT_DTYPE_F32, g.y_dims());
  nnrt_op_attrs a = g.attrs(NNRT_POOL_MAX);
  a.kernel[0] = 0;
  EXPECT_EQ(run_op(NNRT_OP_POOL2D, a, {&x}, {&good}), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(run_op(NNRT_OP_POOL2D, g.attrs(4), {&x}, {&good}), NNRT_ERR_UNSUPPORTED);
  Tensor x3 = Tensor::zeros(NNRT_DTYPE_F32, {2, 3, 6});
  EXPECT_EQ(run_op(NNRT_OP_POOL2D, g.attrs(NNRT_POOL_MAX), {&x3}, {&good}), NNRT_ERR_SHAPE);
}

}  // namespace
}  // namespace nnrt::reftest
