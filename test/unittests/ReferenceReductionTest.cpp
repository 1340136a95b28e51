//===- ReferenceReductionTest.cpp - Reduction reference kernels -----------===//
#include "loom/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace loom::rt;
using namespace loom::rt::ref;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Tensor make(DType dt, Shape shape, std::vector<double> v) {
  return Tensor::fromVector(dt, std::move(shape), v);
}
Tensor f32(Shape shape, std::vector<double> v) {
  return make(DType::F32, std::move(shape), std::move(v));
}

/// Element-wise comparison where NaN equals NaN.
void expectValues(const Tensor &t, const std::vector<double> &want,
                  double tol = 1e-6) {
  ASSERT_EQ(t.numElements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    double got = t.getDouble(i);
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got)) << "element " << i << " = " << got;
    else if (std::isinf(want[i]))
      EXPECT_EQ(got, want[i]) << "element " << i;
    else
      EXPECT_NEAR(got, want[i], tol) << "element " << i;
  }
}

Tensor reduceRows(ReduceKind kind, const Tensor &x) {
  return reduce(kind, x, {1}, /*keepDims=*/false);
}

} // namespace

//===--- Reduce -----------------------------------------------------------===//

TEST(RefReductionReduce, SumShapes) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = reduce(ReduceKind::Sum, x, {1}, /*keepDims=*/true);
  EXPECT_EQ(r.shape(), (Shape{2, 1}));
  expectValues(r, {6, 15});
  Tensor r0 = reduce(ReduceKind::Sum, x, {0}, /*keepDims=*/false);
  EXPECT_EQ(r0.shape(), (Shape{3}));
  expectValues(r0, {5, 7, 9});
  // Empty axes means all axes.
  Tensor all = reduce(ReduceKind::Sum, x, {}, /*keepDims=*/true);
  EXPECT_EQ(all.shape(), (Shape{1, 1}));
  expectValues(all, {21});
  EXPECT_EQ(reduce(ReduceKind::Sum, x, {}, false).shape(), Shape{});
  EXPECT_EQ(reduce(ReduceKind::Sum, x, {0, 1}, false).shape(), Shape{});
}

TEST(RefReductionReduce, MultipleAxes) {
  Tensor x = f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor r = reduce(ReduceKind::Sum, x, {0, 2}, /*keepDims=*/true);
  EXPECT_EQ(r.shape(), (Shape{1, 2, 1}));
  expectValues(r, {1 + 2 + 5 + 6, 3 + 4 + 7 + 8});
  Tensor m = reduce(ReduceKind::Max, x, {0, 2}, /*keepDims=*/false);
  EXPECT_EQ(m.shape(), (Shape{2}));
  expectValues(m, {6, 8});
}

TEST(RefReductionReduce, AllKinds) {
  Tensor x = f32({2, 3}, {1, -2, 3, 4, 5, 6});
  expectValues(reduceRows(ReduceKind::Mean, x), {2.0 / 3, 5});
  expectValues(reduceRows(ReduceKind::Max, x), {3, 6});
  expectValues(reduceRows(ReduceKind::Min, x), {-2, 4});
  expectValues(reduceRows(ReduceKind::Prod, x), {-6, 120});
  expectValues(reduceRows(ReduceKind::L1, x), {6, 15});
  expectValues(reduceRows(ReduceKind::L2, x),
               {std::sqrt(14.0), std::sqrt(77.0)});
  expectValues(reduceRows(ReduceKind::SumSquare, x), {14, 77});
  expectValues(reduceRows(ReduceKind::LogSum, x),
               {std::log(2.0), std::log(15.0)});
  expectValues(reduceRows(ReduceKind::LogSumExp, x),
               {std::log(std::exp(1.0) + std::exp(-2.0) + std::exp(3.0)),
                std::log(std::exp(4.0) + std::exp(5.0) + std::exp(6.0))},
               1e-5);
}

TEST(RefReductionReduce, LogSumExpIsStable) {
  Tensor x = make(DType::F64, {2, 2}, {1000, 1000, -kInf, -kInf});
  expectValues(reduceRows(ReduceKind::LogSumExp, x),
               {1000 + std::log(2.0), -kInf});
  expectValues(reduceRows(ReduceKind::LogSumExp, f32({1, 2}, {kInf, 1})),
               {kInf});
}

