//===- ReferenceDataMovementTest.cpp - Data-movement reference kernels ----===//
//
// Hand-computed (or ONNX-documented) expected values for the data-movement
// reference kernels.
//
//===----------------------------------------------------------------------===//
#include "loom/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>

using namespace loom::rt;
using namespace loom::rt::ref;

namespace {

Tensor f32(Shape shape, const std::vector<double> &v) {
  return Tensor::fromVector(DType::F32, std::move(shape), v);
}
Tensor i64(Shape shape, const std::vector<int64_t> &v) {
  return Tensor::fromVector(DType::I64, std::move(shape), v);
}
/// A tensor of `shape` holding 0, 1, 2, ... in `dt`.
Tensor iota(DType dt, Shape shape) {
  Tensor t(dt, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, static_cast<double>(i));
  return t;
}
std::vector<double> values(const Tensor &t) {
  std::vector<double> v(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i)
    v[i] = t.getDouble(i);
  return v;
}
void expectNear(const Tensor &t, const std::vector<double> &want,
                double tol = 1e-5) {
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << "at flat index " << i;
}

} // namespace

//===--- Transpose, Concat, Slice -----------------------------------------===//

TEST(RefDataTranspose, Matrix) {
  Tensor y = transpose(iota(DType::F32, {2, 3}), {1, 0});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(y), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(RefDataTranspose, Rank3AndInt64) {
  // x[i][j][k] = 6i + 3j + k, shape 2x2x3; perm (2, 0, 1) -> y[k][i][j].
  Tensor y = transpose(iota(DType::I64, {2, 2, 3}), {2, 0, 1});
  EXPECT_EQ(y.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(y.toInts(),
            (std::vector<int64_t>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
  Tensor s = transpose(f32({}, {7}), {});
  EXPECT_EQ(values(s), (std::vector<double>{7}));
}

TEST(RefDataTranspose, BadPerm) {
  Tensor x = iota(DType::F32, {2, 3});
  EXPECT_THROW(transpose(x, {0, 0}), Error);
  EXPECT_THROW(transpose(x, {0}), Error);
  EXPECT_THROW(transpose(x, {0, 2}), Error);
}

TEST(RefDataConcat, Axes) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 1}, {5, 6});
  Tensor y = concat({a, b}, 1);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y), (std::vector<double>{1, 2, 5, 3, 4, 6}));
  Tensor z = concat({a, f32({1, 2}, {7, 8}), f32({0, 2}, {})}, 0);
  EXPECT_EQ(z.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(z), (std::vector<double>{1, 2, 3, 4, 7, 8}));
}

TEST(RefDataConcat, Errors) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_THROW(concat({}, 0), Error);
  EXPECT_THROW(concat({a, f32({2, 1}, {5, 6})}, 0), Error);
  EXPECT_THROW(concat({a, a}, 2), Error);
  EXPECT_THROW(concat({a, i64({2, 2}, {1, 2, 3, 4})}, 0), Error);
  EXPECT_THROW(concat({a, f32({4}, {1, 2, 3, 4})}, 0), Error);
}

TEST(RefDataSlice, Steps) {
  Tensor x = iota(DType::I32, {10});
  EXPECT_EQ(slice(x, {1}, {8}, {0}, {3}).toInts(),
            (std::vector<int64_t>{1, 4, 7}));
  // Negative step through index 0 (end clamped to -1).
  EXPECT_EQ(slice(x, {9}, {-1}, {0}, {-2}).toInts(),
            (std::vector<int64_t>{9, 7, 5, 3, 1}));
  EXPECT_EQ(slice(x, {5}, {5}, {0}, {1}).numElements(), 0);
  EXPECT_EQ(slice(x, {2}, {4}, {0}, {}).toInts(), (std::vector<int64_t>{2, 3}));
}

TEST(RefDataSlice, TwoAxes) {
  // 3x4: [[0,1,2,3],[4,5,6,7],[8,9,10,11]]; rows 2..0 step -1, cols 1..3.
  Tensor y = slice(iota(DType::F32, {3, 4}), {1, 2}, {3, -1}, {1, 0}, {1, -1});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(y), (std::vector<double>{9, 10, 5, 6, 1, 2}));
}

