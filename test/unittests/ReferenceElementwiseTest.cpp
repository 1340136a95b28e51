//===- ReferenceElementwiseTest.cpp - Elementwise reference kernels -------===//
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
Tensor boolT(Shape shape, std::vector<double> v) {
  return make(DType::Bool, std::move(shape), std::move(v));
}

std::vector<double> values(const Tensor &t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numElements(); ++i)
    out.push_back(t.getDouble(i));
  return out;
}

/// Element-wise comparison where NaN equals NaN.
void expectValues(const Tensor &t, const std::vector<double> &want,
                  double tol = 1e-6) {
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " = " << got[i];
    else if (std::isinf(want[i]))
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    else
      EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
  }
}

} // namespace

//===--- Unary ------------------------------------------------------------===//

TEST(RefElementwiseUnary, FloatBasics) {
  Tensor x = f32({5}, {-2, -0.5, 0, 1, 4});
  expectValues(unary(UnaryKind::Neg, x), {2, 0.5, 0, -1, -4});
  expectValues(unary(UnaryKind::Abs, x), {2, 0.5, 0, 1, 4});
  expectValues(unary(UnaryKind::Relu, x), {0, 0, 0, 1, 4});
  expectValues(unary(UnaryKind::Sign, x), {-1, -1, 0, 1, 1});
  expectValues(unary(UnaryKind::Floor, x), {-2, -1, 0, 1, 4});
  expectValues(unary(UnaryKind::Ceil, x), {-2, -0.0, 0, 1, 4});
  expectValues(unary(UnaryKind::Sqrt, f32({2}, {4, 2.25})), {2, 1.5});
  expectValues(unary(UnaryKind::Reciprocal, f32({2}, {4, -0.5})), {0.25, -2});
  expectValues(unary(UnaryKind::Exp, f32({2}, {0, 1})), {1, std::exp(1.0)});
  expectValues(unary(UnaryKind::Log, f32({2}, {1, 0})), {0, -kInf});
  expectValues(unary(UnaryKind::Sigmoid, f32({1}, {0})), {0.5});
  expectValues(unary(UnaryKind::Tanh, f32({1}, {0})), {0});
  expectValues(unary(UnaryKind::Erf, f32({2}, {0, 10})), {0, 1});
  expectValues(unary(UnaryKind::Softsign, f32({2}, {1, -3})), {0.5, -0.75});
  expectValues(unary(UnaryKind::Softplus, f32({3}, {0, 1000, -1000})),
               {std::log(2.0), 1000, 0});
  expectValues(unary(UnaryKind::Atan, f32({1}, {1})), {M_PI / 4});
  expectValues(unary(UnaryKind::Acosh, f32({1}, {1})), {0});
  EXPECT_EQ(unary(UnaryKind::Neg, x).dtype(), DType::F32);
  EXPECT_EQ(unary(UnaryKind::Neg, x).shape(), Shape{5});
}

TEST(RefElementwiseUnary, RoundHalfToEven) {
  Tensor x = f32({8}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6});
  expectValues(unary(UnaryKind::Round, x), {0, 2, 2, -0.0, -2, -2, 2, 3});
}

TEST(RefElementwiseUnary, NaNPropagates) {
  Tensor x = f32({1}, {kNaN});
  expectValues(unary(UnaryKind::Relu, x), {kNaN});
  expectValues(unary(UnaryKind::Sign, x), {kNaN});
  expectValues(unary(UnaryKind::Sqrt, f32({1}, {-1})), {kNaN});
}

