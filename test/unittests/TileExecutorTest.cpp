//===- TileExecutorTest.cpp - Tests for one tile's block execution --------===//
//
// Each test builds a small kernel on random tensors, computes its whole
// result with executeOp, splits the output into blocks (uneven, some empty),
// gives a tile only the input regions operandRegions says each block needs
// (cut from the whole inputs) and checks that executeOnTile reproduces the
// block of the whole result. With the reference kernels the comparison is
// exact: every element sums the same terms in the same order. A few
// expected regions are written out by hand, so that a rule that asked for
// everything (which would also reproduce the result) fails too.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/TileExecutor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace loom::rt;

namespace loom::rt {
/// How GoogleTest prints a Box.
void PrintTo(const Box &b, std::ostream *os) { *os << b.str(); }
} // namespace loom::rt

namespace {

AttrValue ints(std::vector<int64_t> v) {
  AttrValue a;
  a.kind = AttrValue::Kind::Ints;
  a.ints = std::move(v);
  return a;
}
AttrValue integer(int64_t v) {
  AttrValue a;
  a.kind = AttrValue::Kind::Int;
  a.ints = {v};
  return a;
}
AttrValue real(double v) {
  AttrValue a;
  a.kind = AttrValue::Kind::Float;
  a.floats = {v};
  return a;
}
AttrValue text(std::string s) {
  AttrValue a;
  a.kind = AttrValue::Kind::String;
  a.str = std::move(s);
  return a;
}

/// A tensor of `shape` with uniform values in [-1, 1) (0/1 for Bool).
Tensor random(const Shape &shape, std::mt19937 &rng, DType dt = DType::F32) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(dt, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, dt == DType::Bool ? double(rng() % 2) : double(dist(rng)));
  return t;
}

/// A kernel under test: its tensors, ops and the whole values of its inputs.
struct TestKernel {
  std::map<int32_t, ProgramTensor> tensors;
  std::vector<ProgramOp> ops;
  std::map<int32_t, Tensor> inputs;

  int32_t tensor(Shape shape, DType dt, std::string name) {
    ProgramTensor t;
    t.id = static_cast<int32_t>(tensors.size());
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.dtype = dt;
    tensors[t.id] = t;
    return t.id;
  }
  /// A kernel input of random values.
  int32_t input(std::string name, Shape shape, std::mt19937 &rng,
                DType dt = DType::F32) {
    int32_t id = tensor(shape, dt, std::move(name));
    inputs[id] = random(shape, rng, dt);
    return id;
  }
  /// Adds op `name` with results of `shapes`; returns the result ids.
  std::vector<int32_t> opResults(const std::string &name,
                                 std::vector<int32_t> operands,
                                 std::vector<Shape> shapes, AttrMap attrs = {},
                                 std::vector<DType> dtypes = {}) {
    ProgramOp op;
    op.name = name;
    op.inputs = std::move(operands);
    op.attrs = std::move(attrs);
    for (size_t k = 0; k < shapes.size(); ++k)
      op.outputs.push_back(tensor(shapes[k],
                                  k < dtypes.size() ? dtypes[k] : DType::F32,
                                  name + std::to_string(ops.size())));
    ops.push_back(op);
    return ops.back().outputs;
  }
  int32_t op(const std::string &name, std::vector<int32_t> operands,
             Shape shape, AttrMap attrs = {}, DType dt = DType::F32) {
    return opResults(name, std::move(operands), {std::move(shape)},
                     std::move(attrs), {dt})[0];
  }

  std::function<const ProgramTensor &(int32_t)> lookup() const {
    return
        [this](int32_t id) -> const ProgramTensor & { return tensors.at(id); };
  }
  /// Every value, computed whole.
  std::map<int32_t, Tensor> evaluate(ExecMode mode) const {
    std::map<int32_t, Tensor> v = inputs;
    for (const ProgramOp &op : ops) {
      size_t n = op.inputs.size();
      while (n > 0 && op.inputs[n - 1] < 0)
        --n;
      std::vector<Tensor> args;
      for (size_t i = 0; i < n; ++i)
        args.push_back(op.inputs[i] < 0 ? Tensor() : v.at(op.inputs[i]));
      std::vector<ResultType> types;
      for (int32_t id : op.outputs)
        types.push_back({tensors.at(id).shape, tensors.at(id).dtype});
      std::vector<Tensor> out = executeOp(op.name, op.attrs, args, types, mode);
      for (size_t k = 0; k < out.size(); ++k)
        v[op.outputs[k]] = out[k];
    }
    return v;
  }
  /// The box of each kernel input that `outputs` need: operandRegions
  /// walked back over the ops (the tile is given exactly these).
  std::map<int32_t, Box> needed(const std::map<int32_t, Box> &outputs) const {
    std::map<int32_t, Box> need = outputs;
    for (size_t i = ops.size(); i-- > 0;) {
      const ProgramOp &op = ops[i];
      std::vector<Shape> operandShapes, resultShapes;
      std::vector<Box> resultBoxes;
      size_t n = op.inputs.size();
      while (n > 0 && op.inputs[n - 1] < 0)
        --n;
      for (size_t k = 0; k < n; ++k)
        operandShapes.push_back(tensors.at(op.inputs[k]).shape);
      bool wanted = false;
      for (int32_t id : op.outputs) {
        resultShapes.push_back(tensors.at(id).shape);
        wanted |= need.count(id) && !need.at(id).empty();
        resultBoxes.push_back(need.count(id)
                                  ? need.at(id)
                                  : Box::none(resultShapes.back().size()));
      }
      // A rank-0 box is a scalar: an op no one needs is skipped.
      if (!wanted)
        continue;
      std::vector<Box> boxes = operandRegions(op.name, op.attrs, operandShapes,
                                              resultShapes, resultBoxes);
      for (size_t k = 0; k < n; ++k) {
        auto [it, fresh] = need.emplace(op.inputs[k], boxes[k]);
        if (!fresh)
          it->second = it->second.unite(boxes[k]);
      }
    }
    std::map<int32_t, Box> in;
    for (const auto &[id, box] : need)
      if (inputs.count(id))
        in.emplace(id, box);
    return in;
  }
  /// The tile's blocks: the needed boxes cut from the whole inputs (none for
  /// an empty box: a tile with no work holds nothing).
  std::map<int32_t, Block> blocks(const std::map<int32_t, Box> &need) const {
    std::map<int32_t, Block> held;
    for (const auto &[id, box] : need)
      if (!box.empty())
        held[id] = {
            box, crop({Box::whole(inputs.at(id).shape()), inputs.at(id)}, box)};
    return held;
  }
};

