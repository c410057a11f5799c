// kernels/batchnorm.h: the forward formula normalizes a channel to mean beta and standard deviation
// gamma, and the backward formula is the gradient of the forward pass (with batch statistics),
// checked against central finite differences in f64.
#include "nnrt/kernels/batchnorm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using namespace nnrt::kernels;

const double kEps = 1e-5, kGamma = 1.7, kBeta = -0.3;

// y of one channel in training mode: batch mean and biased variance.
std::vector<double> forward(const std::vector<double> &x) {
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  std::vector<double> y;
  for (double v : x) y.push_back(bn_forward(v, mean, bn_scale(kGamma, var, kEps), kBeta));
  return y;
}

const std::vector<double> kX = {0.5, -1.25, 2.0, 0.75, -0.1, 3.2};
const std::vector<double> kDy = {0.3, -0.7, 1.1, 0.05, -0.4, 0.9};

TEST(BatchnormMath, ForwardNormalizesToBetaAndGamma) {
  std::vector<double> y = forward(kX);
  double mean = 0, var = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  for (double v : y) var += (v - mean) * (v - mean);
  var /= static_cast<double>(y.size());
  EXPECT_NEAR(mean, kBeta, 1e-12);
  EXPECT_NEAR(std::sqrt(var), kGamma, 1e-5);  // eps shrinks it a little
}

TEST(BatchnormMath, BackwardIsTheGradientOfTheForwardPass) {
  const double m = static_cast<double>(kX.size());
  double mean = 0, var = 0;
  for (double v : kX) mean += v;
  mean /= m;
  for (double v : kX) var += (v - mean) * (v - mean);
  var /= m;
  const double inv_std = bn_inv_std(var, kEps);
  double sum_dy = 0, sum_dy_xhat = 0;
  for (size_t i = 0; i < kX.size(); ++i) {
    sum_dy += kDy[i];
    sum_dy_xhat += kDy[i] * (kX[i] - mean) * inv_std;
  }
  for (size_t i = 0; i < kX.size(); ++i) {
    const double dx = bn_backward(kDy[i], (kX[i] - mean) * inv_std, kGamma * inv_std, sum_dy / m, sum_dy_xhat / m);
    // d/dx_i of sum_j dy_j * y_j.
    const double h = 1e-6;
    std::vector<double> up = kX, down = kX;
    up[i] += h;
    down[i] -= h;
    std::vector<double> yu = forward(up), yd = forward(down);
    double numeric = 0;
    for (size_t j = 0; j < kX.size(); ++j) numeric += kDy[j] * (yu[j] - yd[j]) / (2 * h);
    EXPECT_NEAR(dx, numeric, 1e-6) << "element " << i;
  }
}

TEST(BatchnormMath, FloatMatchesDouble) {
  EXPECT_FLOAT_EQ(bn_inv_std(3.0f, 1.0f), 0.5f);
  EXPECT_FLOAT_EQ(bn_scale(2.0f, 3.0f, 1.0f), 1.0f);
  EXPECT_FLOAT_EQ(bn_forward(5.0f, 1.0f, 0.5f, 2.0f), 4.0f);
  EXPECT_FLOAT_EQ(bn_backward(1.0f, 2.0f, 3.0f, 0.5f, 0.25f), 0.0f);
}

}  // namespace