TEST(RefElementwiseUnary, Parameterised) {
  Tensor x = f32({3}, {-2, 0.25, 3});
  expectValues(unary(UnaryKind::LeakyRelu, x, {0.1, 0, 0}), {-0.2, 0.25, 3});
  expectValues(unary(UnaryKind::Elu, x, {1, 0, 0}),
               {std::exp(-2.0) - 1, 0.25, 3});
  expectValues(unary(UnaryKind::Selu, x, {2, 0, 3}),
               {3 * (2 * std::exp(-2.0) - 2), 0.75, 9});
  expectValues(unary(UnaryKind::Celu, x, {2, 0, 0}),
               {2 * (std::exp(-1.0) - 1), 0.25, 3});
  expectValues(unary(UnaryKind::HardSigmoid, x, {0.2, 0.5, 0}), {0.1, 0.55, 1});
  expectValues(unary(UnaryKind::HardSwish, f32({4}, {-4, 0, 1, 4})),
               {0, 0, 1.0 / 6 + 0.5, 4});
  expectValues(unary(UnaryKind::ThresholdedRelu, x, {0.25, 0, 0}), {0, 0, 3});
  // Shrink: alpha = lambd, beta = bias.
  expectValues(unary(UnaryKind::Shrink, x, {0.5, 1, 0}), {-1, 0, 2});
}

TEST(RefElementwiseUnary, Integers) {
  int32_t min32 = std::numeric_limits<int32_t>::min();
  Tensor x = make(DType::I32, {4}, {-5, 0, 7, static_cast<double>(min32)});
  Tensor neg = unary(UnaryKind::Neg, x);
  EXPECT_EQ(neg.dtype(), DType::I32);
  EXPECT_EQ(neg.toInts(), (std::vector<int64_t>{5, 0, -7, min32}));
  EXPECT_EQ(unary(UnaryKind::Abs, x).toInts(),
            (std::vector<int64_t>{5, 0, 7, min32}));
  EXPECT_EQ(unary(UnaryKind::Sign, x).toInts(),
            (std::vector<int64_t>{-1, 0, 1, -1}));
  EXPECT_EQ(unary(UnaryKind::Relu, x).toInts(),
            (std::vector<int64_t>{0, 0, 7, 0}));
  Tensor i8 = make(DType::I8, {3}, {-3, 1, 5});
  EXPECT_EQ(unary(UnaryKind::Shrink, i8, {2, 1, 0}).toInts(),
            (std::vector<int64_t>{-2, 0, 4}));
  EXPECT_THROW(unary(UnaryKind::Sqrt, x), Error);
  EXPECT_THROW(unary(UnaryKind::IsNaN, x), Error);
  EXPECT_THROW(unary(UnaryKind::Not, f32({1}, {1})), Error);
}

// On integers Not, And, Or and Xor are bitwise (ONNX's Bitwise* ops).
TEST(RefElementwiseBitwise, IntegersAreBitwise) {
  Tensor x = make(DType::I32, {3}, {-5, 0, 12});
  EXPECT_EQ(unary(UnaryKind::Not, x).toInts(),
            (std::vector<int64_t>{4, -1, -13}));
  Tensor u = make(DType::U8, {2}, {0xF0, 0x0F});
  EXPECT_EQ(unary(UnaryKind::Not, u).toInts(),
            (std::vector<int64_t>{0x0F, 0xF0}));
  Tensor a = make(DType::U8, {3}, {0b1100, 0b1010, 255});
  Tensor b = make(DType::U8, {3}, {0b1010, 0b1010, 1});
  EXPECT_EQ(binary(BinaryKind::And, a, b).toInts(),
            (std::vector<int64_t>{0b1000, 0b1010, 1}));
  EXPECT_EQ(binary(BinaryKind::Or, a, b).toInts(),
            (std::vector<int64_t>{0b1110, 0b1010, 255}));
  EXPECT_EQ(binary(BinaryKind::Xor, a, b).toInts(),
            (std::vector<int64_t>{0b0110, 0, 254}));
  Tensor n = make(DType::I64, {2}, {-1, 6});
  EXPECT_EQ(binary(BinaryKind::And, n, make(DType::I64, {2}, {3, 3})).toInts(),
            (std::vector<int64_t>{3, 2}));
}