TEST(RefReductionReduce, NaNPropagates) {
  Tensor x = f32({2, 2}, {1, kNaN, kNaN, 2});
  expectValues(reduceRows(ReduceKind::Max, x), {kNaN, kNaN});
  expectValues(reduceRows(ReduceKind::Min, x), {kNaN, kNaN});
  expectValues(reduceRows(ReduceKind::Sum, x), {kNaN, kNaN});
  expectValues(reduceRows(ReduceKind::LogSumExp, x), {kNaN, kNaN});
}

TEST(RefReductionReduce, EmptyGroups) {
  Tensor x = f32({2, 0}, {});
  expectValues(reduceRows(ReduceKind::Sum, x), {0, 0});
  expectValues(reduceRows(ReduceKind::Prod, x), {1, 1});
  expectValues(reduceRows(ReduceKind::Max, x), {-kInf, -kInf});
  expectValues(reduceRows(ReduceKind::Min, x), {kInf, kInf});
  expectValues(reduceRows(ReduceKind::Mean, x), {kNaN, kNaN});
  expectValues(reduceRows(ReduceKind::LogSumExp, x), {-kInf, -kInf});
  // Reducing the non-empty axis of an empty tensor gives an empty result.
  Tensor r = reduce(ReduceKind::Sum, x, {0}, true);
  EXPECT_EQ(r.shape(), (Shape{1, 0}));

  Tensor xi = make(DType::I32, {1, 0}, {});
  EXPECT_EQ(reduceRows(ReduceKind::Max, xi).toInts()[0],
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(reduceRows(ReduceKind::Min, xi).toInts()[0],
            std::numeric_limits<int32_t>::max());
  EXPECT_EQ(reduceRows(ReduceKind::Sum, xi).toInts()[0], 0);
  EXPECT_EQ(reduceRows(ReduceKind::Prod, xi).toInts()[0], 1);
  EXPECT_THROW(reduceRows(ReduceKind::Mean, xi), Error);
}

TEST(RefReductionReduce, Integers) {
  Tensor x = make(DType::I32, {2, 2}, {-3, -4, 5, -2});
  Tensor s = reduceRows(ReduceKind::Sum, x);
  EXPECT_EQ(s.dtype(), DType::I32);
  EXPECT_EQ(s.toInts(), (std::vector<int64_t>{-7, 3}));
  // Integer mean truncates toward zero.
  EXPECT_EQ(reduceRows(ReduceKind::Mean, x).toInts(),
            (std::vector<int64_t>{-3, 1}));
  EXPECT_EQ(reduceRows(ReduceKind::Max, x).toInts(),
            (std::vector<int64_t>{-3, 5}));
  EXPECT_EQ(reduceRows(ReduceKind::Prod, x).toInts(),
            (std::vector<int64_t>{12, -10}));
  EXPECT_EQ(reduceRows(ReduceKind::L1, x).toInts(),
            (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(
      reduceRows(ReduceKind::L2, make(DType::I64, {1, 2}, {3, 4})).toInts(),
      (std::vector<int64_t>{5}));
  // Mean of int8 whose count exceeds the type's range.
  std::vector<double> many(200, 100);
  EXPECT_EQ(
      reduceRows(ReduceKind::Mean, make(DType::U8, {1, 200}, many)).toInts()[0],
      (200 * 100 % 256) / 200);
  // Exact beyond 2^53.
  Tensor big(DType::I64, {2});
  big.setInt(0, (int64_t(1) << 60) + 1);
  big.setInt(1, 2);
  EXPECT_EQ(reduce(ReduceKind::Sum, big, {}, false).toInts()[0],
            (int64_t(1) << 60) + 3);
}

TEST(RefReductionReduce, Bool) {
  Tensor b = make(DType::Bool, {2, 2}, {0, 1, 1, 1});
  Tensor any = reduceRows(ReduceKind::Max, b);
  EXPECT_EQ(any.dtype(), DType::Bool);
  expectValues(any, {1, 1});
  expectValues(reduceRows(ReduceKind::Min, b), {0, 1});
  EXPECT_THROW(reduceRows(ReduceKind::Sum, b), Error);
}

TEST(RefReductionReduce, HalfAndScalar) {
  Tensor h = make(DType::F16, {4}, {0.5, 0.25, 2048, 1});
  Tensor r = reduce(ReduceKind::Sum, h, {0}, false);
  EXPECT_EQ(r.dtype(), DType::F16);
  // 2049.75 in fp64, rounded once to fp16 (step 2 at 2048).
  expectValues(r, {2050}, 0);
  Tensor s = reduce(ReduceKind::Sum, f32({}, {7}), {}, true);
  EXPECT_EQ(s.shape(), Shape{});
  expectValues(s, {7});
}

TEST(RefReductionReduce, Errors) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(reduce(ReduceKind::Sum, x, {2}, false), Error);
  EXPECT_THROW(reduce(ReduceKind::Sum, x, {-1}, false), Error);
  EXPECT_THROW(reduce(ReduceKind::Sum, x, {1, 1}, false), Error);
}

//===--- ArgMax / ArgMin --------------------------------------------------===//

TEST(RefReductionArg, Basic) {
  Tensor x = f32({2, 3}, {1, 3, 3, 2, 2, 1});
  Tensor a = argMax(x, 1, /*keepDims=*/false, /*selectLast=*/false);
  EXPECT_EQ(a.dtype(), DType::I64);
  EXPECT_EQ(a.shape(), (Shape{2}));
  EXPECT_EQ(a.toInts(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(argMax(x, 1, false, true).toInts(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(argMin(x, 1, false, false).toInts(), (std::vector<int64_t>{0, 2}));
  Tensor k = argMin(x, 0, /*keepDims=*/true, false);
  EXPECT_EQ(k.shape(), (Shape{1, 3}));
  EXPECT_EQ(k.toInts(), (std::vector<int64_t>{0, 1, 1}));
}

TEST(RefReductionArg, NaNAndInts) {
  Tensor x = f32({4}, {1, kNaN, 5, kNaN});
  EXPECT_EQ(argMax(x, 0, false, false).toInts()[0], 1);
  EXPECT_EQ(argMax(x, 0, false, true).toInts()[0], 3);
  EXPECT_EQ(argMin(x, 0, false, false).toInts()[0], 1);
  EXPECT_EQ(argMax(x, 0, false, false).shape(), Shape{});

  Tensor big(DType::I64, {2});
  big.setInt(0, (int64_t(1) << 60) + 1);
  big.setInt(1, int64_t(1) << 60);
  EXPECT_EQ(argMax(big, 0, false, false).toInts()[0], 0);
  EXPECT_EQ(argMin(make(DType::U8, {3}, {7, 0, 0}), 0, true, true).toInts(),
            (std::vector<int64_t>{2}));
}

TEST(RefReductionArg, Errors) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(argMax(x, 2, false, false), Error);
  EXPECT_THROW(argMin(f32({2, 0}, {}), 1, false, false), Error);
  EXPECT_EQ(argMax(f32({0, 3}, {}), 1, false, false).shape(), (Shape{0}));
}

//===--- Softmax family ---------------------------------------------------===//

TEST(RefReductionSoftmax, Softmax) {
  double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0);
  double s = e1 + e2 + e3;
  Tensor x = f32({1, 3}, {1, 2, 3});
  expectValues(softmax(x, 1), {e1 / s, e2 / s, e3 / s});
  expectValues(logSoftmax(x, 1),
               {1 - std::log(s), 2 - std::log(s), 3 - std::log(s)});
  expectValues(softmax(f32({2}, {1000, 1000}), 0), {0.5, 0.5});
  expectValues(logSoftmax(f32({2}, {1000, -1000}), 0), {0, -2000});
  // Along axis 0 of a 2x2: each column separately.
  double a = 1 / (1 + e2);
  expectValues(softmax(f32({2, 2}, {1, 2, 3, 4}), 0), {a, a, 1 - a, 1 - a});
  Tensor h = softmax(make(DType::F16, {2}, {0, 0}), 0);
  EXPECT_EQ(h.dtype(), DType::F16);
  expectValues(h, {0.5, 0.5}, 0);
}

TEST(RefReductionSoftmax, Errors) {
  EXPECT_THROW(softmax(make(DType::I32, {2}, {1, 2}), 0), Error);
  EXPECT_THROW(softmax(f32({2}, {1, 2}), 1), Error);
  EXPECT_EQ(softmax(f32({2, 0}, {}), 1).shape(), (Shape{2, 0}));
}

TEST(RefReductionSoftmax, Hardmax) {
  Tensor x = f32({2, 3}, {1, 3, 3, 5, 0, 1});
  Tensor h = hardmax(x, 1);
  EXPECT_EQ(h.dtype(), DType::F32);
  expectValues(h, {0, 1, 0, 1, 0, 0});
  expectValues(hardmax(x, 0), {0, 1, 1, 1, 0, 0});
  EXPECT_THROW(hardmax(x, 2), Error);
}

//===--- Normalisations ---------------------------------------------------===//

TEST(RefReductionNorm, BatchNorm) {
  Tensor x = f32({2, 2, 1}, {1, 2, 3, 4});
  Tensor r = batchNorm(x, f32({2}, {1, 2}), f32({2}, {0, 1}), f32({2}, {1, 2}),
                       f32({2}, {4, 1}), 0.0);
  EXPECT_EQ(r.shape(), (Shape{2, 2, 1}));
  expectValues(r, {0, 1, 1, 5});
  // Mixed parameter dtypes are fine.
  Tensor d = make(DType::F64, {2}, {1, 2});
  expectValues(batchNorm(x, d, f32({2}, {0, 1}), d, f32({2}, {4, 1}), 0.0),
               {0, 1, 1, 5});
  EXPECT_THROW(batchNorm(x, f32({3}, {1, 1, 1}), f32({2}, {0, 1}),
                         f32({2}, {1, 2}), f32({2}, {4, 1}), 0.0),
               Error);
  EXPECT_THROW(batchNorm(f32({2}, {1, 2}), d, d, d, d, 0.0), Error);
}

TEST(RefReductionNorm, LayerNorm) {
  Tensor x = f32({2, 2}, {1, 3, 2, 6});
  Tensor scale = f32({2}, {1, 2});
  expectValues(layerNorm(x, scale, f32({1}, {0.5}), 1, 0.0),
               {-0.5, 2.5, -0.5, 2.5});
  // Absent bias.
  expectValues(layerNorm(x, scale, Tensor(), 1, 0.0), {-1, 2, -1, 2});
  // axis 0: normalise everything; mean 3, variance 3.5.
  double inv = 1 / std::sqrt(3.5);
  expectValues(layerNorm(x, f32({1}, {1}), Tensor(), 0, 0.0),
               {-2 * inv, 0, -1 * inv, 3 * inv});
  // Scale broadcasts against the normalised [2, 2] trailing shape.
  Tensor x3 = f32({1, 2, 2}, {1, 3, 2, 6});
  expectValues(layerNorm(x3, scale, Tensor(), 1, 0.0),
               {-2 * inv, 0, -1 * inv, 6 * inv});
  EXPECT_THROW(layerNorm(x, f32({3}, {1, 1, 1}), Tensor(), 1, 0.0), Error);
  EXPECT_THROW(layerNorm(x, scale, f32({3}, {1, 1, 1}), 1, 0.0), Error);
  EXPECT_THROW(layerNorm(x, scale, Tensor(), 2, 0.0), Error);
  EXPECT_THROW(
      layerNorm(make(DType::I32, {2}, {1, 2}), scale, Tensor(), 0, 0.0), Error);
}

TEST(RefReductionNorm, InstanceNorm) {
  Tensor x = f32({1, 2, 2}, {1, 3, 2, 2});
  Tensor r = instanceNorm(x, f32({2}, {2, 1}), f32({2}, {0, 7}), 1e-5);
  double k = 2 / std::sqrt(1 + 1e-5);
  expectValues(r, {-k, k, 7, 7});
  EXPECT_THROW(instanceNorm(x, f32({1}, {1}), f32({2}, {0, 7}), 1e-5), Error);
  EXPECT_EQ(
      instanceNorm(f32({1, 2, 0}, {}), f32({2}, {1, 1}), f32({2}, {0, 0}), 1e-5)
          .shape(),
      (Shape{1, 2, 0}));
}

//===--- CumSum -----------------------------------------------------------===//

TEST(RefReductionCumSum, Modes) {
  Tensor x = f32({3}, {1, 2, 3});
  expectValues(cumSum(x, 0, false, false), {1, 3, 6});
  expectValues(cumSum(x, 0, true, false), {0, 1, 3});
  expectValues(cumSum(x, 0, false, true), {6, 5, 3});
  expectValues(cumSum(x, 0, true, true), {5, 3, 0});
}

TEST(RefReductionCumSum, AxesAndTypes) {
  Tensor x = make(DType::I32, {2, 2}, {1, 2, 3, 4});
  Tensor r0 = cumSum(x, 0, false, false);
  EXPECT_EQ(r0.dtype(), DType::I32);
  EXPECT_EQ(r0.toInts(), (std::vector<int64_t>{1, 2, 4, 6}));
  EXPECT_EQ(cumSum(x, 1, false, false).toInts(),
            (std::vector<int64_t>{1, 3, 3, 7}));
  EXPECT_EQ(cumSum(x, 1, true, true).toInts(),
            (std::vector<int64_t>{2, 0, 4, 0}));
  EXPECT_THROW(cumSum(x, 2, false, false), Error);
  EXPECT_THROW(cumSum(make(DType::Bool, {2}, {1, 1}), 0, false, false), Error);
  EXPECT_EQ(cumSum(f32({0}, {}), 0, false, false).numElements(), 0);
}