/// `shape` cut along `dim` at `cuts` (first 0, last the size; repeats make
/// empty blocks).
std::vector<Box> split(const Shape &shape, size_t dim,
                       const std::vector<int64_t> &cuts) {
  std::vector<Box> boxes;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    Box b = Box::whole(shape);
    b.lo[dim] = cuts[i];
    b.hi[dim] = cuts[i + 1];
    boxes.push_back(b);
  }
  return boxes;
}

/// Every block of a split along `d0` by one along `d1`.
std::vector<Box> grid(const Shape &shape, size_t d0,
                      const std::vector<int64_t> &cuts0, size_t d1,
                      const std::vector<int64_t> &cuts1) {
  std::vector<Box> boxes;
  for (const Box &a : split(shape, d0, cuts0))
    for (const Box &b : split(shape, d1, cuts1))
      boxes.push_back(a.intersect(b));
  return boxes;
}

/// Checks that `got` equals `want` (within `tol`; 0 means bit-equal).
void expectSame(const Tensor &got, const Tensor &want, double tol,
                const std::string &what) {
  ASSERT_EQ(shapeToString(got.shape()), shapeToString(want.shape())) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    if (tol == 0)
      ASSERT_EQ(got.getDouble(i), want.getDouble(i))
          << what << " at flat index " << i;
    else
      ASSERT_NEAR(got.getDouble(i), want.getDouble(i), tol)
          << what << " at flat index " << i;
  }
}

/// For every box of output `out`: a tile holding exactly the needed input
/// regions computes that box of the whole result. Returns the needed input
/// boxes of each block (for tests to check a few by hand).
std::vector<std::map<int32_t, Box>>
checkTiles(const TestKernel &k, int32_t out, const std::vector<Box> &boxes,
           ExecMode mode = ExecMode::Reference, double tol = 0) {
  std::map<int32_t, Tensor> whole = k.evaluate(mode);
  const Tensor &result = whole.at(out);
  std::vector<std::map<int32_t, Box>> needs;
  for (const Box &box : boxes) {
    std::map<int32_t, Box> need = k.needed({{out, box}});
    needs.push_back(need);
    std::map<int32_t, Block> got;
    EXPECT_NO_THROW(got = executeOnTile(k.ops, k.lookup(), k.blocks(need),
                                        {{out, box}}, mode))
        << "block " << box.str();
    if (!got.count(out))
      continue;
    EXPECT_EQ(got.at(out).box, box);
    expectSame(got.at(out).data,
               crop({Box::whole(result.shape()), result}, box), tol,
               "block " + box.str());
  }
  return needs;
}

Box box(std::vector<int64_t> lo, std::vector<int64_t> hi) {
  return Box{std::move(lo), std::move(hi)};
}

} // namespace

//===----------------------------------------------------------------------===//
// Box and crop
//===----------------------------------------------------------------------===//

TEST(TileExecutorBox, Helpers) {
  Box a = box({0, 2}, {4, 6}), b = box({2, 0}, {6, 3});
  EXPECT_EQ(Box::whole({4, 6}), box({0, 0}, {4, 6}));
  EXPECT_EQ(a.intersect(b), box({2, 2}, {4, 3}));
  EXPECT_EQ(a.unite(b), box({0, 0}, {6, 6}));
  EXPECT_EQ(a.elements(), 16);
  EXPECT_TRUE(a.contains(box({1, 2}, {3, 6})));
  EXPECT_FALSE(a.contains(box({1, 1}, {3, 6})));
  // An empty box is inside anything and adds nothing to a union.
  Box none = box({5, 9}, {5, 12});
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.elements(), 0);
  EXPECT_TRUE(a.contains(none));
  EXPECT_EQ(a.unite(none), a);
  EXPECT_EQ(none.unite(a), a);
  EXPECT_TRUE(a.intersect(box({4, 0}, {5, 9})).empty());
  EXPECT_EQ(a.str(), "[0, 4) x [2, 6)");
  EXPECT_EQ(Box::whole({}).elements(), 1);
  EXPECT_EQ(Box::whole({}).str(), "[]");
}

TEST(TileExecutorBox, Crop) {
  // A block holding rows [1, 4) and columns [2, 5) of a 5x6 tensor whose
  // element (r, c) is 10 r + c.
  Tensor t(DType::F32, {3, 3});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 3; ++c)
      t.setDouble(r * 3 + c, 10.0 * (r + 1) + (c + 2));
  Block blk{box({1, 2}, {4, 5}), t};
  Tensor c = crop(blk, box({2, 3}, {4, 5}));
  ASSERT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_EQ(c.getDouble(0), 23);
  EXPECT_EQ(c.getDouble(1), 24);
  EXPECT_EQ(c.getDouble(2), 33);
  EXPECT_EQ(c.getDouble(3), 34);
  EXPECT_EQ(crop(blk, box({9, 3}, {9, 5})).shape(), (Shape{0, 2}));
  EXPECT_THROW(crop(blk, box({0, 3}, {2, 5})), Error);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST(TileExecutorElementwise, BroadcastBinary) {
  std::mt19937 rng(1);
  TestKernel k;
  int32_t a = k.input("a", {3, 4, 5}, rng), b = k.input("b", {4, 1}, rng);
  int32_t y = k.op("sub", {a, b}, {3, 4, 5});
  Shape s = {3, 4, 5};
  checkTiles(k, y, split(s, 0, {0, 1, 1, 3}));
  checkTiles(k, y, split(s, 1, {0, 3, 4}));
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, y, grid(s, 1, {0, 1, 4}, 2, {0, 2, 2, 5}));
  // Block (rows [1, 4), columns [2, 5)) reads b's rows [1, 4), column 0.
  EXPECT_EQ(needs[5].at(b), box({1, 0}, {4, 1}));
  EXPECT_EQ(needs[5].at(a), box({0, 1, 2}, {3, 4, 5}));
}