TEST(RefElementwiseUnary, BoolAndTests) {
  Tensor b = boolT({3}, {1, 0, 1});
  Tensor n = unary(UnaryKind::Not, b);
  EXPECT_EQ(n.dtype(), DType::Bool);
  expectValues(n, {0, 1, 0});
  EXPECT_THROW(unary(UnaryKind::Neg, b), Error);

  Tensor x = f32({4}, {kNaN, kInf, -kInf, 1});
  Tensor isNaN = unary(UnaryKind::IsNaN, x);
  EXPECT_EQ(isNaN.dtype(), DType::Bool);
  expectValues(isNaN, {1, 0, 0, 0});
  expectValues(unary(UnaryKind::IsInf, x), {0, 1, 1, 0});
  expectValues(unary(UnaryKind::IsInfPos, x), {0, 1, 0, 0});
  expectValues(unary(UnaryKind::IsInfNeg, x), {0, 0, 1, 0});
}

TEST(RefElementwiseUnary, HalfRoundTrip) {
  Tensor h = make(DType::F16, {3}, {1.5, -2.25, 65504});
  Tensor n = unary(UnaryKind::Neg, h);
  EXPECT_EQ(n.dtype(), DType::F16);
  expectValues(n, {-1.5, 2.25, -65504}, 0);
  // exp(12) = 162754.8 overflows fp16 to +inf.
  expectValues(unary(UnaryKind::Exp, make(DType::F16, {1}, {12})), {kInf});
  Tensor bf = make(DType::BF16, {2}, {1, -4});
  expectValues(unary(UnaryKind::Abs, bf), {1, 4}, 0);
}

TEST(RefElementwiseUnary, Empty) {
  Tensor e = f32({0, 3}, {});
  Tensor r = unary(UnaryKind::Exp, e);
  EXPECT_EQ(r.shape(), (Shape{0, 3}));
  EXPECT_EQ(r.numElements(), 0);
  EXPECT_EQ(unary(UnaryKind::IsNaN, e).shape(), (Shape{0, 3}));
}

//===--- Binary -----------------------------------------------------------===//

TEST(RefElementwiseBinary, Broadcasting) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor row = f32({3}, {10, 20, 30});
  Tensor r = binary(BinaryKind::Add, a, row);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  expectValues(r, {11, 22, 33, 14, 25, 36});

  Tensor col = f32({2, 1}, {1, 2});
  Tensor row2 = f32({1, 3}, {1, 10, 100});
  Tensor outer = binary(BinaryKind::Mul, col, row2);
  EXPECT_EQ(outer.shape(), (Shape{2, 3}));
  expectValues(outer, {1, 10, 100, 2, 20, 200});

  Tensor scalar = f32({}, {2});
  expectValues(binary(BinaryKind::Sub, scalar, row), {-8, -18, -28});
  expectValues(binary(BinaryKind::Div, row, scalar), {5, 10, 15});
  EXPECT_EQ(binary(BinaryKind::Add, scalar, scalar).shape(), Shape{});
}