TEST(RefDataSlice, Errors) {
  Tensor x = iota(DType::F32, {4});
  EXPECT_THROW(slice(x, {0}, {5}, {0}, {1}), Error);
  EXPECT_THROW(slice(x, {0}, {2}, {0}, {0}), Error);
  EXPECT_THROW(slice(x, {0}, {2}, {1}, {1}), Error);
  EXPECT_THROW(slice(x, {0, 0}, {2}, {0}, {1}), Error);
  EXPECT_THROW(slice(x, {4}, {0}, {0}, {-1}), Error);
}

//===--- Gather family ----------------------------------------------------===//

TEST(RefDataGather, Axis0And1) {
  Tensor x = f32({3, 2}, {1, 1.2, 2.3, 3.4, 4.5, 5.7});
  Tensor y = gather(x, i64({2, 2}, {0, 1, 1, 2}), 0);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  expectNear(y, {1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7});
  Tensor z = gather(
      x, Tensor::fromVector(DType::I32, {1, 2}, std::vector<int>{-1, 0}), 1);
  EXPECT_EQ(z.shape(), (Shape{3, 1, 2}));
  expectNear(z, {1.2, 1, 3.4, 2.3, 5.7, 4.5});
  Tensor s = gather(x, i64({}, {2}), 0);
  EXPECT_EQ(s.shape(), (Shape{2}));
  expectNear(s, {4.5, 5.7});
}

TEST(RefDataGather, Errors) {
  Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(gather(x, i64({1}, {3}), 0), Error);
  EXPECT_THROW(gather(x, i64({1}, {-4}), 0), Error);
  EXPECT_THROW(gather(x, i64({1}, {0}), 2), Error);
  EXPECT_THROW(gather(x, f32({1}, {0}), 0), Error);
}

TEST(RefDataGatherElements, OnnxExamples) {
  Tensor a =
      gatherElements(f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0}), 1);
  EXPECT_EQ(values(a), (std::vector<double>{1, 1, 4, 3}));
  Tensor b = gatherElements(f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                            i64({2, 3}, {1, 2, 0, 2, 0, 0}), 0);
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(b), (std::vector<double>{4, 8, 3, 7, 2, 3}));
  Tensor c = gatherElements(f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                            i64({2, 3}, {-1, -2, 0, -2, 0, 0}), 0);
  EXPECT_EQ(values(c), (std::vector<double>{7, 5, 3, 4, 2, 3}));
}

TEST(RefDataGatherElements, Errors) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_THROW(gatherElements(x, i64({2, 2}, {0, 2, 0, 0}), 1), Error);
  EXPECT_THROW(gatherElements(x, i64({2}, {0, 0}), 0), Error);
  EXPECT_THROW(gatherElements(x, i64({3, 1}, {0, 0, 0}), 1), Error);
  EXPECT_THROW(gatherElements(x, i64({2, 2}, {0, 0, 0, 0}), 2), Error);
}

