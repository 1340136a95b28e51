//===- ReferenceLinalgTest.cpp - Tests for matmul/conv/pool/einsum --------===//
//
// Expected values are computed by hand (the derivation is in the comments);
// a few randomised tests also compare the im2col-based convolutions against
// a direct six-deep loop nest written out here.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace loom::rt;
using namespace loom::rt::ref;

namespace {

/// An F32 (or `dt`) tensor of `shape` holding `values`.
Tensor make(Shape shape, const std::vector<double> &values,
            DType dt = DType::F32) {
  EXPECT_EQ(numElementsOf(shape), static_cast<int64_t>(values.size()));
  return Tensor::fromVector(dt, std::move(shape), values);
}

/// A tensor of `shape` holding 1, 2, 3, ...
Tensor iota(Shape shape, DType dt = DType::F32) {
  std::vector<double> v(numElementsOf(shape));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(i + 1);
  return make(std::move(shape), v, dt);
}

/// A tensor of `shape` with uniform values in [-1, 1).
Tensor random(Shape shape, std::mt19937 &rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(numElementsOf(shape));
  for (double &d : v)
    d = dist(rng);
  return make(std::move(shape), v);
}

/// Checks shape and values of `t` (absolute tolerance `tol`).
void expectTensor(const Tensor &t, const Shape &shape,
                  const std::vector<double> &values, double tol = 1e-5) {
  ASSERT_EQ(shapeToString(t.shape()), shapeToString(shape));
  ASSERT_EQ(t.numElements(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR(t.getDouble(i), values[i], tol) << "at flat index " << i;
}

/// Checks that two tensors have the same shape and (nearly) the same values.
void expectClose(const Tensor &a, const Tensor &b, double tol = 1e-4) {
  ASSERT_EQ(shapeToString(a.shape()), shapeToString(b.shape()));
  for (int64_t i = 0; i < a.numElements(); ++i)
    ASSERT_NEAR(a.getDouble(i), b.getDouble(i), tol) << "at flat index " << i;
}

} // namespace

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

TEST(RefLinalgMatmul, Basic2D) {
  // [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154].
  Tensor c = matmul(iota({2, 3}), make({3, 2}, {7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(c.dtype(), DType::F32);
  expectTensor(c, {2, 2}, {58, 64, 139, 154});
}

TEST(RefLinalgMatmul, BatchTimesMatrix) {
  // [1 2; 3 4] x [1 0; 1 1] = [3 2; 7 4]; [5 6; 7 8] x same = [11 6; 15 8].
  Tensor c = matmul(iota({2, 2, 2}), make({2, 2}, {1, 0, 1, 1}));
  expectTensor(c, {2, 2, 2}, {3, 2, 7, 4, 11, 6, 15, 8});
}

TEST(RefLinalgMatmul, BatchBroadcastBothSides) {
  // a: [2,1 | 1x2] rows [1 2], [3 4]; b: [1,3 | 2x1] columns (1,1), (1,0),
  // (0,2). Result [2,3,1,1] holds every dot product.
  Tensor a = iota({2, 1, 1, 2});
  Tensor b = make({1, 3, 2, 1}, {1, 1, 1, 0, 0, 2});
  expectTensor(matmul(a, b), {2, 3, 1, 1}, {3, 1, 4, 7, 3, 8});
}

TEST(RefLinalgMatmul, OneDimensionalOperands) {
  Tensor m = make({3, 2}, {7, 8, 9, 10, 11, 12});
  // [1 2 3] x m = [58 64], the prepended axis removed.
  expectTensor(matmul(iota({3}), m), {2}, {58, 64});
  // [1 2 3; 4 5 6] x [1 1 1] = [6 15], the appended axis removed.
  expectTensor(matmul(iota({2, 3}), make({3}, {1, 1, 1})), {2}, {6, 15});
  // Vector dot product gives a scalar: 4 + 10 + 18 = 32.
  expectTensor(matmul(iota({3}), make({3}, {4, 5, 6})), {}, {32});
  // Vector x batch of matrices: batch 0 = m, batch 1 = ones.
  Tensor batch = make({2, 3, 2}, {7, 8, 9, 10, 11, 12, 1, 1, 1, 1, 1, 1});
  expectTensor(matmul(iota({3}), batch), {2, 2}, {58, 64, 6, 6});
}

TEST(RefLinalgMatmul, IntegerAndHalfTypes) {
  Tensor c = matmul(make({1, 2}, {1, 2}, DType::I32),
                    make({2, 1}, {3, 4}, DType::I32));
  EXPECT_EQ(c.dtype(), DType::I32);
  EXPECT_EQ(c.getInt(0), 11);
  Tensor neg =
      matmul(make({1, 2}, {-3, 2}, DType::I8), make({2, 1}, {5, 1}, DType::I8));
  EXPECT_EQ(neg.getInt(0), -13);
  Tensor h = matmul(iota({2, 3}, DType::F16),
                    make({3, 2}, {7, 8, 9, 10, 11, 12}, DType::F16));
  EXPECT_EQ(h.dtype(), DType::F16);
  expectTensor(h, {2, 2}, {58, 64, 139, 154});
  Tensor bf = matmul(iota({2, 3}, DType::BF16), iota({3, 1}, DType::BF16));
  EXPECT_EQ(bf.dtype(), DType::BF16);
  expectTensor(bf, {2, 1}, {14, 32});
}

TEST(RefLinalgMatmul, Errors) {
  EXPECT_THROW(matmul(iota({2, 3}), iota({2, 3})), Error);
  EXPECT_THROW(matmul(iota({2, 2, 3}), iota({3, 3, 2})), Error);
  EXPECT_THROW(matmul(iota({2, 2}), iota({2, 2}, DType::F64)), Error);
  EXPECT_THROW(matmul(make({}, {1}), iota({2})), Error);
  EXPECT_THROW(matmul(Tensor(), iota({2})), Error);
  EXPECT_THROW(matmul(make({1}, {1}, DType::Bool), make({1}, {1}, DType::Bool)),
               Error);
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

TEST(RefLinalgConv, Basic2D) {
  // 2x2 box filter over [1 2 3; 4 5 6; 7 8 9].
  Tensor y =
      conv(iota({1, 1, 3, 3}), make({1, 1, 2, 2}, {1, 1, 1, 1}), Tensor(), {});
  expectTensor(y, {1, 1, 2, 2}, {12, 16, 24, 28});
}

TEST(RefLinalgConv, PaddingStrideBias) {
  // Weight taps (0,0) = 1 and (2,2) = 2; pad 1, stride 2 -> 2x2 output whose
  // window at o reads rows/cols 2o-1 (weight 1) and 2o+1 (weight 2):
  // (0,0): 0 + 2*x[1][1] = 10; (0,1): x[-1][1] and x[1][3] are padding = 0;
  // (1,0): 0; (1,1): x[1][1] + 2*x[3][3](pad) = 5. Plus bias 0.5.
  ConvParams p;
  p.strides = {2, 2};
  p.pads = {1, 1, 1, 1};
  Tensor w = make({1, 1, 3, 3}, {1, 0, 0, 0, 0, 0, 0, 0, 2});
  Tensor y = conv(iota({1, 1, 3, 3}), w, make({1}, {0.5}), p);
  expectTensor(y, {1, 1, 2, 2}, {10.5, 0.5, 0.5, 5.5});
}

TEST(RefLinalgConv, Dilation) {
  // x[r][c] = 4r + c + 1; 2x2 ones with dilation 2 sums x[i][j], x[i][j+2],
  // x[i+2][j], x[i+2][j+2] = 16i + 4j + 24.
  ConvParams p;
  p.dilations = {2, 2};
  Tensor y =
      conv(iota({1, 1, 4, 4}), make({1, 1, 2, 2}, {1, 1, 1, 1}), Tensor(), p);
  expectTensor(y, {1, 1, 2, 2}, {24, 28, 40, 44});
}

TEST(RefLinalgConv, Groups) {
  // Channels [1 2], [3 4], [5 6], [7 8]; group 0 weights (1, 10) on channels
  // 0-1, group 1 weights (100, 1000) on channels 2-3.
  ConvParams p;
  p.group = 2;
  Tensor y = conv(iota({1, 4, 1, 2}), make({2, 2, 1, 1}, {1, 10, 100, 1000}),
                  Tensor(), p);
  expectTensor(y, {1, 2, 1, 2}, {31, 42, 7500, 8600});
}

TEST(RefLinalgConv, Depthwise) {
  // c0 = [1 2 3], c1 = [4 5 6]; depth multiplier 2 with 1x2 kernels:
  // m0 (1,1) on c0 = [3 5]; m1 (0,1) on c0 = [2 3];
  // m2 (1,-1) on c1 = [-1 -1]; m3 (2,0) on c1 = [8 10].
  ConvParams p;
  p.group = 2;
  Tensor w = make({4, 1, 1, 2}, {1, 1, 0, 1, 1, -1, 2, 0});
  Tensor y = conv(iota({1, 2, 1, 3}), w, Tensor(), p);
  expectTensor(y, {1, 4, 1, 2}, {3, 5, 2, 3, -1, -1, 8, 10});
}

TEST(RefLinalgConv, OneDimensional) {
  // [1 2 3 4 5] with kernel (1, 0, -1), pad 1, stride 2: windows at -1..1,
  // 1..3, 3..5 give 0 - 2, 2 - 4, 4 - 0.
  ConvParams p;
  p.strides = {2};
  p.pads = {1, 1};
  Tensor y = conv(iota({1, 1, 5}), make({1, 1, 3}, {1, 0, -1}), Tensor(), p);
  expectTensor(y, {1, 1, 3}, {-2, -2, 4});
}

TEST(RefLinalgConv, ThreeDimensional) {
  Tensor x = iota({1, 1, 2, 2, 2});
  Tensor w = make({1, 1, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
  expectTensor(conv(x, w, Tensor(), {}), {1, 1, 1, 1, 1}, {36});
  // Padding the last axis at the front: the first window sees only the
  // elements with last index 0 (1 + 3 + 5 + 7).
  ConvParams p;
  p.pads = {0, 0, 1, 0, 0, 0};
  expectTensor(conv(x, w, Tensor(), p), {1, 1, 1, 1, 2}, {16, 36});
}

TEST(RefLinalgConv, KeepsDType) {
  for (DType dt : {DType::F64, DType::F16, DType::BF16}) {
    Tensor y =
        conv(iota({1, 1, 3, 3}, dt), make({1, 1, 2, 2}, {1, 1, 1, 1}, dt),
             make({1}, {1}, dt), {});
    EXPECT_EQ(y.dtype(), dt);
    expectTensor(y, {1, 1, 2, 2}, {13, 17, 25, 29});
  }
}

/// Direct 2-D convolution loop nest, independent of the im2col path.
static Tensor naiveConv2D(const Tensor &x, const Tensor &w, const Tensor &b,
                          const ConvParams &p) {
  int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  int64_t m = w.dim(0), cg = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  int64_t mg = m / p.group;
  int64_t oh = (h + p.pads[0] + p.pads[2] - p.dilations[0] * (kh - 1) - 1) /
                   p.strides[0] +
               1;
  int64_t ow = (wd + p.pads[1] + p.pads[3] - p.dilations[1] * (kw - 1) - 1) /
                   p.strides[1] +
               1;
  Tensor y(DType::F32, {n, m, oh, ow});
  for (int64_t in = 0; in < n; ++in)
    for (int64_t om = 0; om < m; ++om)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = b.getDouble(om);
          int64_t g = om / mg;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t bb = 0; bb < kw; ++bb) {
                int64_t r = i * p.strides[0] - p.pads[0] + a * p.dilations[0];
                int64_t q = j * p.strides[1] - p.pads[1] + bb * p.dilations[1];
                if (r < 0 || r >= h || q < 0 || q >= wd)
                  continue;
                acc += x.getDouble(((in * c + g * cg + ic) * h + r) * wd + q) *
                       w.getDouble(((om * cg + ic) * kh + a) * kw + bb);
              }
          y.setDouble(((in * m + om) * oh + i) * ow + j, acc);
        }
  return y;
}

TEST(RefLinalgConv, MatchesDirectLoops) {
  std::mt19937 rng(42);
  ConvParams p;
  p.strides = {2, 1};
  p.dilations = {1, 2};
  p.pads = {1, 0, 2, 1};
  p.group = 2;
  Tensor x = random({2, 4, 7, 6}, rng);
  Tensor w = random({6, 2, 3, 2}, rng);
  Tensor b = random({6}, rng);
  expectClose(conv(x, w, b, p), naiveConv2D(x, w, b, p));
}

TEST(RefLinalgConv, Errors) {
  ConvParams p;
  // Weight expects 2 input channels, input has 3.
  EXPECT_THROW(conv(iota({1, 3, 3, 3}), iota({1, 2, 1, 1}), Tensor(), p),
               Error);
  p.group = 2; // 3 channels are not divisible by 2.
  EXPECT_THROW(conv(iota({1, 3, 3, 3}), iota({2, 1, 1, 1}), Tensor(), p),
               Error);
  p.group = 1;
  EXPECT_THROW(conv(iota({1, 1, 3, 3}, DType::I32),
                    iota({1, 1, 1, 1}, DType::I32), Tensor(), p),
               Error);
  EXPECT_THROW(conv(iota({1, 1, 3, 3}), iota({1, 1, 1, 1}), iota({2}), p),
               Error);
  p.strides = {1}; // Wrong number of strides.
  EXPECT_THROW(conv(iota({1, 1, 3, 3}), iota({1, 1, 1, 1}), Tensor(), p),
               Error);
  EXPECT_THROW(conv(iota({1, 1, 3, 3}), iota({1, 1, 4, 4}), Tensor(), {}),
               Error);
}

//===----------------------------------------------------------------------===//
// ConvTranspose
//===----------------------------------------------------------------------===//

TEST(RefLinalgConvTranspose, Basic2D) {
  // Each input element is spread over a 2x2 block of ones:
  // [1 2; 3 4] -> [1 3 2; 4 10 6; 3 7 4].
  Tensor y = convTranspose(iota({1, 1, 2, 2}), make({1, 1, 2, 2}, {1, 1, 1, 1}),
                           Tensor(), {}, {1, 1, 3, 3});
  expectTensor(y, {1, 1, 3, 3}, {1, 3, 2, 4, 10, 6, 3, 7, 4});
}

TEST(RefLinalgConvTranspose, StrideOutputPaddingBias) {
  // Stride 2 = kernel 2, so blocks x[a][b] * w do not overlap; output padding
  // 1 adds a last row and column that only get the bias (1).
  ConvParams p;
  p.strides = {2, 2};
  p.outputPadding = {1, 1};
  Tensor y = convTranspose(iota({1, 1, 2, 2}), iota({1, 1, 2, 2}),
                           make({1}, {1}), p, {5, 5});
  expectTensor(y, {1, 1, 5, 5}, {2,  3,  3,  5,  1, //
                                 4,  5,  7,  9,  1, //
                                 4,  7,  5,  9,  1, //
                                 10, 13, 13, 17, 1, //
                                 1,  1,  1,  1,  1});
}

TEST(RefLinalgConvTranspose, PadsCrop1D) {
  // [1 2 3] with kernel (1 1 1), stride 2: full output positions 2i + k give
  // [1 1 3 2 5 3 3]; pads 1/1 crop one element from each end.
  ConvParams p;
  p.strides = {2};
  p.pads = {1, 1};
  Tensor y = convTranspose(iota({1, 1, 3}), make({1, 1, 3}, {1, 1, 1}),
                           Tensor(), p, {1, 1, 5});
  expectTensor(y, {1, 1, 5}, {1, 3, 2, 5, 3});
}

TEST(RefLinalgConvTranspose, Dilation1D) {
  // Output position i + 2k: x0 lands on 0 and 2, x1 on 1 and 3.
  ConvParams p;
  p.dilations = {2};
  Tensor y =
      convTranspose(iota({1, 1, 2}), make({1, 1, 2}, {1, 1}), Tensor(), p, {4});
  expectTensor(y, {1, 1, 4}, {1, 2, 1, 2});
}

TEST(RefLinalgConvTranspose, ChannelsAndGroups) {
  // Two input channels (2, 3) summed into one output: 2*1 + 3*10.
  Tensor x = make({1, 2, 1, 1}, {2, 3});
  expectTensor(
      convTranspose(x, make({2, 1, 1, 1}, {1, 10}), Tensor(), {}, {1, 1}),
      {1, 1, 1, 1}, {32});
  // group 2, two outputs per group: channel 0 -> outputs 0-1, 1 -> 2-3.
  ConvParams p;
  p.group = 2;
  expectTensor(convTranspose(x, make({2, 2, 1, 1}, {1, 10, 100, 1000}),
                             Tensor(), p, {1, 4, 1, 1}),
               {1, 4, 1, 1}, {2, 20, 300, 3000});
}

/// Direct 2-D transposed convolution (scatter form).
static Tensor naiveConvTranspose2D(const Tensor &x, const Tensor &w,
                                   const Tensor &b, const ConvParams &p,
                                   int64_t oh, int64_t ow) {
  int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  int64_t mg = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  int64_t cg = c / p.group, m = mg * p.group;
  Tensor y(DType::F32, {n, m, oh, ow});
  std::vector<double> acc(y.numElements(), 0.0);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < wd; ++j)
          for (int64_t om = 0; om < mg; ++om)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t bb = 0; bb < kw; ++bb) {
                int64_t r = i * p.strides[0] - p.pads[0] + a * p.dilations[0];
                int64_t q = j * p.strides[1] - p.pads[1] + bb * p.dilations[1];
                if (r < 0 || r >= oh || q < 0 || q >= ow)
                  continue;
                int64_t mo = (ic / cg) * mg + om;
                acc[((in * m + mo) * oh + r) * ow + q] +=
                    x.getDouble(((in * c + ic) * h + i) * wd + j) *
                    w.getDouble(((ic * mg + om) * kh + a) * kw + bb);
              }
  for (int64_t i = 0; i < y.numElements(); ++i)
    y.setDouble(i, acc[i] + b.getDouble((i / (oh * ow)) % m));
  return y;
}

TEST(RefLinalgConvTranspose, MatchesDirectLoops) {
  std::mt19937 rng(7);
  ConvParams p;
  p.strides = {2, 3};
  p.dilations = {2, 1};
  p.pads = {1, 0, 0, 2};
  p.group = 2;
  p.outputPadding = {1, 0};
  Tensor x = random({2, 4, 3, 4}, rng);
  Tensor w = random({4, 3, 2, 3}, rng);
  Tensor b = random({6}, rng);
  // (in - 1) * stride + dilation * (k - 1) + 1 + outpad - pads.
  int64_t oh = 2 * 2 + 2 * 1 + 1 + 1 - 1, ow = 3 * 3 + 2 + 1 + 0 - 2;
  expectClose(convTranspose(x, w, b, p, {2, 6, oh, ow}),
              naiveConvTranspose2D(x, w, b, p, oh, ow));
}

TEST(RefLinalgConvTranspose, Errors) {
  // Weight's first axis must equal the input channels.
  EXPECT_THROW(convTranspose(iota({1, 2, 2, 2}), iota({3, 1, 2, 2}), Tensor(),
                             {}, {3, 3}),
               Error);
  // Full output shape with the wrong channel count.
  EXPECT_THROW(convTranspose(iota({1, 1, 2, 2}), iota({1, 1, 2, 2}), Tensor(),
                             {}, {1, 2, 3, 3}),
               Error);
  EXPECT_THROW(
      convTranspose(iota({1, 1, 2, 2}), iota({1, 1, 2, 2}), Tensor(), {}, {3}),
      Error);
}

//===----------------------------------------------------------------------===//
// MaxPool
//===----------------------------------------------------------------------===//

static Tensor poolInput3x3(double sign = 1) {
  std::vector<double> v = {1, 5, 2, 7, 3, 9, 4, 8, 6};
  for (double &d : v)
    d *= sign;
  return make({1, 1, 3, 3}, v);
}

TEST(RefLinalgMaxPool, BasicWithIndices) {
  // [1 5 2; 7 3 9; 4 8 6], 2x2 windows stride 1.
  PoolParams p;
  p.kernel = {2, 2};
  Tensor idx;
  Tensor y = maxPool(poolInput3x3(), p, {1, 1, 2, 2}, &idx);
  expectTensor(y, {1, 1, 2, 2}, {7, 9, 8, 9});
  EXPECT_EQ(idx.dtype(), DType::I64);
  EXPECT_EQ(idx.toInts(), (std::vector<int64_t>{3, 5, 7, 5}));
}

TEST(RefLinalgMaxPool, PadsAreNeverSelected) {
  // Negated input, 3x3 windows, pad 1, stride 2: windows cover rows/cols
  // {0,1} and {1,2}; padding must not contribute a 0.
  PoolParams p;
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.pads = {1, 1, 1, 1};
  Tensor idx;
  Tensor y = maxPool(poolInput3x3(-1), p, {2, 2}, &idx);
  expectTensor(y, {1, 1, 2, 2}, {-1, -2, -3, -3});
  EXPECT_EQ(idx.toInts(), (std::vector<int64_t>{0, 2, 4, 4}));
}

TEST(RefLinalgMaxPool, IndicesIncludeBatchAndChannel) {
  // n0c0 [1 2], n0c1 [4 3], n1c0 [5 6], n1c1 [8 7]; 1x2 windows.
  PoolParams p;
  p.kernel = {1, 2};
  Tensor x = make({2, 2, 1, 2}, {1, 2, 4, 3, 5, 6, 8, 7});
  Tensor idx;
  Tensor y = maxPool(x, p, {2, 2, 1, 1}, &idx);
  expectTensor(y, {2, 2, 1, 1}, {2, 4, 6, 8});
  EXPECT_EQ(idx.toInts(), (std::vector<int64_t>{1, 2, 5, 6}));
  EXPECT_EQ(shapeToString(idx.shape()), "[2x2x1x1]");
}

TEST(RefLinalgMaxPool, DilationsAndTies) {
  // [3 1 4 1 5], kernel 2 dilation 2: pairs (0,2), (1,3), (2,4). The tie in
  // the second window reports the first occurrence.
  PoolParams p;
  p.kernel = {1, 2};
  p.dilations = {1, 2};
  Tensor idx;
  Tensor y = maxPool(make({1, 1, 1, 5}, {3, 1, 4, 1, 5}), p, {1, 3}, &idx);
  expectTensor(y, {1, 1, 1, 3}, {4, 1, 5});
  EXPECT_EQ(idx.toInts(), (std::vector<int64_t>{2, 1, 4}));
}

TEST(RefLinalgMaxPool, CeilModeWindowAndIntegers) {
  // 1-D, I32: [3 -1 2 7 -5], kernel 2 stride 2, ceil-mode output of 3: the
  // last window holds only -5.
  PoolParams p;
  p.kernel = {2};
  p.strides = {2};
  Tensor y = maxPool(make({1, 1, 5}, {3, -1, 2, 7, -5}, DType::I32), p, {3});
  EXPECT_EQ(y.dtype(), DType::I32);
  EXPECT_EQ(y.toInts(), (std::vector<int64_t>{3, 7, -5}));
}

TEST(RefLinalgMaxPool, NaNPropagates) {
  PoolParams p;
  p.kernel = {2};
  Tensor y = maxPool(make({1, 1, 3}, {1, NAN, 0}), p, {2});
  EXPECT_TRUE(std::isnan(y.getDouble(0)));
  EXPECT_TRUE(std::isnan(y.getDouble(1)));
}

TEST(RefLinalgMaxPool, Errors) {
  PoolParams p;
  p.kernel = {2};
  EXPECT_THROW(maxPool(iota({1, 1, 3, 3}), p, {2, 2}), Error);
  p.kernel = {2, 2};
  EXPECT_THROW(maxPool(iota({1, 1, 3, 3}), p, {2, 2, 2}), Error);
  EXPECT_THROW(maxPool(iota({3, 3}), p, {2, 2}), Error);
}

//===----------------------------------------------------------------------===//
// AveragePool
//===----------------------------------------------------------------------===//

TEST(RefLinalgAvgPool, Basic) {
  PoolParams p;
  p.kernel = {2, 2};
  expectTensor(avgPool(iota({1, 1, 3, 3}), p, {2, 2}), {1, 1, 2, 2},
               {3, 4, 6, 7});
}

TEST(RefLinalgAvgPool, PadsWithAndWithoutCounting) {
  // 3x3 windows, pad 1, stride 2 over [1..9]: each window holds four input
  // elements summing to 12, 16, 24, 28 and five padding taps.
  PoolParams p;
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.pads = {1, 1, 1, 1};
  expectTensor(avgPool(iota({1, 1, 3, 3}), p, {2, 2}), {1, 1, 2, 2},
               {3, 4, 6, 7});
  p.countIncludePad = true;
  expectTensor(avgPool(iota({1, 1, 3, 3}), p, {2, 2}), {1, 1, 2, 2},
               {12.0 / 9, 16.0 / 9, 24.0 / 9, 28.0 / 9});
}

TEST(RefLinalgAvgPool, WindowBeyondPaddedExtent) {
  // [1 2 3 4], kernel 3 stride 2, ceil-mode output 2: the second window is
  // taps 2, 3, 4 and tap 4 lies beyond the (zero) padding, so it never
  // counts: (3 + 4) / 2 either way.
  PoolParams p;
  p.kernel = {1, 3};
  p.strides = {1, 2};
  for (bool count : {false, true}) {
    p.countIncludePad = count;
    expectTensor(avgPool(iota({1, 1, 1, 4}), p, {1, 2}), {1, 1, 1, 2},
                 {2, 3.5});
  }
  // With an end pad of 1 tap 4 is padding: 7 / 3 when counted.
  p.pads = {0, 0, 0, 1};
  p.countIncludePad = true;
  expectTensor(avgPool(iota({1, 1, 1, 4}), p, {1, 2}), {1, 1, 1, 2},
               {2, 7.0 / 3});
  p.countIncludePad = false;
  expectTensor(avgPool(iota({1, 1, 1, 4}), p, {1, 2}), {1, 1, 1, 2}, {2, 3.5});
}

TEST(RefLinalgAvgPool, OneAndThreeDimensional) {
  PoolParams p1;
  p1.kernel = {2};
  p1.strides = {2};
  expectTensor(avgPool(iota({1, 2, 4}), p1, {1, 2, 2}), {1, 2, 2},
               {1.5, 3.5, 5.5, 7.5});
  PoolParams p3;
  p3.kernel = {2, 2, 2};
  Tensor y = avgPool(iota({1, 1, 2, 2, 2}, DType::F16), p3, {1, 1, 1});
  EXPECT_EQ(y.dtype(), DType::F16);
  expectTensor(y, {1, 1, 1, 1, 1}, {4.5});
}

TEST(RefLinalgAvgPool, Dilations) {
  // [1..5], kernel 2 dilation 2: (1+3)/2, (2+4)/2, (3+5)/2.
  PoolParams p;
  p.kernel = {2};
  p.dilations = {2};
  expectTensor(avgPool(iota({1, 1, 5}), p, {3}), {1, 1, 3}, {2, 3, 4});
}

TEST(RefLinalgAvgPool, RejectsIntegers) {
  PoolParams p;
  p.kernel = {2};
  EXPECT_THROW(avgPool(iota({1, 1, 4}, DType::I32), p, {3}), Error);
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

TEST(RefLinalgEinsum, MatrixProduct) {
  Tensor y =
      einsum("ij,jk->ik", {iota({2, 3}), make({3, 2}, {7, 8, 9, 10, 11, 12})});
  expectTensor(y, {2, 2}, {58, 64, 139, 154});
}

TEST(RefLinalgEinsum, BatchedMatrixProduct) {
  // [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50]; 2I x ones = 2 * ones.
  Tensor a = make({2, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 2});
  Tensor b = make({2, 2, 2}, {5, 6, 7, 8, 1, 1, 1, 1});
  expectTensor(einsum("bij,bjk->bik", {a, b}), {2, 2, 2},
               {19, 22, 43, 50, 2, 2, 2, 2});
}

TEST(RefLinalgEinsum, DiagonalAndTrace) {
  Tensor x = iota({2, 2});
  expectTensor(einsum("ii->i", {x}), {2}, {1, 4});
  expectTensor(einsum("ii->", {x}), {}, {5});
  // Batched diagonal through an ellipsis.
  expectTensor(einsum("...ii->...i", {iota({2, 2, 2})}), {2, 2}, {1, 4, 5, 8});
}

TEST(RefLinalgEinsum, SumAll) {
  expectTensor(einsum("ij->", {iota({2, 3})}), {}, {21});
}

TEST(RefLinalgEinsum, Transpose) {
  expectTensor(einsum("ij->ji", {iota({2, 3})}), {3, 2}, {1, 4, 2, 5, 3, 6});
}

TEST(RefLinalgEinsum, EllipsisBroadcast) {
  // Same operands as RefLinalgMatmul.BatchBroadcastBothSides: batch [2,1]
  // against [1,3].
  Tensor a = iota({2, 1, 1, 2});
  Tensor b = make({1, 3, 2, 1}, {1, 1, 1, 0, 0, 2});
  expectTensor(einsum("...ij,...jk->...ik", {a, b}), {2, 3, 1, 1},
               {3, 1, 4, 7, 3, 8});
  // Different ellipsis ranks: [2 | 1x2] against a bare [2x1] matrix.
  expectTensor(
      einsum("...ij,...jk->...ik", {iota({2, 1, 2}), make({2, 1}, {5, 6})}),
      {2, 1, 1}, {17, 39});
}

TEST(RefLinalgEinsum, ThreeOperandsAndOuterProduct) {
  // 1*3*5 + 2*4*6 = 63.
  expectTensor(
      einsum("i,i,i->", {iota({2}), make({2}, {3, 4}), make({2}, {5, 6})}), {},
      {63});
  expectTensor(einsum("i,j->ij", {iota({2}), make({3}, {1, 10, 100})}), {2, 3},
               {1, 10, 100, 2, 20, 200});
}

TEST(RefLinalgEinsum, SeveralSummedLabels) {
  // Sum over i and k of [1..8] laid out as [2,2,2]: j=0 takes 1,2,5,6 and
  // j=1 takes 3,4,7,8.
  expectTensor(einsum("ijk->j", {iota({2, 2, 2})}), {2}, {14, 22});
  // [1 2; 3 4] x swap = [2 1; 4 3]; x (1, 2) = (4, 10).
  expectTensor(einsum("ij,jk,kl->il", {iota({2, 2}), make({2, 2}, {0, 1, 1, 0}),
                                       make({2, 1}, {1, 2})}),
               {2, 1}, {4, 10});
}

TEST(RefLinalgEinsum, IntegerAndUppercaseLabels) {
  Tensor y = einsum("Ij,jK->IK", {iota({2, 3}, DType::I64),
                                  make({3, 1}, {1, -1, 2}, DType::I64)});
  EXPECT_EQ(y.dtype(), DType::I64);
  EXPECT_EQ(y.toInts(), (std::vector<int64_t>{1 - 2 + 6, 4 - 5 + 12}));
}

TEST(RefLinalgEinsum, ZeroSizedContraction) {
  // Summing over an empty axis gives zeros.
  expectTensor(einsum("ij,jk->ik",
                      {Tensor(DType::F32, {2, 0}), Tensor(DType::F32, {0, 3})}),
               {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST(RefLinalgEinsum, Errors) {
  EXPECT_THROW(einsum("ij,jk->ik", {iota({2, 3})}), Error);
  EXPECT_THROW(einsum("ij,jk->ik", {iota({2, 3}), iota({2, 3})}), Error);
  EXPECT_THROW(einsum("ij->k", {iota({2, 3})}), Error);
  EXPECT_THROW(einsum("ij->ii", {iota({2, 2})}), Error);
  EXPECT_THROW(einsum("ijk->i", {iota({2, 3})}), Error);
  EXPECT_THROW(einsum("i1->i", {iota({2, 3})}), Error);
  EXPECT_THROW(einsum("ii->i", {iota({2, 3})}), Error);
  EXPECT_THROW(einsum("ij", {iota({2, 3})}), Error);
  EXPECT_THROW(einsum("i,i->i", {iota({2}), iota({2}, DType::F64)}), Error);
}