TEST(TileExecutorElementwise, SelectCastAndUnary) {
  std::mt19937 rng(2);
  TestKernel k;
  int32_t cond = k.input("cond", {6, 1}, rng, DType::Bool);
  int32_t x = k.input("x", {6, 5}, rng), y = k.input("y", {5}, rng);
  int32_t s = k.op("select", {cond, x, y}, {6, 5});
  AttrMap alpha = {{"alpha", real(0.1)}};
  int32_t l = k.op("leaky_relu", {s}, {6, 5}, alpha);
  int32_t c = k.op("cast", {l}, {6, 5}, {}, DType::F64);
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, c, grid({6, 5}, 0, {0, 2, 6}, 1, {0, 1, 5}));
  EXPECT_EQ(needs[1].at(y), box({1}, {5}));
  EXPECT_EQ(needs[1].at(cond), box({0, 0}, {2, 1}));
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

TEST(TileExecutorMatmul, BatchBroadcast) {
  std::mt19937 rng(3);
  TestKernel k;
  int32_t a = k.input("a", {2, 1, 5, 4}, rng), b = k.input("b", {3, 4, 6}, rng);
  Shape s = {2, 3, 5, 6};
  int32_t y = k.op("matmul", {a, b}, s);
  checkTiles(k, y, split(s, 0, {0, 1, 2}));
  checkTiles(k, y, split(s, 1, {0, 2, 2, 3}));
  checkTiles(k, y, grid(s, 2, {0, 1, 5}, 3, {0, 4, 6}));
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, y, {box({1, 0, 1, 2}, {2, 3, 4, 5})});
  // A: its batch entry, rows [1, 4), all of K; B: all of K, columns [2, 5).
  EXPECT_EQ(needs[0].at(a), box({1, 0, 1, 0}, {2, 1, 4, 4}));
  EXPECT_EQ(needs[0].at(b), box({0, 0, 2}, {3, 4, 5}));
}

TEST(TileExecutorMatmul, VectorOperands) {
  std::mt19937 rng(4);
  TestKernel k;
  int32_t v = k.input("v", {4}, rng), b = k.input("b", {2, 4, 3}, rng);
  int32_t a = k.input("a", {2, 5, 4}, rng);
  int32_t vb = k.op("matmul", {v, b}, {2, 3});
  int32_t av = k.op("matmul", {a, v}, {2, 5});
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, vb, grid({2, 3}, 0, {0, 1, 2}, 1, {0, 2, 3}));
  EXPECT_EQ(needs[1].at(b), box({0, 0, 2}, {1, 4, 3}));
  EXPECT_EQ(needs[1].at(v), box({0}, {4}));
  needs = checkTiles(k, av, split({2, 5}, 1, {0, 3, 5}));
  EXPECT_EQ(needs[1].at(a), box({0, 3, 0}, {2, 5, 4}));
}

