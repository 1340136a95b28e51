//===- Int8Test.cpp - The int8 precision policy's per-tensor rounding -----===//
//
// roundInputs(InputRounding::Int8) quantizes a whole tensor with one scale,
// max|x| / 127: each value becomes the nearest multiple of the scale (ties
// to the even multiple) within +-127 of them. Checked on hand-computed
// tensors, and against a brute-force nearest search over the 255 levels.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/OpExecutor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using loom::rt::InputRounding;
using loom::rt::inputRoundingOf;
using loom::rt::roundInputs;

namespace {

std::vector<float> int8(std::vector<float> x) {
  std::vector<float> out(x.size());
  roundInputs(x.data(), out.data(), int64_t(x.size()), InputRounding::Int8);
  return out;
}

TEST(Int8Rounding, IsThePrecisionNamedInt8) {
  EXPECT_EQ(inputRoundingOf("int8"), InputRounding::Int8);
  EXPECT_FALSE(inputRoundingOf("int4").has_value());
}

TEST(Int8Rounding, ByHand) {
  // max |x| = 15.875 = 127 / 8: scale 1/8, exact in binary. 1.0 is 8 steps,
  // 0.1875 is 1.5 steps (a tie: to 2, even), 0.3125 is 2.5 (a tie: to 2),
  // 0.07 is 0.56 (to 1), -15.875 the full -127.
  std::vector<float> got =
      int8({15.875f, 1.0f, 0.1875f, 0.3125f, 0.07f, -15.875f, 0.0f});
  EXPECT_EQ(got, (std::vector<float>{15.875f, 1.0f, 0.25f, 0.25f, 0.125f,
                                     -15.875f, 0.0f}));
  // A value far below the scale flushes to zero.
  got = int8({1.0f, 1e-4f});
  EXPECT_EQ(got[1], 0.0f);
  // All zero stays zero (no scale), and in place works.
  std::vector<float> zeros(4, 0.0f);
  roundInputs(zeros.data(), zeros.data(), 4, InputRounding::Int8);
  EXPECT_EQ(zeros, std::vector<float>(4, 0.0f));
}

// The scale is computed in double: a subnormal largest value, and one near
// FLT_MAX, keep their magnitude; inf and NaN pass through without setting
// the scale of the finite values.
TEST(Int8Rounding, ExtremesAndSpecials) {
  const float tiny = 1.4e-44f, huge = std::numeric_limits<float>::max();
  std::vector<float> got = int8({tiny, 0.0f});
  EXPECT_EQ(got[0], tiny);
  EXPECT_EQ(got[1], 0.0f);
  got = int8({huge, -huge, 0.0f});
  EXPECT_EQ(got[0], huge);
  EXPECT_EQ(got[1], -huge);
  EXPECT_EQ(got[2], 0.0f);
  const float inf = std::numeric_limits<float>::infinity();
  got = int8({-inf, 15.875f, 0.1875f, std::nanf("")});
  EXPECT_EQ(got[0], -inf);
  EXPECT_EQ(got[1], 15.875f);
  EXPECT_EQ(got[2], 0.25f); // quantized at the finite values' scale, 1/8
  EXPECT_TRUE(std::isnan(got[3]));
}

TEST(Int8Rounding, NearestOfTheLevels) {
  std::mt19937 gen(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(1000);
  for (float &v : x)
    v = dist(gen);
  std::vector<float> got = int8(x);
  float maxAbs = 0;
  for (float v : x)
    maxAbs = std::max(maxAbs, std::fabs(v));
  const float s = maxAbs / 127.0f;
  for (size_t i = 0; i < x.size(); ++i) {
    // The nearest of the 255 levels k s, k in [-127, 127].
    double best = 0, bestErr = INFINITY;
    for (int k = -127; k <= 127; ++k) {
      double err = std::fabs(double(x[i]) - double(k * s));
      if (err < bestErr) {
        bestErr = err;
        best = k * s;
      }
    }
    EXPECT_NEAR(got[i], best, 1e-6 * maxAbs) << x[i];
    EXPECT_LE(std::fabs(got[i] - x[i]), 0.5f * s * (1 + 1e-5f)) << x[i];
  }
}

} // namespace
