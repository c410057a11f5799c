// MATMUL against a plain triple loop in double: shapes that cross every blocking boundary,
// transposed and broadcast operands, bias and fused activations, every float dtype, bit-identical
// results for any layout or thread count, and gradients checked with the forward op itself.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"

namespace nnrt::reftest {
namespace {

struct Expected {
  std::vector<double> value, magnitude;  // the product, and sum |a||b| (the scale of rounding errors)
};

// c[b, i, j] over c's batch dims (a and b indexed through their own strides, so broadcasting works).
Expected naive_matmul(const Tensor &a, const Tensor &b, const Tensor *bias, int fused, double alpha) {
  const int r = a.ndim();
  const int64_t m = a.dims[r - 2], k = a.dims[r - 1], n = b.dims[r - 1];
  int64_t batches = 1;
  for (int d = 0; d < r - 2; ++d) batches *= a.dims[d];
  const std::vector<double> av = a.values(), bv = b.values();
  Expected e;
  for (int64_t t = 0; t < batches; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = bias ? bias->at(j) : 0, mag = bias ? fabs(bias->at(j)) : 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = av[static_cast<size_t>((t * m + i) * k + p)], y = bv[static_cast<size_t>((t * k + p) * n + j)];
          s += x * y;
          mag += fabs(x * y);
        }
        if (fused == NNRT_UNARY_RELU) s = s > 0 ? s : 0;
        if (fused == NNRT_UNARY_LEAKY_RELU) s = s > 0 ? s : alpha * s;
        if (fused == NNRT_UNARY_TANH) s = tanh(s);
        e.value.push_back(s);
        e.magnitude.push_back(mag);
      }
  return e;
}

Tensor run_matmul(const Tensor &a, const Tensor &b, const Tensor *bias, std::vector<int64_t> c_dims, int fused = 0,
                  double alpha = 0, int threads = 1) {
  Tensor c = Tensor::zeros(a.dtype, std::move(c_dims));
  nnrt_op_attrs attrs = attrs_with(0);
  attrs.fused = fused;
  attrs.alpha = alpha;
  RunOptions o;
  o.threads = threads;
  nnrt_status s = bias ? run_op(NNRT_OP_MATMUL, attrs, {&a, &b, bias}, {&c}, o) : run_op(NNRT_OP_MATMUL, attrs, {&a, &b}, {&c}, o);
  if (s != NNRT_OK) ADD_FAILURE() << last_error();
  return c;
}

double unit_roundoff(int32_t dtype) {
  switch (dtype) {
    case NNRT_DTYPE_F64: return ldexp(1, -53);
    case NNRT_DTYPE_F16: return ldexp(1, -11);
    case NNRT_DTYPE_BF16: return ldexp(1, -8);
    default: return ldexp(1, -24);
  }
}

void expect_close(const Tensor &c, const Expected &e, int64_t k) {
  const std::vector<double> got = c.values();
  const double accumulate = (c.dtype == NNRT_DTYPE_F64 ? ldexp(1, -53) : ldexp(1, -24)) * (k + 2);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(fabs(got[i] - e.value[i]), accumulate * e.magnitude[i] + unit_roundoff(c.dtype) * fabs(e.value[i]) + 1e-300)
        << dtype_label(c.dtype) << " element " << i << " got " << got[i] << " want " << e.value[i];
}

TEST(Matmul, ShapesAcrossBlockBoundaries) {
  const int64_t shapes[][3] = {{1, 1, 1}, {5, 3, 7}, {4, 256, 8}, {67, 45, 129}, {130, 300, 600}, {3, 600, 2}};
  for (const auto &s : shapes) {
    Tensor a = Tensor::random(NNRT_DTYPE_F32, {s[0], s[1]}, 1), b = Tensor::random(NNRT_DTYPE_F32, {s[1], s[2]}, 2);
    expect_close(run_matmul(a, b, nullptr, {s[0], s[2]}), naive_matmul(a, b, nullptr, 0, 0), s[1]);
  }
}

TEST(Matmul, EveryDtypeWithBiasAndFusedActivation) {
  for (int32_t dtype : kFloatDtypes) {
    Tensor a = Tensor::random(dtype, {9, 70}, 3), b = Tensor::random(dtype, {70, 11}, 4);
    Tensor bias = Tensor::random(dtype, {11}, 5);
    for (int fused : {0, int{NNRT_UNARY_RELU}, int{NNRT_UNARY_LEAKY_RELU}, int{NNRT_UNARY_TANH}})
      expect_close(run_matmul(a, b, &bias, {9, 11}, fused, 0.25), naive_matmul(a, b, &bias, fused, 0.25), 70);
  }
}

TEST(Matmul, HandComputed) {
  Tensor a = Tensor::of(NNRT_DTYPE_F32, {2, 3}, {1, 2, 3, 4, 5, 6}), b = Tensor::of(NNRT_DTYPE_F32, {3, 2}, {7, 8, 9, 10, 11, 12});
  EXPECT_EQ(run_matmul(a, b, nullptr, {2, 2}).values(), (std::vector<double>{58, 64, 139, 154}));
  Tensor bias = Tensor::of(NNRT_DTYPE_F32, {2}, {-100, -200});
  EXPECT_EQ(run_matmul(a, b, &bias, {2, 2}, NNRT_UNARY_RELU).values(), (std::vector<double>{0, 0, 39, 0}));
  // K = 0: the product is empty, c = bias.
  Tensor e = Tensor::zeros(NNRT_DTYPE_F32, {2, 0}), f = Tensor::zeros(NNRT_DTYPE_F32, {0, 2});
  EXPECT_EQ(run_matmul(e, f, &bias, {2, 2}).values(), (std::vector<double>{-100, -200, -100, -200}));
  Tensor m0 = Tensor::zeros(NNRT_DTYPE_F32, {0, 3});
  EXPECT_EQ(run_matmul(m0, b, nullptr, {0, 2}).numel(), 0);
}

TEST(Matmul, TransposedViewsAndThreadsGiveIdenticalBits) {
  Tensor a = Tensor::random(NNRT_DTYPE_F32, {150, 280}, 6), b = Tensor::random(NNRT_DTYPE_F32, {280, 530}, 7);
  const Tensor base = run_matmul(a, b, nullptr, {150, 530});
  Tensor at = a.relayout({1, 0}), bt = b.relayout({1, 0}, 3);
  EXPECT_EQ(run_matmul(at, bt, nullptr, {150, 530}, 0, 0, 2).values(), base.values());
  Tensor c_strided = Tensor::zeros(NNRT_DTYPE_F32, {150, 530}).relayout({1, 0});
  nnrt_op_attrs attrs = attrs_with(0);
  RunOptions two;
  two.threads = 2;
  ASSERT_EQ(run_op(NNRT_OP_MATMUL, attrs, {&a, &bt}, {&c_strided}, two), NNRT_OK);
  EXPECT_EQ(c_strided.values(), base.values());
  expect_close(base, naive_matmul(a, b, nullptr, 0, 0), 280);
}

TEST(Matmul, BatchedWithBroadcast) {
  // a [2, 3, 4, 5] against b [3, 5, 6] broadcast over the first batch dim (stride 0).
  Tensor a = Tensor::random(NNRT_DTYPE_F64, {2, 3, 4, 5}, 8), b3 = Tensor::random(NNRT_DTYPE_F64, {1, 3, 5, 6}, 9);
  Tensor b = b3.broadcast_to({2, 3, 5, 6});
  Tensor c = run_matmul(a, b, nullptr, {2, 3, 4, 6}, 0, 0, 2);
  std::vector<double> expanded;
  for (int64_t i = 0; i < 2 * 3 * 5 * 6; ++i) expanded.push_back(b3.at(i % 90));
  Tensor b_full = Tensor::of(NNRT_DTYPE_F64, {2, 3, 5, 6}, expanded);
  expect_close(c, naive_matmul(a, b_full, nullptr, 0, 0), 5);
  // A batch dim of size 1 on both sides.
  Tensor a1 = Tensor::random(NNRT_DTYPE_F32, {1, 7, 3}, 10), b1 = Tensor::random(NNRT_DTYPE_F32, {1, 3, 2}, 11);
  expect_close(run_matmul(a1, b1, nullptr, {1, 7, 2}), naive_matmul(a1, b1, nullptr, 0, 0), 3);
}

TEST(Matmul, GradientsThroughTransposedViewsMatchFiniteDifferences) {
  // C = A B, L = sum(W * C): dL/dA = W B^T and dL/dB = A^T W, computed by MATMUL on views.
  Tensor a = Tensor::random(NNRT_DTYPE_F64, {4, 6}, 12), b = Tensor::random(NNRT_DTYPE_F64, {6, 3}, 13);
  Tensor w = Tensor::random(NNRT_DTYPE_F64, {4, 3}, 14);
  const Tensor da = run_matmul(w, b.transposed(0, 1), nullptr, {4, 6});
  const Tensor db = run_matmul(a.transposed(0, 1), w, nullptr, {6, 3});
  auto product_with_a = [&](const std::vector<double> &v) {
    return run_matmul(Tensor::of(NNRT_DTYPE_F64, {4, 6}, v), b, nullptr, {4, 3}).values();
  };
  auto product_with_b = [&](const std::vector<double> &v) {
    return run_matmul(a, Tensor::of(NNRT_DTYPE_F64, {6, 3}, v), nullptr, {4, 3}).values();
  };
  EXPECT_LT(max_relative_error(da.values(), numeric_gradient(product_with_a, a.values(), w.values())), 1e-9);
  EXPECT_LT(max_relative_error(db.values(), numeric_gradient(product_with_b, b.values(), w.values())), 1e-9);
}

TEST(Matmul, RejectsBadDescriptors) {
  Tensor a = Tensor::zeros(NNRT_DTYPE_F32, {2, 3}), b = Tensor::zeros(NNRT_DTYPE_F32, {4, 5});
  Tensor c = Tensor::zeros(NNRT_DTYPE_F32, {2, 5});
  EXPECT_EQ(run_op(NNRT_OP_MATMUL, attrs_with(0), {&a, &b}, {&c}), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("[4, 5]"), std::string::npos) << last_error();
  Tensor v = Tensor::zeros(NNRT_DTYPE_F32, {3});
  EXPECT_EQ(run_op(NNRT_OP_MATMUL, attrs_with(0), {&v, &v}, {&v}), NNRT_ERR_SHAPE);
  Tensor b2 = Tensor::zeros(NNRT_DTYPE_F32, {3, 5}), bias = Tensor::zeros(NNRT_DTYPE_F32, {4});
  EXPECT_EQ(run_op(NNRT_OP_MATMUL, attrs_with(0), {&a, &b2, &bias}, {&c}), NNRT_ERR_SHAPE);
  nnrt_op_attrs bad = attrs_with(0);
  bad.fused = 40;
  EXPECT_EQ(run_op(NNRT_OP_MATMUL, bad, {&a, &b2}, {&c}), NNRT_ERR_UNSUPPORTED);
  Tensor ai = Tensor::zeros(NNRT_DTYPE_I32, {2, 3}), bi = Tensor::zeros(NNRT_DTYPE_I32, {3, 5}), ci = Tensor::zeros(NNRT_DTYPE_I32, {2, 5});
  EXPECT_EQ(run_op(NNRT_OP_MATMUL, attrs_with(0), {&ai, &bi}, {&ci}), NNRT_ERR_DTYPE);
}

}  // namespace
}  // namespace nnrt::reftest
