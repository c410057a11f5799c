// NNRT_OP_QUANTIZE's shared rounding (nnrt/kernels/quantize.h), which clamps before it rounds so
// that it vectorizes, against the contract written plainly: x / scale in double, std::nearbyint
// (ties to even), plus the zero point, saturated; NaN to the zero point.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "nnrt/kernels/quantize.h"

namespace nnrt::kernels {
namespace {

int32_t plain(float x, double scale, int32_t zero_point, int32_t lo, int32_t hi) {
  if (std::isnan(x)) return zero_point;
  const double q = std::nearbyint(static_cast<double>(x) / scale) + zero_point;
  return q < lo ? lo : (q > hi ? hi : static_cast<int32_t>(q));
}

TEST(QuantizeKernel, MatchesThePlainFormula) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  std::vector<float> xs = {0.f, -0.f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 127.5f, 128.5f, -128.5f, 255.5f,
                           1e30f, -1e30f, std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-400.f, 400.f);
  for (int i = 0; i < 20000; ++i) xs.push_back(wide(rng));
  for (int i = -600; i <= 600; ++i) xs.push_back(static_cast<float>(i) * 0.5f);  // every tie in range
  const struct {
    int32_t lo, hi;
  } ranges[] = {{0, 255}, {-128, 127}};
  for (const auto &r : ranges)
    for (double scale : {1.0, 0.5, 0.1, 0.0173, 3.0, 1e-6})
      for (int32_t zero_point : {r.lo, 0 > r.lo ? 0 : r.lo, (r.lo + r.hi) / 2, r.hi})
        for (float x : xs)
          ASSERT_EQ(quantize_value(x, scale, zero_point, r.lo, r.hi), plain(x, scale, zero_point, r.lo, r.hi))
              << "x " << x << ", scale " << scale << ", zero point " << zero_point << ", range [" << r.lo << ", "
              << r.hi << "]";
}

}  // namespace
}  // namespace nnrt::kernels
