//===- DecomposeContraction.cpp - Splits of matmul, conv and pooling ------===//
//
// A matmul's output rows need A's rows and all of B; its columns all of A
// and B's columns. A convolution's output channels need its weights' and
// bias's rows and the whole input; its output rows need input rows
// [lo * stride - pad, (hi - 1) * stride - pad + (kernel - 1) * dilation + 1),
// that is the input split in blocks of block x stride with a halo of
// `pad` rows before and (kernel - 1) x dilation + 1 - stride - pad after,
// and the whole weights. Pooling follows the same window rule.
//
//===----------------------------------------------------------------------===//
#include "DecomposeRules.h"

#include "loom/Dialect/Graph/IR/Graph.h"

namespace loom::spatial::detail {

using namespace mlir;

namespace {

/// An operand of rank `rank` broadcast against a result of rank
/// `resultRank` along result dimension `dim` (numpy alignment from the
/// right): its own dimension, or -1 where it has none or has size 1.
int64_t alignedDim(int64_t dim, int64_t resultRank,
                   const std::vector<int64_t> &operand,
                   int64_t resultSize) {
  int64_t od = dim - (resultRank - static_cast<int64_t>(operand.size()));
  if (od < 0 || operand[od] != resultSize)
    return -1;
  return od;
}

TileSplit splitOrWhole(int64_t dim, const TileSplit &r) {
  if (dim < 0)
    return TileSplit::whole();
  return TileSplit::along(dim, r.block, r.haloLo, r.haloHi);
}

std::vector<TileSplit> matmulSplits(graph::MatMulOp op, const TileSplit &r) {
  std::vector<int64_t> a = shapeOfValue(op.getLhs());
  std::vector<int64_t> b = shapeOfValue(op.getRhs());
  std::vector<int64_t> y = shapeOfValue(op.getOutput());
  const int64_t rank = static_cast<int64_t>(y.size());
  if (a.size() < 2 || b.size() < 2)
    return allWhole(op);
  if (r.dim == rank - 1) // columns: all of A, B's columns
    return {TileSplit::whole(),
            TileSplit::along(static_cast<int64_t>(b.size()) - 1, r.block,
                             r.haloLo, r.haloHi)};
  if (r.dim == rank - 2) // rows: A's rows, all of B
    return {TileSplit::along(static_cast<int64_t>(a.size()) - 2, r.block,
                             r.haloLo, r.haloHi),
            TileSplit::whole()};
  // A batch dimension: each operand's own, or whole where it broadcasts.
  // The matrix dimensions of the operands are not batch dimensions.
  auto batchDim = [&](const std::vector<int64_t> &s) {
    std::vector<int64_t> batch(s.begin(), s.end() - 2);
    return alignedDim(r.dim, rank - 2, batch, y[r.dim]);
  };
  return {splitOrWhole(batchDim(a), r), splitOrWhole(batchDim(b), r)};
}

/// The input split for output positions split as `r` along a spatial
/// dimension of a window op (conv or pooling; the input's dimension has
/// the same index).
TileSplit windowSplit(const TileSplit &r, int64_t stride,
                      int64_t dilation, int64_t kernel, int64_t padBegin) {
  const int64_t extent = (kernel - 1) * dilation + 1;
  return TileSplit::along(r.dim, r.block * stride,
                          r.haloLo * stride + padBegin,
                          r.haloHi * stride - stride + extent - padBegin);
}

std::vector<TileSplit> convSplits(graph::ConvOp op, const TileSplit &r) {
  std::vector<int64_t> x = shapeOfValue(op.getInput());
  std::vector<int64_t> w = shapeOfValue(op.getWeight());
  const bool hasBias = static_cast<bool>(op.getBias());
  auto result = [&](TileSplit in, TileSplit weight, TileSplit bias) {
    std::vector<TileSplit> s = {in, weight};
    if (hasBias)
      s.push_back(bias);
    return s;
  };
  const TileSplit whole = TileSplit::whole();
  if (r.dim == 0)
    return result(TileSplit::along(0, r.block, r.haloLo, r.haloHi), whole,
                  whole);
  if (r.dim == 1) {
    TileSplit rows = TileSplit::along(0, r.block, r.haloLo, r.haloHi);
    const int64_t group = op.getGroup();
    const int64_t outPerGroup = w[0] / std::max<int64_t>(1, group);
    const int64_t inPerGroup = w[1];
    // Grouped (depthwise) channels split on whole groups need only their
    // groups' input channels.
    if (group > 1 && r.haloLo == 0 && r.haloHi == 0 && outPerGroup > 0 &&
        r.block % outPerGroup == 0)
      return result(TileSplit::along(1, r.block / outPerGroup * inPerGroup),
                    rows, rows);
    return result(whole, rows, rows);
  }
  const int64_t i = r.dim - 2;
  const int64_t spatial = static_cast<int64_t>(x.size()) - 2;
  if (i < 0 || i >= spatial)
    return allWhole(op);
  return result(windowSplit(r, op.getStrides()[i], op.getDilations()[i],
                            w[2 + i], op.getPads()[i]),
                whole, whole);
}

template <typename PoolOp>
std::vector<TileSplit> poolSplits(PoolOp op, const TileSplit &r) {
  if (r.dim <= 1)
    return {TileSplit::along(r.dim, r.block, r.haloLo, r.haloHi)};
  const int64_t i = r.dim - 2;
  if (i >= static_cast<int64_t>(op.getKernelShape().size()))
    return allWhole(op);
  return {windowSplit(r, op.getStrides()[i], op.getDilations()[i],
                      op.getKernelShape()[i], op.getPads()[i])};
}

} // namespace

SplitList contractionSplits(Operation *op, const TileSplit &r) {
  if (auto mm = dyn_cast<graph::MatMulOp>(op))
    return matmulSplits(mm, r);
  if (auto conv = dyn_cast<graph::ConvOp>(op))
    return convSplits(conv, r);
  if (auto pool = dyn_cast<graph::MaxPoolOp>(op)) {
    // Indices are positions in the whole input: a block cannot give them.
    if (pool.getIndices() && !pool.getIndices().use_empty())
      return allWhole(op);
    return poolSplits(pool, r);
  }
  if (auto pool = dyn_cast<graph::AvgPoolOp>(op))
    return poolSplits(pool, r);
  return std::nullopt;
}

} // namespace loom::spatial::detail
