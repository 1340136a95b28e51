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

//===----------------------------------------------------------------------===//
// The int8 kernels of graph-fold-quantized: matmul and conv on 8-bit
// tensors with zero points, int32 results.
//===----------------------------------------------------------------------===//

namespace {
using loom::rt::DType;
using loom::rt::Tensor;

Tensor random8(DType dt, loom::rt::Shape shape, std::mt19937 &rng) {
  Tensor t(dt, shape);
  std::uniform_int_distribution<int> d(dt == DType::I8 ? -128 : 0,
                                       dt == DType::I8 ? 127 : 255);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setInt(i, d(rng));
  return t;
}

std::vector<int32_t> ints(const Tensor &t) {
  EXPECT_EQ(t.dtype(), DType::I32);
  return std::vector<int32_t>(t.data<int32_t>(),
                              t.data<int32_t>() + t.numElements());
}

TEST(Int8Kernels, MatMulByHand) {
  // [[130, 128]] (uint8, zero point 128) times [[1], [-2]] (int8, zero
  // point -1): (2)(2) + (0)(-1) = 4.
  Tensor a(DType::U8, {1, 2}), b(DType::I8, {2, 1});
  a.setInt(0, 130);
  a.setInt(1, 128);
  b.setInt(0, 1);
  b.setInt(1, -2);
  EXPECT_EQ(ints(loom::rt::ref::qmatmul(a, b, 128, -1)),
            std::vector<int32_t>{4});
  EXPECT_EQ(ints(loom::rt::fast::qmatmul(a, b, 128, -1)),
            std::vector<int32_t>{4});
}

TEST(Int8Kernels, FastMatMulIsBitExactWithTheReference) {
  std::mt19937 rng(5);
  // Batched with broadcasting, mixed signedness, K past one 256 block.
  Tensor a = random8(DType::U8, {2, 3, 300}, rng),
         b = random8(DType::I8, {300, 5}, rng);
  Tensor r = loom::rt::ref::qmatmul(a, b, 7, -3);
  EXPECT_EQ(r.shape(), (loom::rt::Shape{2, 3, 5}));
  EXPECT_EQ(ints(r), ints(loom::rt::fast::qmatmul(a, b, 7, -3)));
  // Through executeOp, as the simulator runs it (the zero points as
  // attributes), in both modes.
  loom::rt::AttrMap attrs;
  attrs["lhs_zero_point"].ints = {7};
  attrs["rhs_zero_point"].ints = {-3};
  for (auto mode : {loom::rt::ExecMode::Reference, loom::rt::ExecMode::Fast})
    EXPECT_EQ(ints(loom::rt::executeOp("matmul", attrs, {a, b},
                                       {{{2, 3, 5}, DType::I32}}, mode)[0]),
              ints(r));
}

TEST(Int8Kernels, ConvPadsWithTheZeroPoint) {
  // A 1x1 input of 200 (zero point 100) under a 3x3 all-ones kernel with
  // padding 1: only the centre tap is inside, the padded taps read the
  // zero point (0 centred), so the sum is 100, plus the bias 5.
  Tensor x(DType::U8, {1, 1, 1, 1}), w(DType::I8, {1, 1, 3, 3});
  x.setInt(0, 200);
  for (int64_t i = 0; i < 9; ++i)
    w.setInt(i, 1);
  Tensor bias(DType::I32, {1});
  bias.setInt(0, 5);
  loom::rt::ref::ConvParams p{{1, 1}, {1, 1}, {1, 1, 1, 1}, 1, {}};
  EXPECT_EQ(ints(loom::rt::ref::qconv(x, w, bias, 100, 0, p)),
            std::vector<int32_t>{105});
}

TEST(Int8Kernels, RefusesAZeroPointOutsideTheType) {
  Tensor a(DType::I8, {1, 1}), b(DType::I8, {1, 1});
  EXPECT_THROW(loom::rt::ref::qmatmul(a, b, 200, 0), std::exception);
  EXPECT_THROW(loom::rt::fast::qmatmul(a, b, 0, -129), std::exception);
}
} // namespace

namespace {
TEST(Int8Calibrated, AFixedScaleSaturatesBeyondItsRange) {
  // Scale 1/8 (calibrated): 1.0 is 8 steps, 0.1875 a tie to 2 steps, and
  // 20 is beyond 127 steps, so it saturates at 127/8 = 15.875; the live
  // tensor's own scale (20/127) would keep it.
  std::vector<float> x = {1.0f, 0.1875f, 20.0f, -20.0f}, out(4);
  loom::rt::roundInputsInt8(x.data(), out.data(), 4, 0.125);
  EXPECT_EQ(out, (std::vector<float>{1.0f, 0.25f, 15.875f, -15.875f}));
  loom::rt::roundInputsInt8(x.data(), out.data(), 4, 0.0);
  EXPECT_EQ(out[2], 20.0f);
}

TEST(Int8Calibrated, MatMulUsesTheOpsCalibratedScales) {
  // [[20]] x [[1]] at int8: with calibrated scales 1/8 and 1/8 the lhs
  // saturates at 15.875; without them it is exact.
  Tensor a(DType::F32, {1, 1}), b(DType::F32, {1, 1});
  a.setDouble(0, 20.0);
  b.setDouble(0, 1.0);
  loom::rt::FastOptions fast;
  fast.inputRounding = InputRounding::Int8;
  loom::rt::AttrMap attrs;
  std::vector<loom::rt::ResultType> types = {{{1, 1}, DType::F32}};
  EXPECT_EQ(loom::rt::executeOp("matmul", attrs, {a, b}, types,
                                loom::rt::ExecMode::Fast, fast)[0]
                .getDouble(0),
            20.0);
  attrs["calibrated_int8_scales"].kind = loom::rt::AttrValue::Kind::Floats;
  attrs["calibrated_int8_scales"].floats = {0.125, 0.125};
  EXPECT_EQ(loom::rt::executeOp("matmul", attrs, {a, b}, types,
                                loom::rt::ExecMode::Fast, fast)[0]
                .getDouble(0),
            15.875);
  // The reference never rounds.
  EXPECT_EQ(loom::rt::executeOp("matmul", attrs, {a, b}, types,
                                loom::rt::ExecMode::Reference, fast)[0]
                .getDouble(0),
            20.0);
}
} // namespace