TEST(TileExecutorMatmul, FusedBiasRelu) {
  std::mt19937 rng(5);
  TestKernel k;
  int32_t x = k.input("x", {7, 8}, rng), w = k.input("w", {8, 6}, rng);
  int32_t bias = k.input("bias", {6}, rng);
  int32_t mm = k.op("matmul", {x, w}, {7, 6});
  int32_t add = k.op("add", {mm, bias}, {7, 6});
  int32_t y = k.op("relu", {add}, {7, 6});
  std::vector<Box> blocks = grid({7, 6}, 0, {0, 3, 3, 7}, 1, {0, 4, 6});
  std::vector<std::map<int32_t, Box>> needs = checkTiles(k, y, blocks);
  // Block (rows [3, 7), columns [4, 6)).
  EXPECT_EQ(needs[5].at(x), box({3, 0}, {7, 8}));
  EXPECT_EQ(needs[5].at(w), box({0, 4}, {8, 6}));
  EXPECT_EQ(needs[5].at(bias), box({4}, {6}));
  // BLAS sgemm may block a 4x2 product differently from the whole 7x6 one,
  // so fast mode is compared to a few fp32 ulps of |x| |w| (<= 8).
  checkTiles(k, y, blocks, ExecMode::Fast, 4e-6);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

namespace {

/// A conv kernel: x [n, c, spatial...] * w [m, c / group, k...] + bias.
struct ConvCase {
  TestKernel k;
  int32_t x, w, b, y;
};

ConvCase makeConv(Shape xs, Shape ws, Shape ys, std::vector<int64_t> strides,
                  std::vector<int64_t> dilations, std::vector<int64_t> pads,
                  int64_t group, unsigned seed) {
  std::mt19937 rng(seed);
  ConvCase c;
  c.x = c.k.input("x", xs, rng);
  c.w = c.k.input("w", ws, rng);
  c.b = c.k.input("b", {ws[0]}, rng);
  AttrMap attrs = {{"strides", ints(strides)},
                   {"dilations", ints(dilations)},
                   {"pads", ints(pads)},
                   {"group", integer(group)}};
  c.y = c.k.op("conv", {c.x, c.w, c.b}, ys, attrs);
  return c;
}

} // namespace

TEST(TileExecutorConv, RowSplitStrideDilationAsymmetricPads) {
  // H: (13 + 2 + 1 - 5) / 2 + 1 = 6 rows; W: (11 + 1 + 0 - 3) + 1 = 10.
  Shape ys = {2, 4, 6, 10};
  ConvCase c = makeConv({2, 3, 13, 11}, {4, 3, 3, 3}, ys, {2, 1}, {2, 1},
                        {2, 1, 1, 0}, 1, 6);
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(c.k, c.y, split(ys, 2, {0, 1, 4, 4, 6}));
  // Row 0 reads rows -2, 0, 2: [0, 3) with 2 rows of local padding. Rows
  // [1, 4) read 0 .. 3*2-2+4 = 8: [0, 9). Rows [4, 6) read 6 .. 12: [6, 13).
  EXPECT_EQ(needs[0].at(c.x), box({0, 0, 0, 0}, {2, 3, 3, 11}));
  EXPECT_EQ(needs[1].at(c.x), box({0, 0, 0, 0}, {2, 3, 9, 11}));
  EXPECT_FALSE(needs[2].count(c.x)); // an empty block needs nothing
  EXPECT_EQ(needs[3].at(c.x), box({0, 0, 6, 0}, {2, 3, 13, 11}));
  checkTiles(c.k, c.y, split(ys, 0, {0, 1, 2}));
}

TEST(TileExecutorConv, ColumnSplit) {
  Shape ys = {1, 4, 7, 8};
  ConvCase c = makeConv({1, 3, 7, 9}, {4, 3, 3, 3}, ys, {1, 1}, {1, 1},
                        {1, 0, 1, 1}, 1, 7);
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(c.k, c.y, split(ys, 3, {0, 3, 5, 8}));
  // Columns [3, 5) read 3 .. 6 (no pad on the left); [5, 8) read 5 .. 9,
  // the last one in the right pad.
  EXPECT_EQ(needs[1].at(c.x), box({0, 0, 0, 3}, {1, 3, 7, 7}));
  EXPECT_EQ(needs[2].at(c.x), box({0, 0, 0, 5}, {1, 3, 7, 9}));
  checkTiles(c.k, c.y, grid(ys, 2, {0, 2, 7}, 3, {0, 1, 8}));
}

TEST(TileExecutorConv, OutputChannelSplit) {
  Shape ys = {1, 5, 6, 6};
  ConvCase c = makeConv({1, 3, 6, 6}, {5, 3, 3, 3}, ys, {1, 1}, {1, 1},
                        {1, 1, 1, 1}, 1, 8);
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(c.k, c.y, split(ys, 1, {0, 1, 4, 5}));
  EXPECT_EQ(needs[1].at(c.w), box({1, 0, 0, 0}, {4, 3, 3, 3}));
  EXPECT_EQ(needs[1].at(c.b), box({1}, {4}));
  EXPECT_EQ(needs[1].at(c.x), box({0, 0, 0, 0}, {1, 3, 6, 6}));
}

TEST(TileExecutorConv, GroupedChannelSplitAcrossGroups) {
  // Two groups of 3 output channels, each reading 2 input channels.
  Shape ys = {1, 6, 5, 5};
  ConvCase c = makeConv({1, 4, 5, 5}, {6, 2, 3, 3}, ys, {1, 1}, {1, 1},
                        {1, 1, 1, 1}, 2, 9);
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(c.k, c.y, split(ys, 1, {0, 2, 5, 6}));
  // [0, 2) is in group 0; [2, 5) spans both (a part of each); [5, 6) is in
  // group 1.
  EXPECT_EQ(needs[0].at(c.x), box({0, 0, 0, 0}, {1, 2, 5, 5}));
  EXPECT_EQ(needs[1].at(c.x), box({0, 0, 0, 0}, {1, 4, 5, 5}));
  EXPECT_EQ(needs[2].at(c.x), box({0, 2, 0, 0}, {1, 4, 5, 5}));
  checkTiles(c.k, c.y, split(ys, 1, {0, 3, 6}));
  checkTiles(c.k, c.y, split(ys, 1, {0, 1, 6}));
}

TEST(TileExecutorConv, DepthwiseChannelSplit) {
  Shape ys = {2, 6, 4, 4};
  ConvCase c = makeConv({2, 6, 8, 8}, {6, 1, 3, 3}, ys, {2, 2}, {1, 1},
                        {1, 1, 0, 0}, 6, 10);
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(c.k, c.y, split(ys, 1, {0, 2, 5, 6}));
  EXPECT_EQ(needs[1].at(c.x), box({0, 2, 0, 0}, {2, 5, 8, 8}));
  EXPECT_EQ(needs[1].at(c.w), box({2, 0, 0, 0}, {5, 1, 3, 3}));
  checkTiles(c.k, c.y, grid(ys, 1, {0, 3, 6}, 2, {0, 1, 3, 4}));
}

TEST(TileExecutorConv, OneDimensionalAndFast) {
  // 1-D conv, stride 3, dilation 2: (20 + 3 + 2 - 5) / 3 + 1 = 7 outputs.
  Shape ys = {1, 2, 7};
  ConvCase c = makeConv({1, 3, 20}, {2, 3, 3}, ys, {3}, {2}, {3, 2}, 1, 11);
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(c.k, c.y, split(ys, 2, {0, 2, 2, 5, 7}));
  // Outputs [2, 5) read 2*3-3 = 3 .. 4*3-3+4 = 13.
  EXPECT_EQ(needs[2].at(c.x), box({0, 0, 3}, {1, 3, 14}));
  // BLAS sums in fp32 and may group a narrower product differently: a few
  // ulps of sums of up to 27 products of values in [-1, 1).
  checkTiles(c.k, c.y, split(ys, 2, {0, 2, 2, 5, 7}), ExecMode::Fast, 1e-5);
  ConvCase d = makeConv({1, 3, 9, 9}, {4, 3, 3, 3}, {1, 4, 5, 5}, {2, 2},
                        {1, 1}, {1, 1, 1, 1}, 1, 12);
  checkTiles(d.k, d.y, grid({1, 4, 5, 5}, 1, {0, 3, 4}, 2, {0, 2, 5}),
             ExecMode::Fast, 1e-5);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

namespace {

AttrMap poolAttrs(std::vector<int64_t> kernel, std::vector<int64_t> strides,
                  std::vector<int64_t> pads) {
  return {{"kernel_shape", ints(kernel)},
          {"strides", ints(strides)},
          {"dilations", ints({1, 1})},
          {"pads", ints(pads)}};
}

} // namespace

TEST(TileExecutorPool, AvgPoolCountIncludePad) {
  // H = 8, kernel 3, stride 2, pads 1 / 1: a ceil-mode output of 5 rows, the
  // last window (rows 7, 8, 9) reaching past the padded extent [-1, 9).
  // W = 7, kernel 2, stride 1, pads 0 / 1: 7 columns.
  Shape ys = {1, 2, 5, 7};
  for (int64_t countPad : {0, 1}) {
    std::mt19937 rng(13);
    TestKernel k;
    int32_t x = k.input("x", {1, 2, 8, 7}, rng);
    AttrMap attrs = poolAttrs({3, 2}, {2, 1}, {1, 0, 1, 1});
    attrs["count_include_pad"] = integer(countPad);
    int32_t y = k.op("avg_pool", {x}, ys, attrs);
    std::vector<std::map<int32_t, Box>> needs =
        checkTiles(k, y, split(ys, 2, {0, 1, 3, 5}));
    EXPECT_EQ(needs[1].at(x), box({0, 0, 1, 0}, {1, 2, 6, 7}));
    EXPECT_EQ(needs[2].at(x), box({0, 0, 5, 0}, {1, 2, 8, 7}));
    checkTiles(k, y, grid(ys, 2, {0, 4, 5}, 3, {0, 1, 6, 7}));
    checkTiles(k, y, split(ys, 1, {0, 1, 2}));
  }
}

TEST(TileExecutorPool, MaxPoolWithIndices) {
  std::mt19937 rng(14);
  TestKernel k;
  int32_t x = k.input("x", {2, 3, 9, 8}, rng);
  // H: (9 + 1 + 0 - 3) / 2 + 1 = 4; W: (8 + 1 + 1 - 3) / 2 + 1 = 4.
  Shape ys = {2, 3, 4, 4};
  AttrMap attrs = poolAttrs({3, 3}, {2, 2}, {1, 1, 0, 1});
  std::vector<int32_t> out =
      k.opResults("max_pool", {x}, {ys, ys}, attrs, {DType::F32, DType::I64});
  std::vector<Box> blocks = grid(ys, 2, {0, 1, 4}, 3, {0, 3, 3, 4});
  std::vector<std::map<int32_t, Box>> needs = checkTiles(k, out[0], blocks);
  EXPECT_EQ(needs[0].at(x), box({0, 0, 0, 0}, {2, 3, 2, 6}));
  // The indices are flat offsets into the whole input, not the block.
  checkTiles(k, out[1], blocks);
  checkTiles(k, out[1], split(ys, 1, {0, 2, 3}));
  // Values alone (the fast 2-D kernel: a maximum rounds nothing).
  TestKernel single;
  int32_t xs = single.input("x", {2, 3, 9, 8}, rng);
  int32_t ym = single.op("max_pool", {xs}, ys, attrs);
  checkTiles(single, ym, blocks, ExecMode::Fast);
}

//===----------------------------------------------------------------------===//
// Reductions, softmax, normalisations
//===----------------------------------------------------------------------===//

TEST(TileExecutorReduce, KeptAxesProjected) {
  std::mt19937 rng(15);
  TestKernel k;
  int32_t x = k.input("x", {4, 5, 6}, rng);
  int32_t sum = k.op("reduce_sum", {x}, {4, 6},
                     {{"axes", ints({1})}, {"keepdims", integer(0)}});
  int32_t mx = k.op("reduce_max", {x}, {4, 1, 1},
                    {{"axes", ints({1, 2})}, {"keepdims", integer(1)}});
  int32_t all = k.op("reduce_mean", {x}, {},
                     {{"axes", ints({})}, {"keepdims", integer(0)}});
  int32_t arg = k.op("arg_max", {x}, {4, 5},
                     {{"axis", integer(2)},
                      {"keepdims", integer(0)},
                      {"select_last_index", integer(0)}},
                     DType::I64);
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, sum, grid({4, 6}, 0, {0, 3, 4}, 1, {0, 2, 2, 6}));
  EXPECT_EQ(needs[5].at(x), box({3, 0, 2}, {4, 5, 6}));
  needs = checkTiles(k, mx, split({4, 1, 1}, 0, {0, 1, 4}));
  EXPECT_EQ(needs[1].at(x), box({1, 0, 0}, {4, 5, 6}));
  checkTiles(k, all, {Box::whole({})});
  needs = checkTiles(k, arg, split({4, 5}, 1, {0, 1, 5}));
  EXPECT_EQ(needs[1].at(x), box({0, 1, 0}, {4, 5, 6}));
}

TEST(TileExecutorSoftmax, KeptAxisAndSoftmaxAxis) {
  std::mt19937 rng(16);
  TestKernel k;
  int32_t x = k.input("x", {4, 6, 5}, rng);
  int32_t y = k.op("softmax", {x}, {4, 6, 5}, {{"axis", integer(1)}});
  int32_t l = k.op("log_softmax", {x}, {4, 6, 5}, {{"axis", integer(2)}});
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, y, split({4, 6, 5}, 0, {0, 1, 4}));
  EXPECT_EQ(needs[0].at(x), box({0, 0, 0}, {1, 6, 5}));
  // Split on the softmax axis itself: each block needs the whole axis.
  needs = checkTiles(k, y, grid({4, 6, 5}, 1, {0, 2, 2, 6}, 2, {0, 3, 5}));
  EXPECT_EQ(needs[0].at(x), box({0, 0, 0}, {4, 6, 3}));
  checkTiles(k, l, grid({4, 6, 5}, 1, {0, 4, 6}, 2, {0, 1, 5}));
}

