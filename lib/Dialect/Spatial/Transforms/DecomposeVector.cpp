//===- DecomposeVector.cpp - Splits of the vector unit's op families ------===//
//
// Elementwise ops need their operands' blocks where they have the split
// dimension (numpy broadcasting aligns from the right), and the whole of an
// operand that broadcasts along it. Reductions, arg max/min, softmax and
// its kin and the normalisations split only over the dimensions they keep:
// a result split along a reduced or normalised axis needs the whole input.
// A transpose's operand is split along the permuted dimension.
//
//===----------------------------------------------------------------------===//
#include "DecomposeRules.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/IR/OpClasses.h"

#include <algorithm>

namespace loom::spatial::detail {

using namespace mlir;

namespace {

TileSplit along(int64_t dim, const TileSplit &r) {
  return TileSplit::along(dim, r.block, r.haloLo, r.haloHi);
}

std::vector<TileSplit> elementwiseSplits(Operation *op, const TileSplit &r) {
  std::vector<int64_t> y = shapeOfValue(op->getResult(0));
  const int64_t rank = static_cast<int64_t>(y.size());
  std::vector<TileSplit> s;
  for (Value v : op->getOperands()) {
    std::vector<int64_t> x = shapeOfValue(v);
    int64_t d = r.dim - (rank - static_cast<int64_t>(x.size()));
    if (d < 0 || x[d] != y[r.dim])
      s.push_back(TileSplit::whole());
    else
      s.push_back(along(d, r));
  }
  return s;
}

/// The input dimension of result dimension `dim` of a reduction over
/// `axes`; -1 when it is a reduced axis.
int64_t keptInputDim(int64_t dim, llvm::ArrayRef<int64_t> axes,
                     bool keepdims, int64_t inputRank) {
  auto reduced = [&](int64_t d) { return llvm::is_contained(axes, d); };
  if (keepdims)
    return reduced(dim) ? -1 : dim;
  for (int64_t d = 0, kept = 0; d < inputRank; ++d) {
    if (reduced(d))
      continue;
    if (kept++ == dim)
      return d;
  }
  return -1;
}

/// A single-input op that needs whole slices along `axis`.
std::vector<TileSplit> axisSplits(Operation *op, const TileSplit &r,
                                  int64_t axis) {
  std::vector<TileSplit> s = allWhole(op);
  if (r.dim != axis)
    s[0] = along(r.dim, r);
  return s;
}

} // namespace

SplitList vectorSplits(Operation *op, const TileSplit &r) {
  if (graph::isElementwise(op) && op->getNumResults() == 1)
    return elementwiseSplits(op, r);
  if (graph::isReduction(op)) {
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    auto keep = op->getAttrOfType<BoolAttr>("keepdims");
    int64_t inRank = static_cast<int64_t>(shapeOfValue(op->getOperand(0)).size());
    // No axes: every axis is reduced.
    std::vector<int64_t> all;
    for (int64_t d = 0; d < inRank; ++d)
      all.push_back(d);
    llvm::ArrayRef<int64_t> reduced =
        axes && !axes.empty() ? axes.asArrayRef() : llvm::ArrayRef(all);
    int64_t d = keptInputDim(r.dim, reduced, keep && keep.getValue(), inRank);
    if (d < 0)
      return allWhole(op);
    return std::vector<TileSplit>{along(d, r)};
  }
  if (isa<graph::ArgMaxOp, graph::ArgMinOp>(op)) {
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    bool keep = op->getAttrOfType<BoolAttr>("keepdims").getValue();
    int64_t inRank = static_cast<int64_t>(shapeOfValue(op->getOperand(0)).size());
    int64_t d = keptInputDim(r.dim, {axis}, keep, inRank);
    if (d < 0)
      return allWhole(op);
    return std::vector<TileSplit>{along(d, r)};
  }
  if (isa<graph::SoftmaxOp, graph::LogSoftmaxOp, graph::HardmaxOp,
          graph::CumSumOp>(op))
    return axisSplits(op, r, op->getAttrOfType<IntegerAttr>("axis").getInt());
  if (auto ln = dyn_cast<graph::LayerNormOp>(op)) {
    std::vector<TileSplit> s = allWhole(op);
    if (r.dim < static_cast<int64_t>(ln.getAxis()))
      s[0] = along(r.dim, r);
    return s;
  }
  if (isa<graph::BatchNormOp, graph::InstanceNormOp>(op)) {
    // Per-channel parameters follow a channel split; instance norm needs
    // whole spatial planes.
    std::vector<TileSplit> s = allWhole(op);
    const bool instance = isa<graph::InstanceNormOp>(op);
    if (instance && r.dim >= 2)
      return s;
    s[0] = along(r.dim, r);
    if (r.dim == 1)
      for (size_t i = 1; i < s.size(); ++i)
        s[i] = along(0, r);
    return s;
  }
  if (auto t = dyn_cast<graph::TransposeOp>(op))
    return std::vector<TileSplit>{along(t.getPerm()[r.dim], r)};
  return std::nullopt;
}

} // namespace loom::spatial::detail