TEST(RefElementwiseBinary, BroadcastShapes) {
  EXPECT_EQ(broadcastShapes({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcastShapes({}, {5}), (Shape{5}));
  EXPECT_EQ(broadcastShapes({0}, {1}), (Shape{0}));
  EXPECT_EQ(broadcastShapes({1, 0}, {3, 1}), (Shape{3, 0}));
  EXPECT_THROW(broadcastShapes({0}, {2}), Error);
  EXPECT_THROW(broadcastShapes({2, 3}, {2}), Error);
}

TEST(RefElementwiseBinary, ErrorsAndEmpty) {
  Tensor a = f32({2}, {1, 2});
  EXPECT_THROW(binary(BinaryKind::Add, a, make(DType::F64, {2}, {1, 2})),
               Error);
  EXPECT_THROW(binary(BinaryKind::Add, a, f32({3}, {1, 2, 3})), Error);
  EXPECT_THROW(binary(BinaryKind::And, a, a), Error);
  Tensor e = binary(BinaryKind::Add, f32({0, 3}, {}), f32({3}, {1, 2, 3}));
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  EXPECT_EQ(e.numElements(), 0);
}

TEST(RefElementwiseBinary, IntegerArithmetic) {
  Tensor a = make(DType::I32, {4}, {7, -7, 7, -7});
  Tensor b = make(DType::I32, {4}, {2, 2, -2, -2});
  Tensor q = binary(BinaryKind::Div, a, b);
  EXPECT_EQ(q.dtype(), DType::I32);
  EXPECT_EQ(q.toInts(), (std::vector<int64_t>{3, -3, -3, 3}));
  EXPECT_EQ(binary(BinaryKind::Mul, a, b).toInts(),
            (std::vector<int64_t>{14, -14, -14, 14}));
  EXPECT_THROW(binary(BinaryKind::Div, a, make(DType::I32, {1}, {0})), Error);

  // Overflow wraps.
  int32_t max32 = std::numeric_limits<int32_t>::max();
  int32_t min32 = std::numeric_limits<int32_t>::min();
  Tensor big = make(DType::I32, {1}, {static_cast<double>(max32)});
  Tensor one = make(DType::I32, {1}, {1});
  EXPECT_EQ(binary(BinaryKind::Add, big, one).toInts()[0], min32);
  Tensor minT = make(DType::I32, {1}, {static_cast<double>(min32)});
  Tensor m1 = make(DType::I32, {1}, {-1});
  EXPECT_EQ(binary(BinaryKind::Div, minT, m1).toInts()[0], min32);
  Tensor u16 = make(DType::U16, {1}, {65535});
  EXPECT_EQ(binary(BinaryKind::Mul, u16, u16).toInts()[0], 1);
  Tensor u8a = make(DType::U8, {1}, {3});
  Tensor u8b = make(DType::U8, {1}, {5});
  EXPECT_EQ(binary(BinaryKind::Sub, u8a, u8b).toInts()[0], 254);
}

TEST(RefElementwiseBinary, ModAndFMod) {
  Tensor a = make(DType::I64, {4}, {5, -5, 5, -5});
  Tensor b = make(DType::I64, {4}, {3, 3, -3, -3});
  EXPECT_EQ(binary(BinaryKind::Mod, a, b).toInts(),
            (std::vector<int64_t>{2, 1, -1, -2}));
  EXPECT_EQ(binary(BinaryKind::FMod, a, b).toInts(),
            (std::vector<int64_t>{2, -2, 2, -2}));
  EXPECT_THROW(binary(BinaryKind::Mod, a, make(DType::I64, {1}, {0})), Error);
  EXPECT_THROW(binary(BinaryKind::FMod, a, make(DType::I64, {1}, {0})), Error);

  Tensor fa = f32({4}, {5.5, -5.5, 5.5, -5.5});
  Tensor fb = f32({4}, {2, 2, -2, -2});
  expectValues(binary(BinaryKind::Mod, fa, fb), {1.5, 0.5, -0.5, -1.5});
  expectValues(binary(BinaryKind::FMod, fa, fb), {1.5, -1.5, 1.5, -1.5});
  expectValues(binary(BinaryKind::FMod, fa, f32({1}, {0})),
               {kNaN, kNaN, kNaN, kNaN});
}

TEST(RefElementwiseBinary, Pow) {
  expectValues(
      binary(BinaryKind::Pow, f32({3}, {2, 4, -2}), f32({3}, {3, 0.5, 2})),
      {8, 2, 4});
  // Exponent of another dtype; the result keeps the base's dtype.
  Tensor base = make(DType::I32, {3}, {3, -2, 0});
  Tensor r = binary(BinaryKind::Pow, base, make(DType::I64, {1}, {4}));
  EXPECT_EQ(r.dtype(), DType::I32);
  EXPECT_EQ(r.toInts(), (std::vector<int64_t>{81, 16, 0}));
  Tensor p = binary(BinaryKind::Pow, make(DType::I64, {1}, {3}),
                    make(DType::I64, {1}, {39}));
  EXPECT_EQ(p.toInts()[0], 4052555153018976267LL); // Exact, beyond 2^53.
  EXPECT_EQ(binary(BinaryKind::Pow, make(DType::I32, {1}, {2}),
                   make(DType::I32, {1}, {-1}))
                .toInts()[0],
            0);
  expectValues(
      binary(BinaryKind::Pow, f32({1}, {2}), make(DType::I64, {1}, {-2})),
      {0.25});
  EXPECT_EQ(binary(BinaryKind::Pow, make(DType::I32, {1}, {9}), f32({1}, {0.5}))
                .toInts()[0],
            3);
}

TEST(RefElementwiseBinary, MinMaxNaN) {
  Tensor a = f32({3}, {1, kNaN, 3});
  Tensor b = f32({3}, {2, 2, kNaN});
  expectValues(binary(BinaryKind::Max, a, b), {2, kNaN, kNaN});
  expectValues(binary(BinaryKind::Min, a, b), {1, kNaN, kNaN});
  Tensor ia = make(DType::I16, {2}, {-4, 9});
  Tensor ib = make(DType::I16, {2}, {3, 2});
  EXPECT_EQ(binary(BinaryKind::Max, ia, ib).toInts(),
            (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(binary(BinaryKind::Min, ia, ib).toInts(),
            (std::vector<int64_t>{-4, 2}));
}

TEST(RefElementwiseBinary, Comparisons) {
  Tensor a = f32({4}, {1, 2, 3, kNaN});
  Tensor b = f32({4}, {2, 2, 2, kNaN});
  Tensor eq = binary(BinaryKind::Equal, a, b);
  EXPECT_EQ(eq.dtype(), DType::Bool);
  expectValues(eq, {0, 1, 0, 0});
  expectValues(binary(BinaryKind::Less, a, b), {1, 0, 0, 0});
  expectValues(binary(BinaryKind::Greater, a, b), {0, 0, 1, 0});
  expectValues(binary(BinaryKind::LessEqual, a, b), {1, 1, 0, 0});
  expectValues(binary(BinaryKind::GreaterEqual, a, b), {0, 1, 1, 0});
  // Integer comparison is exact beyond 2^53.
  Tensor i = Tensor(DType::I64, {2});
  i.setInt(0, (int64_t(1) << 60) + 1);
  i.setInt(1, int64_t(1) << 60);
  Tensor j = Tensor(DType::I64, {1});
  j.setInt(0, int64_t(1) << 60);
  expectValues(binary(BinaryKind::Greater, i, j), {1, 0});
  Tensor bools = boolT({2}, {1, 0});
  expectValues(binary(BinaryKind::Equal, bools, boolT({1}, {1})), {1, 0});
}

TEST(RefElementwiseBinary, Logical) {
  Tensor a = boolT({4}, {0, 0, 1, 1});
  Tensor b = boolT({4}, {0, 1, 0, 1});
  Tensor r = binary(BinaryKind::And, a, b);
  EXPECT_EQ(r.dtype(), DType::Bool);
  expectValues(r, {0, 0, 0, 1});
  expectValues(binary(BinaryKind::Or, a, b), {0, 1, 1, 1});
  expectValues(binary(BinaryKind::Xor, a, b), {0, 1, 1, 0});
  EXPECT_THROW(binary(BinaryKind::Add, a, b), Error);
}

TEST(RefElementwiseBinary, PRelu) {
  Tensor x = f32({2, 2}, {-2, 3, -4, 5});
  expectValues(binary(BinaryKind::PRelu, x, f32({1}, {0.5})), {-1, 3, -2, 5});
  expectValues(binary(BinaryKind::PRelu, x, f32({2}, {0.5, 0.25})),
               {-1, 3, -2, 5});
  expectValues(binary(BinaryKind::PRelu, x, f32({2, 1}, {0.5, 0.25})),
               {-1, 3, -1, 5});
  // The slope must broadcast to x (unidirectional).
  EXPECT_THROW(
      binary(BinaryKind::PRelu, f32({2}, {1, 2}), f32({3, 1}, {1, 2, 3})),
      Error);
}

TEST(RefElementwiseBinary, BitShift) {
  Tensor a = make(DType::U8, {3}, {1, 255, 16});
  Tensor b = make(DType::U8, {3}, {3, 1, 9});
  EXPECT_EQ(binary(BinaryKind::BitShiftLeft, a, b).toInts(),
            (std::vector<int64_t>{8, 254, 0}));
  EXPECT_EQ(binary(BinaryKind::BitShiftRight, a, b).toInts(),
            (std::vector<int64_t>{0, 127, 0}));
  Tensor u32 = make(DType::U32, {2}, {16, 16});
  Tensor s32 = make(DType::U32, {2}, {2, 40});
  EXPECT_EQ(binary(BinaryKind::BitShiftRight, u32, s32).toInts(),
            (std::vector<int64_t>{4, 0}));
  Tensor i32 = make(DType::I32, {1}, {1});
  EXPECT_THROW(binary(BinaryKind::BitShiftLeft, i32, i32), Error);
}

TEST(RefElementwiseBinary, HalfPrecision) {
  // 1 + 2^-11 is halfway between two fp16 values: ties to even gives 1.
  Tensor a = make(DType::F16, {2}, {1, 1});
  Tensor b =
      make(DType::F16, {2}, {std::ldexp(1.0, -11), std::ldexp(1.0, -10)});
  Tensor r = binary(BinaryKind::Add, a, b);
  EXPECT_EQ(r.dtype(), DType::F16);
  expectValues(r, {1, 1 + std::ldexp(1.0, -10)}, 0);
  Tensor bf = make(DType::BF16, {1}, {3});
  expectValues(binary(BinaryKind::Mul, bf, bf), {9}, 0);
}

//===--- Select, Expand, Cast ---------------------------------------------===//

TEST(RefElementwiseSelect, Broadcasting) {
  Tensor cond = boolT({2, 1}, {1, 0});
  Tensor x = make(DType::I64, {1, 3}, {1, 2, 3});
  Tensor y = make(DType::I64, {}, {-1});
  Tensor r = select(cond, x, y);
  EXPECT_EQ(r.dtype(), DType::I64);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(r.toInts(), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
}

TEST(RefElementwiseSelect, Errors) {
  Tensor x = f32({2}, {1, 2});
  EXPECT_THROW(select(f32({2}, {1, 0}), x, x), Error);
  EXPECT_THROW(select(boolT({2}, {1, 0}), x, make(DType::F64, {2}, {1, 2})),
               Error);
  EXPECT_THROW(select(boolT({3}, {1, 0, 1}), x, x), Error);
  EXPECT_EQ(select(boolT({0}, {}), x.reshaped({2, 1}), f32({1}, {5})).shape(),
            (Shape{2, 0}));
}

TEST(RefElementwiseExpand, BroadcastTo) {
  Tensor x = make(DType::I32, {3, 1}, {1, 2, 3});
  Tensor r = broadcastTo(x, {2, 1, 2});
  EXPECT_EQ(r.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(r.dtype(), DType::I32);
  EXPECT_EQ(r.toInts(),
            (std::vector<int64_t>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(broadcastTo(boolT({}, {1}), {2}).toInts(),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(broadcastTo(x, {0, 3, 1}).numElements(), 0);
  EXPECT_THROW(broadcastTo(x, {2, 2}), Error);
}

TEST(RefElementwiseCast, Conversions) {
  Tensor x = f32({4}, {-1.7, 2.9, 0, kNaN});
  Tensor i = cast(x, DType::I32);
  EXPECT_EQ(i.dtype(), DType::I32);
  EXPECT_EQ(i.toInts(), (std::vector<int64_t>{-1, 2, 0, 0}));
  Tensor b = cast(x, DType::Bool);
  EXPECT_EQ(b.dtype(), DType::Bool);
  expectValues(b, {1, 1, 0, 1});
  EXPECT_EQ(cast(make(DType::I32, {2}, {300, -1}), DType::U8).toInts(),
            (std::vector<int64_t>{44, 255}));
  Tensor h = cast(f32({2}, {0.1, 65520}), DType::F16);
  EXPECT_EQ(h.dtype(), DType::F16);
  expectValues(h, {0.0999755859375, kInf}, 0);
  expectValues(cast(h, DType::F32), {0.0999755859375, kInf}, 0);
  expectValues(cast(boolT({2}, {1, 0}), DType::F64), {1, 0});
}