TEST(TileExecutorNorm, LayerInstanceBatchNorm) {
  std::mt19937 rng(17);
  TestKernel k;
  int32_t x = k.input("x", {3, 4, 5}, rng);
  int32_t scale = k.input("scale", {4, 5}, rng),
          bias = k.input("bias", {5}, rng);
  int32_t ln = k.op("layer_norm", {x, scale, bias}, {3, 4, 5},
                    {{"axis", integer(1)}, {"epsilon", real(1e-5)}});
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, ln, split({3, 4, 5}, 0, {0, 2, 3}));
  EXPECT_EQ(needs[1].at(x), box({2, 0, 0}, {3, 4, 5}));
  checkTiles(k, ln, grid({3, 4, 5}, 1, {0, 1, 4}, 2, {0, 2, 5}));

  Shape is = {2, 4, 3, 3};
  int32_t xi = k.input("xi", is, rng), s = k.input("s", {4}, rng);
  int32_t b = k.input("b", {4}, rng), mean = k.input("mean", {4}, rng);
  int32_t var = k.op("abs", {k.input("v", {4}, rng)}, {4});
  int32_t in = k.op("instance_norm", {xi, s, b}, is, {{"epsilon", real(1e-5)}});
  needs = checkTiles(k, in, grid(is, 1, {0, 1, 4}, 2, {0, 2, 3}));
  // Block (channels [1, 4), rows [0, 2)): all rows, its channels' scales.
  EXPECT_EQ(needs[2].at(xi), box({0, 1, 0, 0}, {2, 4, 3, 3}));
  EXPECT_EQ(needs[2].at(s), box({1}, {4}));
  int32_t bn =
      k.op("batch_norm", {xi, s, b, mean, var}, is, {{"epsilon", real(1e-5)}});
  needs = checkTiles(k, bn, grid(is, 1, {0, 3, 4}, 3, {0, 1, 3}));
  EXPECT_EQ(needs[1].at(xi), box({0, 0, 0, 1}, {2, 3, 3, 3}));
  EXPECT_EQ(needs[1].at(mean), box({0}, {3}));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST(TileExecutorDataMovement, TransposeSlicePad) {
  std::mt19937 rng(18);
  TestKernel k;
  int32_t x = k.input("x", {3, 4, 10}, rng);
  int32_t t = k.op("transpose", {x}, {10, 3, 4}, {{"perm", ints({2, 0, 1})}});
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, t, grid({10, 3, 4}, 0, {0, 6, 10}, 2, {0, 1, 4}));
  EXPECT_EQ(needs[3].at(x), box({0, 1, 6}, {3, 4, 10}));

  // Columns 1, 3, 5, 7 (step 2) and rows 3, 1 (step -2).
  AttrMap sl = {{"starts", ints({1, 3})},
                {"ends", ints({9, 0})},
                {"axes", ints({2, 1})},
                {"steps", ints({2, -2})}};
  int32_t s = k.op("slice", {x}, {3, 2, 4}, sl);
  needs = checkTiles(k, s, grid({3, 2, 4}, 1, {0, 1, 2}, 2, {0, 1, 3, 4}));
  // Result columns [1, 3) read columns 3 .. 5; result row 0 reads row 3.
  EXPECT_EQ(needs[1].at(x), box({0, 3, 3}, {3, 4, 6}));
  // Both rows (3 and 1) of the negative step in one block: rows [1, 4).
  needs = checkTiles(k, s, split({3, 2, 4}, 2, {0, 2, 4}));
  EXPECT_EQ(needs[1].at(x), box({0, 1, 5}, {3, 4, 8}));

  // Constant pad: 2 before and cropping 1 after along dim 2.
  AttrMap pd = {{"pads", ints({0, 1, 2, 0, 0, -1})},
                {"mode", text("constant")},
                {"value", real(0.5)}};
  int32_t p = k.op("pad", {x}, {3, 5, 11}, pd);
  needs = checkTiles(k, p, grid({3, 5, 11}, 1, {0, 1, 5}, 2, {0, 1, 4, 11}));
  EXPECT_TRUE(needs[0].at(x).empty()); // all padding
  EXPECT_EQ(needs[4].at(x), box({0, 0, 0}, {3, 4, 2}));
  EXPECT_EQ(needs[5].at(x), box({0, 0, 2}, {3, 4, 9}));
  EXPECT_TRUE(hasBlockRule("pad", pd));
  pd["mode"] = text("reflect");
  EXPECT_FALSE(hasBlockRule("pad", pd));
}

