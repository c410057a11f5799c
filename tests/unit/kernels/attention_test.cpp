// The row math of the attention kinds (nnrt/kernels/attention.h): the arithmetic exp the oneDNN
// backend vectorizes against libm's expf, and the softmax row with either exp, in 8 lanes, against
// the plain formula, with NaN, minus infinity and rows that see nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "nnrt/kernels/attention.h"

namespace nnrt::kernels {
namespace {

// Distance in units in the last place between two finite floats of the same sign.
int64_t ulps(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  return std::llabs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));
}

TEST(AttentionKernels, ArithmeticExpIsWithinTwoUlpOfExpf) {
  int64_t worst = 0;
  for (float x = -87.3f; x <= 88.3f; x += 0.0137f) {
    worst = std::max(worst, ulps(k_exp_arithmetic(x), expf(x)));
  }
  EXPECT_LE(worst, 2);
  EXPECT_EQ(k_exp_arithmetic(0.f), 1.f);
  EXPECT_EQ(k_exp_arithmetic(-INFINITY), 0.f);
  EXPECT_EQ(k_exp_arithmetic(-100.f), 0.f);  // expf gives a subnormal or 0 there; this flushes
  EXPECT_EQ(k_exp_arithmetic(INFINITY), INFINITY);
  EXPECT_EQ(k_exp_arithmetic(88.4f), INFINITY);  // documented: finite expf, but above the range
  EXPECT_TRUE(std::isnan(k_exp_arithmetic(NAN)));
}

struct ArithmeticExp {
  float operator()(float x) const { return k_exp_arithmetic(x); }
};

TEST(AttentionKernels, SoftmaxRowMatchesTheFormula) {
  for (int64_t visible : {1, 7, 8, 9, 31}) {
    const int64_t tk = visible + 3;
    std::vector<float> s(static_cast<size_t>(tk)), t;
    for (int64_t j = 0; j < tk; ++j) s[static_cast<size_t>(j)] = std::sin(0.7f * j) * 5;
    double m = -INFINITY, z = 0;
    for (int64_t j = 0; j < visible; ++j) m = std::max(m, double(s[static_cast<size_t>(j)]));
    for (int64_t j = 0; j < visible; ++j) z += std::exp(s[static_cast<size_t>(j)] - m);
    t = s;
    attention_softmax_row(s.data(), visible, tk);
    attention_softmax_row(t.data(), visible, tk, ArithmeticExp());
    for (int64_t j = 0; j < tk; ++j) {
      const double want = j < visible ? std::exp(s.size() ? double(std::sin(0.7f * j) * 5) - m : 0) / z : 0;
      EXPECT_NEAR(s[static_cast<size_t>(j)], want, 1e-6) << "visible " << visible << ", key " << j;
      EXPECT_NEAR(t[static_cast<size_t>(j)], want, 1e-6) << "visible " << visible << ", key " << j;
    }
  }
}

TEST(AttentionKernels, SoftmaxRowSpecialValues) {
  // A NaN in any lane, or in the tail, makes the whole row NaN.
  for (size_t at : {size_t{3}, size_t{9}}) {
    std::vector<float> s(10, 1.f);
    s[at] = NAN;
    attention_softmax_row(s.data(), 10, 10, ArithmeticExp());
    for (float v : s) EXPECT_TRUE(std::isnan(v)) << "NaN at " << at;
  }
  // Minus infinity is a probability of 0; a row of nothing but minus infinity, or that sees
  // nothing, is NaN.
  std::vector<float> s{-INFINITY, 0.f, -INFINITY, 0.f};
  attention_softmax_row(s.data(), 4, 4);
  EXPECT_EQ(s, (std::vector<float>{0.f, 0.5f, 0.f, 0.5f}));
  std::vector<float> hidden(4, -INFINITY), none(4, 1.f);
  attention_softmax_row(hidden.data(), 4, 4);
  attention_softmax_row(none.data(), 0, 4);
  for (float v : hidden) EXPECT_TRUE(std::isnan(v));
  for (float v : none) EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace nnrt::kernels
