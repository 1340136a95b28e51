// The runtime's one comparison of an output with its reference and the one
// tolerance table (rt::checkTolerance), which loom check and loom.check use.
#include "loom/Runtime/Compare.h"
#include "loom/Runtime/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace loom::rt;

namespace {
Tensor f32(std::vector<float> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return Tensor::fromVector(DType::F32, Shape{n}, v);
}
} // namespace

TEST(CheckTolerance, Fp32IsElementwiseNarrowFormatsAgainstTheScale) {
  Tolerance fp32 = checkTolerance("fp32");
  EXPECT_DOUBLE_EQ(fp32.rtol, 1e-3);
  EXPECT_DOUBLE_EQ(fp32.atol, 1e-4);
  EXPECT_DOUBLE_EQ(fp32.scaleTol, 1e-4);
  for (auto [format, scale] : std::vector<std::pair<const char *, double>>{
           {"bf16", 0.04}, {"fp16", 4e-3}, {"fp8", 1.0}, {"int8", 0.2}}) {
    Tolerance t = checkTolerance(format);
    EXPECT_DOUBLE_EQ(t.rtol, 0.0) << format;
    EXPECT_DOUBLE_EQ(t.atol, 0.0) << format;
    EXPECT_DOUBLE_EQ(t.scaleTol, scale) << format;
  }
}

TEST(CheckTolerance, ANarrowKvCacheTakesTheLooserFormat) {
  Tolerance t = checkTolerance("fp32", "fp16");
  EXPECT_DOUBLE_EQ(t.rtol, 0.0);
  EXPECT_DOUBLE_EQ(t.scaleTol, 4e-3);
  EXPECT_DOUBLE_EQ(checkTolerance("fp16", "bf16").scaleTol, 0.04);
}

TEST(CompareTensors, TheScaleSetsTheFloor) {
  // Largest |expected| is 100: a scale tolerance of 0.04 allows 4 anywhere.
  Tensor expected = f32({100, 0.5f, 0});
  Divergence d = compareTensors(expected, f32({100, 3.5f, 0}),
                                checkTolerance("bf16"));
  EXPECT_TRUE(d.ok);
  EXPECT_DOUBLE_EQ(d.maxAbs, 3.0);
  EXPECT_EQ(d.worst, 1);
  EXPECT_FALSE(
      compareTensors(expected, f32({100, 5, 0}), checkTolerance("bf16")).ok);
  EXPECT_FALSE(
      compareTensors(expected, f32({100, 3.5f, 0}), checkTolerance("fp32")).ok);
}

TEST(CompareTensors, InfinitiesOfOneSignMatchNaNAgainstANumberDoesNot) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tolerance t = checkTolerance("fp32");
  EXPECT_TRUE(compareTensors(f32({-inf, 1}), f32({-inf, 1}), t).ok);
  EXPECT_TRUE(compareTensors(f32({nan}), f32({nan}), t).ok);
  EXPECT_FALSE(compareTensors(f32({-inf}), f32({inf}), t).ok);
  Divergence d = compareTensors(f32({1}), f32({nan}), t);
  EXPECT_FALSE(d.ok);
  EXPECT_TRUE(std::isinf(d.maxAbs));
}

TEST(CompareTensors, AnotherShapeOrTypeDoesNotMatch) {
  Tolerance t = checkTolerance("fp32");
  EXPECT_FALSE(compareTensors(f32({1, 2}), f32({1}), t).ok);
  Tensor i64 = Tensor::fromVector(DType::I64, Shape{2},
                                  std::vector<int64_t>{1, 2});
  EXPECT_FALSE(compareTensors(f32({1, 2}), i64, t).ok);
}

TEST(CompareTensors, IntegersMatchOnlyWhenEqual) {
  // Within fp32's rtol of 1e-3 as doubles, but another integer; and two
  // int64 values one apart above 2^53, equal as doubles.
  Tolerance t = checkTolerance("fp32");
  auto i64 = [](std::vector<int64_t> v) {
    return Tensor::fromVector(DType::I64, Shape{int64_t(v.size())}, v);
  };
  Divergence d = compareTensors(i64({1000, 7}), i64({1001, 7}), t);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.worst, 0);
  EXPECT_EQ(d.mismatches, 1);
  const int64_t big = (int64_t(1) << 53) + 1;
  d = compareTensors(i64({big}), i64({big + 1}), t);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.worst, 0);
  EXPECT_TRUE(compareTensors(i64({big, -3}), i64({big, -3}), t).ok);
}

TEST(CompareTensors, CountsTheElementsThatDoNotPass) {
  // ONNX's backend-test tolerance: 1e-7 + 1e-3 |e|, no scale term.
  Tolerance t = onnxTestTolerance();
  EXPECT_DOUBLE_EQ(t.rtol, 1e-3);
  EXPECT_DOUBLE_EQ(t.atol, 1e-7);
  EXPECT_DOUBLE_EQ(t.scaleTol, 0.0);
  Divergence d =
      compareTensors(f32({1000, 1, 0, 0}), f32({1000.5f, 1.01f, 1e-8f, 1}), t);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.mismatches, 2); // 1.01 against 1, and 1 against 0
  EXPECT_EQ(d.worst, 3);
  EXPECT_EQ(compareTensors(f32({1000}), f32({1000.5f}), t).mismatches, 0);
}