TEST(TileExecutorDataMovement, ConcatAlongItsAxis) {
  // A decode step's KV cache: 5 past rows and 1 new, concatenated along
  // axis 1 and split along it, so one block holds only past rows, one both
  // and one only the new row.
  std::mt19937 rng(19);
  TestKernel k;
  int32_t past = k.input("past", {2, 5, 3}, rng);
  int32_t now = k.input("now", {2, 1, 3}, rng);
  int32_t c = k.op("concat", {past, now}, {2, 6, 3}, {{"axis", integer(1)}});
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, c, grid({2, 6, 3}, 1, {0, 2, 5, 6}, 0, {0, 1, 2}));
  // Rows [2, 5) of batch 0 need past rows [2, 5) and no new row.
  EXPECT_EQ(needs[2].at(past), box({0, 2, 0}, {1, 5, 3}));
  EXPECT_TRUE(needs[2].at(now).empty());
  // The last block is the new row alone.
  EXPECT_TRUE(needs[4].at(past).empty());
  EXPECT_EQ(needs[4].at(now), box({0, 0, 0}, {1, 1, 3}));
}

TEST(TileExecutorDataMovement, ReshapeBlocksOfRows) {
  // Heads cut out of a hidden dimension: [2, 12] -> [2, 3, 4]. A block of
  // heads (whole within each) is a block of the input's columns; a block
  // that cuts a head needs the whole input.
  std::mt19937 rng(23);
  TestKernel k;
  int32_t x = k.input("x", {2, 12}, rng);
  int32_t r = k.op("reshape", {x}, {2, 3, 4});
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, r, grid({2, 3, 4}, 0, {0, 1, 2}, 1, {0, 2, 3}));
  EXPECT_EQ(needs[1].at(x), box({0, 8}, {1, 12}));
  EXPECT_TRUE(hasBlockRule("reshape", {}));
  std::vector<std::map<int32_t, Box>> cut =
      checkTiles(k, r, split({2, 3, 4}, 2, {0, 1, 4}));
  EXPECT_EQ(cut[0].at(x), Box::whole({2, 12}));
}

TEST(TileExecutorDataMovement, GatherByDataAndByIndices) {
  // An embedding lookup: a split of the table's columns needs those columns
  // of every row; a split of the tokens needs their indices and the whole
  // table.
  std::mt19937 rng(29);
  TestKernel k;
  int32_t table = k.input("table", {5, 6}, rng);
  int32_t idx = k.input("idx", {3}, rng, DType::I64);
  k.inputs[idx] = Tensor::fromVector<int64_t>(DType::I64, {3}, {4, 0, -1});
  int32_t g = k.op("gather", {table, idx}, {3, 6}, {{"axis", integer(0)}});
  std::vector<std::map<int32_t, Box>> cols =
      checkTiles(k, g, split({3, 6}, 1, {0, 2, 2, 6}));
  EXPECT_EQ(cols[2].at(table), box({0, 2}, {5, 6}));
  EXPECT_EQ(cols[2].at(idx), Box::whole({3}));
  std::vector<std::map<int32_t, Box>> rows =
      checkTiles(k, g, split({3, 6}, 0, {0, 1, 3}));
  EXPECT_EQ(rows[1].at(table), Box::whole({5, 6}));
  EXPECT_EQ(rows[1].at(idx), box({1}, {3}));
}

