//===- DecomposeDataMovement.cpp - Splits of data-movement ops ------------===//
//
// A gather's result is data[:axis] + indices + data[axis+1:]: a split of a
// dimension from the data needs the data split there and its whole axis
// (an index may point anywhere along it) with the indices whole; a split
// of a dimension from the indices needs the indices split and the whole
// data (an embedding lookup split by tokens reads the whole table). A
// concat split along another dimension than its axis needs each operand
// split there (a KV cache's past and new rows, by heads), and along its
// axis each operand's rows of the tile's block (the past rows on most
// tiles, a decode step's new row on the last); a reshape split
// along a leading dimension it keeps, or one it cuts into this and inner
// dimensions, needs its input split there (see reshapeSplitFactor); a slice
// split along a dimension it does not slice needs its input split there.
// Other splits and other data-movement ops need their operands whole
// (Decompose.h).
//
//===----------------------------------------------------------------------===//
#include "DecomposeRules.h"

#include "loom/Dialect/Graph/IR/Graph.h"

namespace loom::spatial::detail {

using namespace mlir;

namespace {

/// Whether a reshape from `in` to `out` split along result dimension `dim`
/// reads a block of input dimension `dim`: the dimensions before it agree,
/// and input dimension `dim` is `factor` x result dimension `dim` with the
/// rest of each shape holding the same elements (splitting heads out of a
/// hidden dimension: [1, T, 768] -> [1, T, 12, 64], factor 64; factor 1
/// where the dimension itself is kept).
bool reshapeSplitFactor(const std::vector<int64_t> &in,
                        const std::vector<int64_t> &out, int64_t dim,
                        int64_t &factor) {
  if (dim >= static_cast<int64_t>(in.size()))
    return false;
  for (int64_t d = 0; d < dim; ++d)
    if (in[d] != out[d])
      return false;
  if (out[dim] <= 0 || in[dim] % out[dim] != 0)
    return false;
  factor = in[dim] / out[dim];
  int64_t inner = 1, outInner = 1;
  for (size_t d = dim + 1; d < in.size(); ++d)
    inner *= in[d];
  for (size_t d = dim + 1; d < out.size(); ++d)
    outInner *= out[d];
  return inner * factor == outInner;
}

TileSplit along(int64_t dim, const TileSplit &r) {
  return TileSplit::along(dim, r.block, r.haloLo, r.haloHi);
}

} // namespace

SplitList dataMovementSplits(Operation *op, const TileSplit &r) {
  if (auto concat = dyn_cast<graph::ConcatOp>(op)) {
    if (r.dim != static_cast<int64_t>(concat.getAxis()))
      return std::vector<TileSplit>(op->getNumOperands(), along(r.dim, r));
    // Along the axis, operand i holds result rows [off, off + len): tile
    // j's rows of it are its block shifted back by off (a decode step's
    // new row lands on the last tile only).
    std::vector<TileSplit> s;
    int64_t offset = 0;
    for (Value v : op->getOperands()) {
      s.push_back(TileSplit::along(r.dim, r.block, r.haloLo + offset,
                                   r.haloHi - offset));
      offset += shapeOfValue(v)[r.dim];
    }
    return s;
  }
  if (isa<graph::ReshapeOp>(op)) {
    std::vector<int64_t> in = shapeOfValue(op->getOperand(0));
    std::vector<int64_t> out = shapeOfValue(op->getResult(0));
    int64_t factor = 0;
    if (reshapeSplitFactor(in, out, r.dim, factor) && r.haloLo == 0 &&
        r.haloHi == 0)
      return std::vector<TileSplit>{
          TileSplit::along(r.dim, r.block * factor)};
    return allWhole(op);
  }
  if (auto slice = dyn_cast<graph::SliceOp>(op)) {
    if (llvm::is_contained(slice.getAxes(), r.dim))
      return allWhole(op);
    return std::vector<TileSplit>{along(r.dim, r)};
  }
  auto gather = dyn_cast<graph::GatherOp>(op);
  if (!gather)
    return std::nullopt;
  const int64_t axis = gather.getAxis();
  const int64_t k =
      static_cast<int64_t>(shapeOfValue(gather.getIndices()).size());
  auto split = [&](int64_t dim) {
    return TileSplit::along(dim, r.block, r.haloLo, r.haloHi);
  };
  if (r.dim < axis)
    return std::vector<TileSplit>{split(r.dim), TileSplit::whole()};
  if (r.dim < axis + k)
    return std::vector<TileSplit>{TileSplit::whole(), split(r.dim - axis)};
  return std::vector<TileSplit>{split(r.dim - k + 1), TileSplit::whole()};
}

} // namespace loom::spatial::detail