TEST(RefDataGatherND, OnnxExamples) {
  Tensor x = i64({2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(gatherND(x, i64({2, 2}, {0, 0, 1, 1}), 0).toInts(),
            (std::vector<int64_t>{0, 3}));
  Tensor rows = gatherND(x, i64({2, 1}, {1, 0}), 0);
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_EQ(rows.toInts(), (std::vector<int64_t>{2, 3, 0, 1}));
  Tensor x3 = iota(DType::I64, {2, 2, 2});
  Tensor d = gatherND(x3, i64({2, 1, 2}, {0, 1, 1, 0}), 0);
  EXPECT_EQ(d.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(d.toInts(), (std::vector<int64_t>{2, 3, 4, 5}));
  Tensor b = gatherND(x3, i64({2, 1}, {1, 0}), 1);
  EXPECT_EQ(b.shape(), (Shape{2, 2}));
  EXPECT_EQ(b.toInts(), (std::vector<int64_t>{2, 3, 4, 5}));
}

TEST(RefDataGatherND, Errors) {
  Tensor x = i64({2, 2}, {0, 1, 2, 3});
  EXPECT_THROW(gatherND(x, i64({1, 3}, {0, 0, 0}), 0), Error);
  EXPECT_THROW(gatherND(x, i64({1, 2}, {0, 2}), 0), Error);
  EXPECT_THROW(gatherND(x, i64({3, 1}, {0, 0, 0}), 1), Error);
  EXPECT_THROW(gatherND(x, i64({2, 1}, {0, 0}), 2), Error);
}

//===--- Scatter family ---------------------------------------------------===//

TEST(RefDataScatterND, OnnxExample) {
  Tensor x = f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor y = scatterND(x, i64({4, 1}, {4, 3, 1, 7}), f32({4}, {9, 10, 11, 12}),
                       ScatterReduction::None);
  EXPECT_EQ(values(y), (std::vector<double>{1, 11, 3, 10, 9, 6, 7, 12}));
  EXPECT_EQ(values(x)[1], 2); // Input untouched.
}

TEST(RefDataScatterND, SlicesAndReductions) {
  Tensor x = iota(DType::I32, {2, 2});
  // Update whole rows; index -1 wraps to row 1.
  Tensor y =
      scatterND(x, i64({1, 1}, {-1}),
                Tensor::fromVector(DType::I32, {1, 2}, std::vector<int>{7, 8}),
                ScatterReduction::None);
  EXPECT_EQ(y.toInts(), (std::vector<int64_t>{0, 1, 7, 8}));
  Tensor idx = i64({2, 2}, {0, 1, 0, 1});
  Tensor upd = Tensor::fromVector(DType::I32, {2}, std::vector<int>{5, 3});
  EXPECT_EQ(scatterND(x, idx, upd, ScatterReduction::Add).toInts(),
            (std::vector<int64_t>{0, 9, 2, 3}));
  EXPECT_EQ(scatterND(x, idx, upd, ScatterReduction::Mul).toInts(),
            (std::vector<int64_t>{0, 15, 2, 3}));
  EXPECT_EQ(scatterND(x, idx, upd, ScatterReduction::Max).toInts(),
            (std::vector<int64_t>{0, 5, 2, 3}));
  EXPECT_EQ(scatterND(x, idx, upd, ScatterReduction::Min).toInts(),
            (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(RefDataScatterND, Errors) {
  Tensor x = iota(DType::F32, {2, 2});
  EXPECT_THROW(scatterND(x, i64({1, 1}, {2}), f32({1, 2}, {1, 2}),
                         ScatterReduction::None),
               Error);
  EXPECT_THROW(
      scatterND(x, i64({1, 1}, {0}), f32({2}, {1, 2}), ScatterReduction::None),
      Error);
  EXPECT_THROW(scatterND(x, i64({1, 3}, {0, 0, 0}), f32({1}, {1}),
                         ScatterReduction::None),
               Error);
  EXPECT_THROW(scatterND(x, i64({1, 1}, {0}), i64({1, 2}, {1, 2}),
                         ScatterReduction::None),
               Error);
}

TEST(RefDataScatterElements, OnnxExamples) {
  Tensor y = scatterElements(
      f32({3, 3}, std::vector<double>(9, 0.0)), i64({2, 3}, {1, 0, 2, 0, 2, 1}),
      f32({2, 3}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2}), 0, ScatterReduction::None);
  expectNear(y, {2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2});
  Tensor z =
      scatterElements(f32({1, 5}, {1, 2, 3, 4, 5}), i64({1, 2}, {1, -2}),
                      f32({1, 2}, {1.1, 2.1}), 1, ScatterReduction::None);
  expectNear(z, {1, 1.1, 3, 2.1, 5});
}

TEST(RefDataScatterElements, Reductions) {
  Tensor x = f32({1, 5}, {1, 2, 3, 4, 5});
  Tensor idx = i64({1, 2}, {1, 1});
  Tensor upd = f32({1, 2}, {1.1, 2.1});
  auto run = [&](ScatterReduction r) {
    return scatterElements(x, idx, upd, 1, r);
  };
  expectNear(run(ScatterReduction::Add), {1, 5.2, 3, 4, 5});
  expectNear(run(ScatterReduction::Mul), {1, 2 * 1.1 * 2.1, 3, 4, 5});
  expectNear(run(ScatterReduction::Max), {1, 2.1, 3, 4, 5});
  expectNear(run(ScatterReduction::Min), {1, 1.1, 3, 4, 5});
  expectNear(run(ScatterReduction::None), {1, 2.1, 3, 4, 5});
}

TEST(RefDataScatterElements, BoolAndHalf) {
  Tensor b = Tensor::fromVector(DType::Bool, {3}, std::vector<int>{0, 1, 0});
  Tensor ub = Tensor::fromVector(DType::Bool, {2}, std::vector<int>{1, 0});
  EXPECT_EQ(scatterElements(b, i64({2}, {0, 1}), ub, 0, ScatterReduction::Add)
                .toInts(),
            (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(scatterElements(b, i64({2}, {0, 1}), ub, 0, ScatterReduction::Mul)
                .toInts(),
            (std::vector<int64_t>{0, 0, 0}));
  Tensor h = Tensor::fromVector(DType::F16, {2}, std::vector<double>{1.5, 2});
  Tensor uh = Tensor::fromVector(DType::F16, {1}, std::vector<double>{0.25});
  expectNear(scatterElements(h, i64({1}, {1}), uh, 0, ScatterReduction::Add),
             {1.5, 2.25});
}

TEST(RefDataScatterElements, Errors) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_THROW(scatterElements(x, i64({1, 1}, {2}), f32({1, 1}, {0}), 0,
                               ScatterReduction::None),
               Error);
  EXPECT_THROW(scatterElements(x, i64({1, 1}, {0}), f32({1, 2}, {0, 0}), 0,
                               ScatterReduction::None),
               Error);
  EXPECT_THROW(scatterElements(x, i64({1, 1}, {0}), f32({1, 1}, {0}), 2,
                               ScatterReduction::None),
               Error);
}

//===--- Tile, Pad
//---------------------------------------------------------===//

TEST(RefDataTile, Basic) {
  EXPECT_EQ(values(tile(f32({2}, {1, 2}), {3})),
            (std::vector<double>{1, 2, 1, 2, 1, 2}));
  Tensor y = tile(f32({2, 2}, {1, 2, 3, 4}), {2, 2});
  EXPECT_EQ(y.shape(), (Shape{4, 4}));
  EXPECT_EQ(values(y), (std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2,
                                            3, 4, 3, 4}));
  EXPECT_EQ(tile(f32({2}, {1, 2}), {0}).numElements(), 0);
  EXPECT_THROW(tile(f32({2}, {1, 2}), {1, 1}), Error);
  EXPECT_THROW(tile(f32({2}, {1, 2}), {-1}), Error);
}

TEST(RefDataPad, Modes1D) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  EXPECT_EQ(values(pad(x, {1, 2}, PadMode::Constant, 9)),
            (std::vector<double>{9, 1, 2, 3, 4, 9, 9}));
  EXPECT_EQ(values(pad(x, {2, 2}, PadMode::Reflect, 0)),
            (std::vector<double>{3, 2, 1, 2, 3, 4, 3, 2}));
  EXPECT_EQ(values(pad(x, {2, 2}, PadMode::Edge, 0)),
            (std::vector<double>{1, 1, 1, 2, 3, 4, 4, 4}));
  EXPECT_EQ(values(pad(x, {2, 3}, PadMode::Wrap, 0)),
            (std::vector<double>{3, 4, 1, 2, 3, 4, 1, 2, 3}));
}

TEST(RefDataPad, NegativeCrops) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  EXPECT_EQ(values(pad(x, {-1, 1}, PadMode::Constant, 0)),
            (std::vector<double>{2, 3, 4, 0}));
  EXPECT_EQ(values(pad(x, {-1, -2}, PadMode::Constant, 0)),
            (std::vector<double>{2}));
  // Crop to [2, 3, 4], then edge-pad the cropped range.
  EXPECT_EQ(values(pad(x, {-1, 1}, PadMode::Edge, 0)),
            (std::vector<double>{2, 3, 4, 4}));
  EXPECT_THROW(pad(x, {-3, -2}, PadMode::Constant, 0), Error);
  EXPECT_THROW(pad(x, {1}, PadMode::Constant, 0), Error);
}

TEST(RefDataPad, OnnxExamples2D) {
  Tensor x = f32({3, 2}, {1.0, 1.2, 2.3, 3.4, 4.5, 5.7});
  expectNear(pad(x, {0, 2, 0, 0}, PadMode::Constant, 0),
             {0, 0, 1.0, 1.2, 0, 0, 2.3, 3.4, 0, 0, 4.5, 5.7});
  expectNear(pad(x, {0, 2, 0, 0}, PadMode::Reflect, 0),
             {1.0, 1.2, 1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7});
  expectNear(pad(x, {0, 2, 0, 0}, PadMode::Edge, 0),
             {1.0, 1.0, 1.0, 1.2, 2.3, 2.3, 2.3, 3.4, 4.5, 4.5, 4.5, 5.7});
  Tensor w = pad(x, {1, 1, 0, 0}, PadMode::Wrap, 0);
  EXPECT_EQ(w.shape(), (Shape{4, 3}));
  expectNear(w, {5.7, 4.5, 5.7, 1.2, 1.0, 1.2, 3.4, 2.3, 3.4, 5.7, 4.5, 5.7});
}

TEST(RefDataPad, IntegerConstant) {
  Tensor x = Tensor::fromVector(DType::I8, {2}, std::vector<int>{1, 2});
  Tensor y = pad(x, {1, 1}, PadMode::Constant, -5);
  EXPECT_EQ(y.dtype(), DType::I8);
  EXPECT_EQ(y.toInts(), (std::vector<int64_t>{-5, 1, 2, -5}));
}

//===--- TopK, Trilu
//-------------------------------------------------------===//

TEST(RefDataTopK, LargestSmallestTies) {
  Tensor v, i;
  topK(f32({5}, {1, 3, 2, 3, 0}), 3, 0, true, true, v, i);
  EXPECT_EQ(values(v), (std::vector<double>{3, 3, 2}));
  EXPECT_EQ(i.dtype(), DType::I64);
  EXPECT_EQ(i.toInts(), (std::vector<int64_t>{1, 3, 2}));
  topK(f32({5}, {1, 3, 2, 1, 0}), 3, 0, false, true, v, i);
  EXPECT_EQ(values(v), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(i.toInts(), (std::vector<int64_t>{4, 0, 3}));
}

TEST(RefDataTopK, Axis0Of2D) {
  // [[0,1,2,3],[4,5,6,7],[8,9,10,11]] reversed within columns by value.
  Tensor x = f32({3, 4}, {0, 9, 2, 3, 4, 5, 6, 7, 8, 1, 10, 11});
  Tensor v, i;
  topK(x, 2, 0, true, true, v, i);
  EXPECT_EQ(v.shape(), (Shape{2, 4}));
  EXPECT_EQ(values(v), (std::vector<double>{8, 9, 10, 11, 4, 5, 6, 7}));
  EXPECT_EQ(i.toInts(), (std::vector<int64_t>{2, 0, 2, 2, 1, 1, 1, 1}));
}

TEST(RefDataTopK, Int64Precision) {
  int64_t big = (int64_t(1) << 60);
  Tensor v, i;
  std::vector<int64_t> raw = {big, big + 1, big - 1};
  topK(Tensor::fromBytes(DType::I64, {3}, raw.data()), 1, 0, true, true, v, i);
  EXPECT_EQ(v.toInts(), (std::vector<int64_t>{big + 1}));
  EXPECT_EQ(i.toInts(), (std::vector<int64_t>{1}));
}

TEST(RefDataTopK, Errors) {
  Tensor v, i;
  Tensor x = f32({3}, {1, 2, 3});
  EXPECT_THROW(topK(x, 4, 0, true, true, v, i), Error);
  EXPECT_THROW(topK(x, -1, 0, true, true, v, i), Error);
  EXPECT_THROW(topK(x, 1, 1, true, true, v, i), Error);
}

TEST(RefDataTrilu, UpperLower) {
  Tensor x = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(values(trilu(x, 0, true)),
            (std::vector<double>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  EXPECT_EQ(values(trilu(x, 1, true)),
            (std::vector<double>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  EXPECT_EQ(values(trilu(x, -1, false)),
            (std::vector<double>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  EXPECT_EQ(values(trilu(x, 0, false)),
            (std::vector<double>{1, 0, 0, 4, 5, 0, 7, 8, 9}));
  EXPECT_THROW(trilu(f32({3}, {1, 2, 3}), 0, true), Error);
}

TEST(RefDataTrilu, BatchedNonSquare) {
  Tensor y = trilu(iota(DType::I32, {2, 2, 3}), -1, true);
  EXPECT_EQ(y.toInts(),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  Tensor z = trilu(iota(DType::I32, {2, 2, 3}), 1, false);
  EXPECT_EQ(z.toInts(),
            (std::vector<int64_t>{0, 1, 0, 3, 4, 5, 6, 7, 0, 9, 10, 11}));
}

//===--- Resize
//------------------------------------------------------------===//

namespace {
Tensor image4x4() {
  std::vector<double> v(16);
  std::iota(v.begin(), v.end(), 1.0);
  return f32({1, 1, 4, 4}, v);
}
ResizeParams params(const std::string &mode, const std::string &ctm,
                    std::vector<double> scales) {
  ResizeParams p;
  p.mode = mode;
  p.coordinateTransform = ctm;
  p.scales = std::move(scales);
  return p;
}
} // namespace

TEST(RefDataResize, NearestUpDown) {
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor y =
      resize(x, {1, 1, 4, 6}, params("nearest", "half_pixel", {1, 1, 2, 3}));
  EXPECT_EQ(values(y),
            (std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  Tensor d = resize(f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), {1, 1, 1, 2},
                    params("nearest", "half_pixel", {1, 1, 0.6, 0.6}));
  EXPECT_EQ(values(d), (std::vector<double>{1, 3}));
}

TEST(RefDataResize, NearestModes) {
  Tensor x = f32({4}, {10, 20, 30, 40});
  auto run = [&](const std::string &ctm, const std::string &nm) {
    ResizeParams p = params("nearest", ctm, {2});
    p.nearestMode = nm;
    return values(resize(x, {8}, p));
  };
  using V = std::vector<double>;
  EXPECT_EQ(run("asymmetric", "round_prefer_floor"),
            (V{10, 10, 20, 20, 30, 30, 40, 40}));
  EXPECT_EQ(run("asymmetric", "round_prefer_ceil"),
            (V{10, 20, 20, 30, 30, 40, 40, 40}));
  EXPECT_EQ(run("asymmetric", "floor"), (V{10, 10, 20, 20, 30, 30, 40, 40}));
  EXPECT_EQ(run("asymmetric", "ceil"), (V{10, 20, 20, 30, 30, 40, 40, 40}));
  EXPECT_EQ(run("align_corners", "round_prefer_floor"),
            (V{10, 10, 20, 20, 30, 30, 40, 40}));
  EXPECT_EQ(run("align_corners", "floor"), (V{10, 10, 10, 20, 20, 30, 30, 40}));
  EXPECT_EQ(run("align_corners", "ceil"), (V{10, 20, 20, 30, 30, 40, 40, 40}));
}

TEST(RefDataResize, Linear) {
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  expectNear(
      resize(x, {1, 1, 4, 4}, params("linear", "half_pixel", {1, 1, 2, 2})),
      {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25,
       3.75, 4});
  double t = 1.0 / 3;
  expectNear(
      resize(x, {1, 1, 4, 4}, params("linear", "align_corners", {1, 1, 2, 2})),
      {1, 1 + t, 1 + 2 * t, 2, 1 + 2 * t, 2, 2 + t, 2 + 2 * t, 2 + t, 2 + 2 * t,
       3, 3 + t, 3, 3 + t, 3 + 2 * t, 4});
  expectNear(resize(f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), {1, 1, 1, 2},
                    params("linear", "half_pixel", {1, 1, 0.6, 0.6})),
             {2.6666666667, 4.3333333333});
}

TEST(RefDataResize, LinearOtherTransforms) {
  Tensor x = image4x4();
  expectNear(resize(x, {1, 1, 3, 3},
                    params("linear", "half_pixel_symmetric", {1, 1, 0.8, 0.8})),
             {2.25, 3.5, 4.75, 7.25, 8.5, 9.75, 12.25, 13.5, 14.75});
  expectNear(resize(x, {1, 1, 1, 3},
                    params("linear", "pytorch_half_pixel", {1, 1, 0.25, 0.8})),
             {1.125, 2.375, 3.625});
}

TEST(RefDataResize, Cubic) {
  Tensor y = resize(image4x4(), {1, 1, 8, 8},
                    params("cubic", "half_pixel", {1, 1, 2, 2}));
  std::vector<double> got = values(y);
  std::vector<double> row0 = {0.47265625, 0.76953125, 1.24609375, 1.875,
                              2.28125,    2.91015625, 3.38671875, 3.68359375};
  std::vector<double> row7 = {13.31640625, 13.61328125, 14.08984375,
                              14.71875,    15.125,      15.75390625,
                              16.23046875, 16.52734375};
  for (int j = 0; j < 8; ++j) {
    EXPECT_NEAR(got[j], row0[j], 1e-5);
    EXPECT_NEAR(got[56 + j], row7[j], 1e-5);
  }
  EXPECT_NEAR(got[3 * 8 + 4], 7.890625, 1e-5);
  expectNear(resize(image4x4(), {1, 1, 3, 3},
                    params("cubic", "align_corners", {1, 1, 0.8, 0.8})),
             {1.0, 2.3951915852742265, 3.790383170548461, 6.580766341096907,
              7.975957926371132, 9.371149511645369, 12.161532682193842,
              13.556724267468063, 14.951915852742314});
  expectNear(resize(image4x4(), {1, 1, 3, 3},
                    params("cubic", "asymmetric", {1, 1, 0.8, 0.8})),
             {1.0, 2.296875, 3.59375, 6.1875, 7.484375, 8.78125, 11.375,
              12.671875, 13.96875});
}

TEST(RefDataResize, CubicExcludeOutside) {
  ResizeParams p = params("cubic", "half_pixel", {1, 1, 2, 2});
  p.cubicCoeffA = -0.5;
  p.excludeOutside = true;
  std::vector<double> got = values(resize(image4x4(), {1, 1, 8, 8}, p));
  std::vector<double> row0 = {0.5588235294117645, 0.8149420352082435,
                              1.356982487651549,  1.8970588235294115,
                              2.3970588235294112, 2.9371351594072737,
                              3.4791756118505797, 3.7352941176470584};
  for (int j = 0; j < 8; ++j)
    EXPECT_NEAR(got[j], row0[j], 1e-5);
  EXPECT_NEAR(got[3 * 8 + 3], 7.25, 1e-5);
  ResizeParams q = params("cubic", "pytorch_half_pixel", {1, 1, 0.25, 0.8});
  q.excludeOutside = true;
  expectNear(resize(image4x4(), {1, 1, 1, 3}, q),
             {0.33792710706150353, 1.654296875, 2.9847118345798505});
}

TEST(RefDataResize, TfCropAndResize) {
  ResizeParams p = params("linear", "tf_crop_and_resize", {1, 1, 0.75, 0.75});
  p.roi = {0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8};
  expectNear(resize(image4x4(), {1, 1, 3, 3}, p),
             {7.6, 7.9, 8.2, 8.8, 9.1, 9.4, 10.0, 10.3, 10.6});
  p.roi = {0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7};
  p.extrapolationValue = 10;
  expectNear(resize(image4x4(), {1, 1, 3, 3}, p),
             {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10});
  p.roi.clear();
  EXPECT_THROW(resize(image4x4(), {1, 1, 3, 3}, p), Error);
}

TEST(RefDataResize, BatchAxisAndDefaultScales) {
  // Linear along N: x = (o + 0.5) / 1.5 - 0.5 = -1/6, 1/2, 7/6.
  Tensor y = resize(f32({2, 1, 1, 1}, {1, 3}), {3, 1, 1, 1},
                    params("linear", "half_pixel", {}));
  expectNear(y, {1, 2, 3});
}

TEST(RefDataResize, IntegerRounds) {
  Tensor x = Tensor::fromVector(DType::U8, {2}, std::vector<int>{0, 3});
  // x_ori = -0.25, 0.25, 0.75, 1.25 -> 0, 0.75, 2.25, 3 -> rounded.
  Tensor y = resize(x, {4}, params("linear", "half_pixel", {2}));
  EXPECT_EQ(y.dtype(), DType::U8);
  EXPECT_EQ(y.toInts(), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(RefDataResize, Errors) {
  Tensor x = image4x4();
  EXPECT_THROW(resize(x, {1, 1, 8, 8}, params("bogus", "half_pixel", {})),
               Error);
  EXPECT_THROW(resize(x, {1, 1, 8, 8}, params("linear", "bogus", {})), Error);
  EXPECT_THROW(resize(x, {1, 1, 8, 8}, params("linear", "half_pixel", {2})),
               Error);
  EXPECT_THROW(resize(x, {1, 8, 8}, params("linear", "half_pixel", {})), Error);
  EXPECT_THROW(
      resize(x, {1, 1, 8, 8}, params("linear", "half_pixel", {1, 1, 0, 2})),
      Error);
  ResizeParams p = params("nearest", "half_pixel", {});
  p.nearestMode = "bogus";
  EXPECT_THROW(resize(x, {1, 1, 8, 8}, p), Error);
}

//===--- DepthToSpace, SpaceToDepth, OneHot -------------------------------===//

TEST(RefDataDepthToSpace, OnnxExamples) {
  Tensor x = iota(DType::F32, {1, 8, 2, 3});
  Tensor dcr = depthToSpace(x, 2, "DCR");
  EXPECT_EQ(dcr.shape(), (Shape{1, 2, 4, 6}));
  EXPECT_EQ(values(dcr), (std::vector<double>{
                             0, 12, 1,  13, 2,  14, 24, 36, 25, 37, 26, 38,
                             3, 15, 4,  16, 5,  17, 27, 39, 28, 40, 29, 41,
                             6, 18, 7,  19, 8,  20, 30, 42, 31, 43, 32, 44,
                             9, 21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47}));
  Tensor crd = depthToSpace(x, 2, "CRD");
  EXPECT_EQ(values(crd), (std::vector<double>{
                             0,  6,  1,  7,  2,  8,  12, 18, 13, 19, 14, 20,
                             3,  9,  4,  10, 5,  11, 15, 21, 16, 22, 17, 23,
                             24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44,
                             27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47}));
  EXPECT_THROW(depthToSpace(x, 3, "DCR"), Error);
  EXPECT_THROW(depthToSpace(x, 2, "XYZ"), Error);
  EXPECT_THROW(depthToSpace(iota(DType::F32, {8, 2, 3}), 2, "DCR"), Error);
}

TEST(RefDataSpaceToDepth, SmallAndInverse) {
  Tensor s = spaceToDepth(iota(DType::I32, {1, 1, 2, 2}), 2);
  EXPECT_EQ(s.shape(), (Shape{1, 4, 1, 1}));
  EXPECT_EQ(s.toInts(), (std::vector<int64_t>{0, 1, 2, 3}));
  Tensor x = iota(DType::F32, {2, 3, 4, 6});
  Tensor back = depthToSpace(spaceToDepth(x, 2), 2, "DCR");
  EXPECT_EQ(back.shape(), x.shape());
  EXPECT_EQ(values(back), values(x));
  EXPECT_THROW(spaceToDepth(iota(DType::F32, {1, 1, 3, 4}), 2), Error);
}

TEST(RefDataOneHot, AxesAndOutOfRange) {
  Tensor idx = i64({4}, {0, -1, 5, 2});
  Tensor vals = f32({2}, {2, 7});
  Tensor y = oneHot(idx, 3, vals, 1);
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(values(y),
            (std::vector<double>{7, 2, 2, 2, 2, 7, 2, 2, 2, 2, 2, 7}));
  Tensor z = oneHot(idx, 3, vals, 0);
  EXPECT_EQ(z.shape(), (Shape{3, 4}));
  EXPECT_EQ(values(z),
            (std::vector<double>{7, 2, 2, 2, 2, 2, 2, 2, 2, 7, 2, 7}));
  EXPECT_THROW(oneHot(idx, 3, f32({3}, {0, 1, 2}), 0), Error);
  EXPECT_THROW(oneHot(idx, 3, vals, 2), Error);
}

//===--- Scale
//-------------------------------------------------------------===//

TEST(RefDataScale, ViTSizedTensorsAreFast) {
  auto start = std::chrono::steady_clock::now();
  Tensor x = iota(DType::F32, {1, 64, 224, 224}); // ~3.2M elements.
  Tensor t = transpose(x, {0, 2, 3, 1});
  EXPECT_EQ(t.getDouble(1), 224.0 * 224.0);
  Tensor r = resize(iota(DType::F32, {1, 3, 224, 224}), {1, 3, 448, 448},
                    params("linear", "half_pixel", {1, 1, 2, 2}));
  EXPECT_EQ(r.numElements(), 3 * 448 * 448);
  Tensor p = pad(x, {0, 0, 1, 1, 0, 0, 1, 1}, PadMode::Reflect, 0);
  EXPECT_EQ(p.dim(2), 226);
  Tensor s = slice(x, {0}, {224}, {3}, {2});
  EXPECT_EQ(s.dim(3), 112);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(secs, 30.0); // Generous: sanitizer builds are slow.
}