TEST(TileExecutorFallback, TileNeedsItsOperandWhole) {
  // tile has no block rule: every operand whole, the result cropped.
  std::mt19937 rng(31);
  TestKernel k;
  int32_t x = k.input("x", {2, 3}, rng);
  int32_t t = k.op("tile", {x}, {4, 3}, {{"repeats", ints({2, 1})}});
  int32_t y = k.op("relu", {t}, {4, 3});
  EXPECT_FALSE(hasBlockRule("tile", {}));
  std::vector<std::map<int32_t, Box>> needs =
      checkTiles(k, y, split({4, 3}, 0, {0, 1, 4}));
  EXPECT_EQ(needs[0].at(x), Box::whole({2, 3}));
}

//===----------------------------------------------------------------------===//
// What a tile does not do, and errors
//===----------------------------------------------------------------------===//

TEST(TileExecutorPlan, UnneededValuesAndEmptyTiles) {
  std::mt19937 rng(20);
  TestKernel k;
  int32_t a = k.input("a", {4, 3}, rng), b = k.input("b", {4, 3}, rng);
  int32_t ea = k.op("exp", {a}, {4, 3});
  int32_t nb = k.op("neg", {b}, {4, 3});
  // Only exp(a) is asked for: no block of b is needed, neg does not run.
  std::map<int32_t, Block> held = k.blocks({{a, box({1, 0}, {3, 3})}});
  std::map<int32_t, Block> got =
      executeOnTile(k.ops, k.lookup(), held, {{ea, box({1, 0}, {3, 3})}},
                    ExecMode::Reference);
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(got.at(ea).data.shape(), (Shape{2, 3}));
  // A tile with no work needs nothing at all.
  got = executeOnTile(k.ops, k.lookup(), {},
                      {{ea, box({2, 0}, {2, 3})}, {nb, Box::none(2)}},
                      ExecMode::Reference);
  EXPECT_EQ(got.at(ea).data.shape(), (Shape{0, 3}));
  EXPECT_EQ(got.at(nb).data.numElements(), 0);
}

TEST(TileExecutorErrors, HaloOneRowShort) {
  ConvCase c = makeConv({1, 2, 8, 8}, {3, 2, 3, 3}, {1, 3, 8, 8}, {1, 1},
                        {1, 1}, {1, 1, 1, 1}, 1, 21);
  Box out = box({0, 0, 2, 0}, {1, 3, 5, 8});
  std::map<int32_t, Box> need = c.k.needed({{c.y, out}});
  ASSERT_EQ(need.at(c.x), box({0, 0, 1, 0}, {1, 2, 6, 8}));
  // The tile holds rows [2, 6): one row short of the halo above.
  need[c.x].lo[2] = 2;
  try {
    executeOnTile(c.k.ops, c.k.lookup(), c.k.blocks(need), {{c.y, out}},
                  ExecMode::Reference);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'conv'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("needs rows [1, 6) of dimension 2 of tensor 0 'x'"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("the tile holds [2, 6)"), std::string::npos) << msg;
  }
  // No block of the weights at all.
  need = c.k.needed({{c.y, out}});
  need.erase(c.w);
  EXPECT_THROW(executeOnTile(c.k.ops, c.k.lookup(), c.k.blocks(need),
                             {{c.y, out}}, ExecMode::Reference),
               Error);
}

// A program's window attributes and shapes are not trusted: a stride
// below 1, a window that reaches past 64-bit positions and a result of
// another rank than the input are refused with the op's problem, not
// computed (each was undefined behaviour before; fuzz/regressions/program).
TEST(TileExecutorErrors, WindowAttributesAndRanksAreChecked) {
  const Shape x = {1, 2, 8, 8}, y = {1, 2, 4, 4};
  auto regions = [&](const AttrMap &attrs, const Box &res) {
    return operandRegions("max_pool", attrs, {x}, {y}, {res});
  };
  auto refusal = [&](const AttrMap &attrs, const Box &res) -> std::string {
    try {
      regions(attrs, res);
    } catch (const Error &e) {
      return e.what();
    }
    return "(accepted)";
  };
  const Box all = box({0, 0, 0, 0}, {1, 2, 4, 4});
  EXPECT_NO_THROW(regions(poolAttrs({2, 2}, {2, 2}, {0, 0, 0, 0}), all));
  EXPECT_EQ(refusal(poolAttrs({2, 2}, {0, 2}, {0, 0, 0, 0}), all),
            "max_pool: stride 0 is below 1");
  EXPECT_EQ(refusal(poolAttrs({2, 2}, {2, 2}, {0, -1, 0, 0}), all),
            "max_pool: pad -1 is below 0");
  AttrMap huge = poolAttrs({7, 7}, {2, 2}, {0, 0, 0, 0});
  huge["dilations"] = ints({int64_t(1) << 62, 1});
  EXPECT_NE(refusal(huge, all).find("reaches past 64-bit positions"),
            std::string::npos);
  // A result tensor of rank 0 (its box matches it, so only the window
  // geometry sees the ranks disagree).
  try {
    operandRegions("max_pool", poolAttrs({2, 2}, {2, 2}, {0, 0, 0, 0}), {x},
                   {Shape{}}, {box({}, {})});
    ADD_FAILURE() << "a rank-0 result was accepted";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "window: a result of rank 0 for an input of rank 4");
  }
}

TEST(TileExecutorErrors, SliceReadsInsideItsInput) {
  // The program fuzzer's slice: a step of 5e18 over 4 elements overflowed
  // int64 in the region it reads (UBSan). Every element a slice takes must
  // lie inside its input.
  const Shape x = {16}, y = {4};
  auto sliceAttrs = [](int64_t start, int64_t step) {
    AttrMap a;
    a["axes"] = ints({0});
    a["starts"] = ints({start});
    a["steps"] = ints({step});
    return a;
  };
  auto refusal = [&](const AttrMap &attrs) -> std::string {
    try {
      operandRegions("slice", attrs, {x}, {y}, {box({0}, {4})});
    } catch (const Error &e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_EQ(refusal(sliceAttrs(1, 4)), "(accepted)");
  EXPECT_EQ(refusal(sliceAttrs(15, -5)), "(accepted)");
  EXPECT_EQ(refusal(sliceAttrs(0, 4977322013174530047)),
            "slice: axis 0: start 0 and step 4977322013174530047 over 4 "
            "elements read outside the input's 16");
  EXPECT_EQ(refusal(sliceAttrs(4, 4)),
            "slice: axis 0: start 4 and step 4 over 4 elements read outside "
            "the input's 16");
  EXPECT_EQ(refusal(sliceAttrs(-1, 1)),
            "slice: axis 0: start -1 and step 1 over 4 elements read outside "
            "the input's 16");
  try {
    operandRegions("slice", sliceAttrs(0, 1), {x}, {Shape{4, 1}},
                   {box({0, 0}, {4, 1})});
    ADD_FAILURE() << "a result of another rank was accepted";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "slice: operand and result ranks differ");
  }
}

TEST(TileExecutorErrors, ConcatOperandsFitTheResult) {
  // The program fuzzer's concat: an operand of rank 0 was indexed with
  // vector::at, whose std::out_of_range escaped as no loom::rt::Error.
  auto refusal = [](const std::vector<Shape> &ins) -> std::string {
    AttrMap a;
    a["axis"] = ints({1});
    try {
      operandRegions("concat", a, ins, {Shape{2, 5}}, {box({0, 0}, {2, 5})});
    } catch (const Error &e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_EQ(refusal({{2, 2}, {2, 3}}), "(accepted)");
  EXPECT_EQ(refusal({{2, 2}, {}}),
            "concat: operand 1 [] does not fit the result [2x5] along axis 1");
  EXPECT_EQ(refusal({{3, 2}, {2, 3}}),
            "concat: operand 0 [3x2] does not fit the result [2x5] along "
            "axis 1");
  EXPECT_EQ(refusal({{2, 2}, {2, 2}}),
            "concat: the operands' 4 along axis 1 are not the result's 5");
}

TEST(TileExecutorPlan, CacheSharesARepeatedKernel) {
  // Two convolutions with the same shapes and attributes over other tensor
  // ids (one layer's kernel and the next's), and a third with another
  // stride: the cache derives the first two once, and every answer and
  // error is tileWork's and checkTileOperands' own.
  std::mt19937 rng(22);
  TestKernel k;
  AttrMap attrs = {{"strides", ints({1, 1})},
                   {"dilations", ints({1, 1})},
                   {"pads", ints({1, 1, 1, 1})},
                   {"group", integer(1)}};
  auto conv = [&](AttrMap a, Shape ys) {
    int32_t x = k.input("x", {1, 2, 8, 8}, rng);
    int32_t w = k.input("w", {3, 2, 3, 3}, rng);
    size_t first = k.ops.size();
    int32_t y = k.op("conv", {x, w}, ys, std::move(a));
    int32_t r = k.op("relu", {y}, ys);
    return std::make_tuple(
        std::vector<ProgramOp>(k.ops.begin() + first, k.ops.end()), x, w, r);
  };
  auto [opsA, xA, wA, rA] = conv(attrs, {1, 3, 8, 8});
  auto [opsB, xB, wB, rB] = conv(attrs, {1, 3, 8, 8});
  AttrMap strided = attrs;
  strided["strides"] = ints({2, 2});
  auto [opsC, xC, wC, rC] = conv(strided, {1, 3, 4, 4});

  TilePlanCache cache(k.lookup());
  auto same = [](const TileWork &a, const TileWork &b) {
    EXPECT_EQ(a.contractions, b.contractions);
    EXPECT_EQ(a.vectorOps, b.vectorOps);
  };
  Box rows = box({0, 0, 2, 0}, {1, 3, 5, 8});
  same(cache.work(opsA, {{rA, rows}}), tileWork(opsA, k.lookup(), {{rA, rows}}));
  same(cache.work(opsB, {{rB, rows}}), tileWork(opsB, k.lookup(), {{rB, rows}}));
  EXPECT_EQ(cache.derivations(), 1);
  Box other = box({0, 0, 0, 0}, {1, 3, 2, 8});
  same(cache.work(opsB, {{rB, other}}),
       tileWork(opsB, k.lookup(), {{rB, other}}));
  EXPECT_EQ(cache.derivations(), 2);
  Box half = box({0, 0, 0, 0}, {1, 3, 2, 4});
  same(cache.work(opsC, {{rC, half}}), tileWork(opsC, k.lookup(), {{rC, half}}));
  EXPECT_EQ(cache.derivations(), 3);

  // The halo: rows [1, 6) of x for output rows [2, 5). Held whole it
  // passes; one row short, both name kernel B's own tensor.
  std::map<int32_t, Box> held = {{xB, box({0, 0, 1, 0}, {1, 2, 6, 8})},
                                 {wB, Box::whole({3, 2, 3, 3})}};
  EXPECT_NO_THROW(cache.checkOperands(opsB, held, {{rB, rows}}));
  held[xB].lo[2] = 2;
  std::string cached, direct;
  try {
    cache.checkOperands(opsB, held, {{rB, rows}});
  } catch (const Error &e) {
    cached = e.what();
  }
  try {
    checkTileOperands(opsB, k.lookup(), held, {{rB, rows}});
  } catch (const Error &e) {
    direct = e.what();
  }
  EXPECT_EQ(cached, direct);
  EXPECT_NE(cached.find("needs rows [1, 6) of dimension 2 of tensor " +
                        std::to_string(xB)),
            std::string::npos)
      << cached;
  EXPECT_EQ(cache.derivations(), 3);
  // No block of the weights.
  held.erase(wB);
  held[xB].lo[2] = 1;
  EXPECT_THROW(cache.checkOperands(opsB, held, {{rB, rows}}), Error);
  (void)xA, (void)wA, (void)xC, (void)wC;
}
