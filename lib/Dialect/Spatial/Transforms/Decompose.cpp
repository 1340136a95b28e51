//===- Decompose.cpp - A kernel's work split over its tiles ---------------===//
//
// The backward walk over a kernel's body and the choice among its result's
// dimensions; the per-family rules are in DecomposeContraction.cpp,
// DecomposeVector.cpp and DecomposeDataMovement.cpp. See Decompose.h.
//
//===----------------------------------------------------------------------===//
#include "loom/Dialect/Spatial/Transforms/Decompose.h"
#include "DecomposeRules.h"

#include "loom/Dialect/Graph/IR/Graph.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>

namespace loom::spatial {

using namespace mlir;

namespace detail {

std::vector<int64_t> shapeOfValue(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

std::vector<TileSplit> allWhole(Operation *op) {
  return std::vector<TileSplit>(op->getNumOperands(), TileSplit::whole());
}

} // namespace detail

TileSplit mergeSplits(const TileSplit &a, const TileSplit &b) {
  if (!a.needed())
    return b;
  if (!b.needed())
    return a;
  if (a.dim >= 0 && a.dim == b.dim && a.block == b.block)
    return TileSplit::along(a.dim, a.block, std::max(a.haloLo, b.haloLo),
                            std::max(a.haloHi, b.haloHi));
  return TileSplit::whole();
}

std::vector<TileSplit> operandSplits(Operation *op,
                                     const std::vector<TileSplit> &results) {
  // The rules take one result split; ops with several needed results that
  // disagree need everything whole.
  std::optional<TileSplit> result;
  for (const TileSplit &r : results) {
    if (!r.needed())
      continue;
    if (result && !(*result == r))
      return detail::allWhole(op);
    result = r;
  }
  if (!result)
    return std::vector<TileSplit>(op->getNumOperands());
  if (result->dim < 0)
    return detail::allWhole(op);
  if (detail::SplitList s = detail::contractionSplits(op, *result))
    return *s;
  if (detail::SplitList s = detail::vectorSplits(op, *result))
    return *s;
  if (detail::SplitList s = detail::dataMovementSplits(op, *result))
    return *s;
  return detail::allWhole(op);
}

Placement placementFor(const TileSplit &s, const std::vector<int64_t> &shape,
                       const TileRegion &region, int64_t chip) {
  Placement p{region, -1, chip};
  if (s.dim == kReplicated) {
    p.shardDim = region.tiles() > 1 ? kReplicated : -1;
    return p;
  }
  if (s.dim < 0 || region.tiles() <= 1)
    return p;
  p.shardDim = s.dim;
  const int64_t tiles = region.tiles();
  const int64_t plainBlock = (shape[s.dim] + tiles - 1) / tiles;
  if (s.block == plainBlock && s.haloLo == 0 && s.haloHi == 0)
    return p;
  p.block = s.block;
  p.haloLo = s.haloLo;
  p.haloHi = s.haloHi;
  return p;
}

namespace {

int64_t elementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// The name of a decomposition: the anchor's family and the role of the
/// result dimension split.
std::string decompositionName(Block &body, int64_t dim) {
  Operation *anchor = nullptr;
  for (Operation &op : body.without_terminator())
    if (isa<graph::MatMulOp, graph::ConvOp, graph::MaxPoolOp,
            graph::AvgPoolOp>(op) &&
        !anchor)
      anchor = &op;
  if (!anchor && !body.without_terminator().empty())
    anchor = &body.front();
  if (!anchor || dim < 0)
    return "whole";
  std::string family = anchor->getName().stripDialect().str();
  int64_t rank = static_cast<int64_t>(
      detail::shapeOfValue(anchor->getResult(0)).size());
  if (isa<graph::MatMulOp>(anchor))
    return family + (dim == rank - 1   ? ".cols"
                     : dim == rank - 2 ? ".rows"
                                       : ".batch");
  if (isa<graph::ConvOp, graph::MaxPoolOp, graph::AvgPoolOp>(anchor)) {
    if (isa<graph::MaxPoolOp, graph::AvgPoolOp>(anchor))
      family = "pool";
    const char *roles[] = {".batch", ".out_channels", ".out_rows",
                           ".out_cols"};
    return family + (dim < 4 ? roles[dim] : ".out_dim" + std::to_string(dim));
  }
  return family + ".dim" + std::to_string(dim);
}

} // namespace

namespace {

/// Walks `body` back from its results: what every op's operands need for
/// what `need` holds of its results, merged into `need`.
void propagateBack(Block &body, llvm::DenseMap<Value, TileSplit> &need) {
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    std::vector<TileSplit> results;
    for (Value r : op.getResults())
      results.push_back(need.lookup(r));
    std::vector<TileSplit> operands = operandSplits(&op, results);
    for (auto [v, s] : llvm::zip(op.getOperands(), operands))
      need[v] = mergeSplits(need.lookup(v), s);
  }
}

} // namespace

Decomposition propagateSplits(Block &body,
                              const std::vector<int64_t> &resultDims,
                              int64_t tiles) {
  Decomposition d;
  d.resultDims = resultDims;
  llvm::DenseMap<Value, TileSplit> need;
  Operation *yield = body.getTerminator();
  TileRegion region{0, 0, 1, std::max<int64_t>(1, tiles)};
  for (auto [i, v] : llvm::enumerate(yield->getOperands())) {
    std::vector<int64_t> shape = detail::shapeOfValue(v);
    int64_t dim = resultDims[i];
    TileSplit s = dim < 0 ? TileSplit::whole()
                          : TileSplit::along(dim, (shape[dim] + tiles - 1) /
                                                      tiles);
    need[v] = mergeSplits(need.lookup(v), s);
    Placement p = placementFor(dim < 0 ? TileSplit{} : s, shape, region, 0);
    for (int64_t t = 0; t < region.tiles(); ++t)
      d.maxTileElements = std::max(d.maxTileElements,
                                   placementBox(shape, p, t).elements());
  }
  propagateBack(body, need);
  for (BlockArgument arg : body.getArguments())
    d.inputs.push_back(need.lookup(arg));
  return d;
}

/// The busiest tile's matrix-unit cycles (rule matrix.block) with the
/// results split along `dims`; 0 without a matrix unit that runs the
/// format, or without contractions.
static int64_t busiestMatrixCycles(Block &body, const TileRegion &region,
                                   const std::vector<int64_t> &dims,
                                   const MatrixTiming &timing) {
  if (!timing.tile || timing.tile->matrix.macs(timing.format) <= 0)
    return 0;
  std::vector<Placement> results;
  for (int64_t dim : dims)
    results.push_back(Placement{region, dim, 0});
  int64_t busiest = 0;
  for (int64_t t = 0; t < region.tiles(); ++t) {
    rt::TileWork work = tileWorkOf(body, results, region, t);
    int64_t cycles = 0;
    for (const rt::Contraction &c : work.contractions) {
      int64_t more = rt::matrixBlockCycles(*timing.tile, timing.format, c);
      cycles = more > std::numeric_limits<int64_t>::max() - cycles
                   ? std::numeric_limits<int64_t>::max()
                   : cycles + more;
    }
    busiest = std::max(busiest, cycles);
  }
  return busiest;
}

Decomposition decomposeKernel(Block &body, const TileRegion &region,
                              int64_t gridCols,
                              const std::vector<KernelInputInfo> &inputs,
                              int64_t constantRoom, int64_t tileRoom,
                              const MatrixTiming &timing) {
  const int64_t tiles = region.tiles();
  Operation *yield = body.getTerminator();
  const unsigned numResults = yield->getNumOperands();
  if (tiles <= 1) {
    Decomposition d;
    d.name = "single_tile";
    d.resultDims.assign(numResults, -1);
    d.inputs.assign(body.getNumArguments(), TileSplit{-1, 0, 0, 0});
    return d;
  }
  // The largest result leads; results of its shape follow its split, the
  // others keep the default shard dimension.
  unsigned lead = 0;
  for (unsigned i = 1; i < numResults; ++i)
    if (elementsOf(detail::shapeOfValue(yield->getOperand(i))) >
        elementsOf(detail::shapeOfValue(yield->getOperand(lead))))
      lead = i;
  std::vector<int64_t> leadShape =
      detail::shapeOfValue(yield->getOperand(lead));
  std::vector<std::vector<int64_t>> candidates;
  for (int64_t dim = 0; dim < static_cast<int64_t>(leadShape.size()); ++dim) {
    if (leadShape[dim] <= 1)
      continue;
    std::vector<int64_t> dims;
    for (unsigned i = 0; i < numResults; ++i) {
      std::vector<int64_t> shape = detail::shapeOfValue(yield->getOperand(i));
      dims.push_back(shape == leadShape ? dim : chooseShardDim(shape, tiles));
    }
    candidates.push_back(dims);
  }
  if (candidates.empty())
    candidates.push_back(std::vector<int64_t>(numResults, -1));
  const int64_t defaultDim = chooseShardDim(leadShape, tiles);

  std::optional<Decomposition> best;
  bool bestFits = false;
  for (const std::vector<int64_t> &dims : candidates) {
    Decomposition d = propagateSplits(body, dims, tiles);
    // Per tile: the bytes of weights, and of everything it holds.
    std::vector<int64_t> constantBytes(tiles, 0), heldBytes(tiles, 0);
    for (auto [i, s] : llvm::enumerate(d.inputs)) {
      std::vector<int64_t> shape = detail::shapeOfValue(body.getArgument(i));
      Placement p = placementFor(s, shape, region, 0);
      const KernelInputInfo info =
          i < inputs.size() ? inputs[i] : KernelInputInfo{};
      for (int64_t t = 0; t < tiles; ++t) {
        int64_t n = placementBox(shape, p, t).elements();
        heldBytes[t] += n * info.elementBytes;
        if (!info.current)
          d.inputElements += n;
        if (info.constant)
          constantBytes[t] += n * info.elementBytes;
      }
      if (info.current) {
        Placement want = p;
        want.chip = info.current->chip;
        for (const ShardFlow &f :
             reshardFlows(shape, *info.current, want, gridCols))
          if (f.from != f.to)
            d.inputElements += f.elements;
      }
    }
    for (auto [i, v] : llvm::enumerate(yield->getOperands())) {
      std::vector<int64_t> shape = detail::shapeOfValue(v);
      Type elem = cast<RankedTensorType>(v.getType()).getElementType();
      int64_t bytes = std::max<int64_t>(1, elem.getIntOrFloatBitWidth() / 8);
      Placement p{region, dims[i], 0};
      for (int64_t t = 0; t < tiles; ++t)
        heldBytes[t] += placementBox(shape, p, t).elements() * bytes;
    }
    const bool fits =
        (constantRoom <= 0 || *llvm::max_element(constantBytes) <= constantRoom) &&
        (tileRoom <= 0 || *llvm::max_element(heldBytes) <= tileRoom);
    d.maxTileMatrixCycles = busiestMatrixCycles(body, region, dims, timing);
    // Balance first (within 5 %), then the elements moved (a weight's
    // copies once: they are loaded once, but hold SRAM for good); within
    // 5 % of those too, the
    // default shard dimension, which producers and consumers share by
    // convention (a KV cache split by positions everywhere, not by
    // positions here and by head dimension there).
    auto cost = [](const Decomposition &x) {
      return static_cast<double>(x.inputElements);
    };
    bool better = !best || (fits && !bestFits);
    if (best && fits == bestFits) {
      // The matrix unit's cycles where both have them and neither moves
      // more than twice the other's elements (a split that copies a large
      // input, a KV cache, to every tile to save cycles would hold SRAM
      // for it), else elements.
      const double movedRatio =
          static_cast<double>(std::max<int64_t>(1, d.inputElements)) /
          static_cast<double>(std::max<int64_t>(1, best->inputElements));
      const bool byCycles = d.maxTileMatrixCycles > 0 &&
                            best->maxTileMatrixCycles > 0 &&
                            movedRatio <= 2.0 && movedRatio >= 0.5;
      double a = static_cast<double>(byCycles ? d.maxTileMatrixCycles
                                              : d.maxTileElements);
      double b = static_cast<double>(byCycles ? best->maxTileMatrixCycles
                                              : best->maxTileElements);
      if (a < b / 1.05) {
        better = true;
      } else if (a <= b * 1.05) {
        double ca = cost(d), cb = cost(*best);
        bool isDefault = dims[lead] == defaultDim;
        better = ca < cb / 1.05 || (ca <= cb * 1.05 && isDefault &&
                                    best->resultDims[lead] != defaultDim);
      }
    }
    if (better) {
      d.name = decompositionName(body, dims[lead]);
      best = std::move(d);
      bestFits = fits;
    }
  }
  return *best;
}

rt::TileWork tileWorkOf(Block &body, const std::vector<Placement> &results,
                        const TileRegion &region, int64_t index) {
  rt::TileWork work;
  Operation *yield = body.getTerminator();
  const int64_t tiles = region.tiles();
  llvm::DenseMap<Value, TileSplit> need;
  bool any = false;
  for (auto [i, v] : llvm::enumerate(yield->getOperands())) {
    if (i >= results.size())
      break;
    const Placement &p = results[i];
    std::vector<int64_t> shape = detail::shapeOfValue(v);
    TileSplit s;
    if (p.shardDim == kReplicated) {
      s = TileSplit::whole();
    } else if (p.shardDim < 0 || tiles <= 1) {
      // On the first tile only.
      if (index != 0)
        continue;
      s = TileSplit::whole();
    } else {
      int64_t size = shape[p.shardDim];
      s = TileSplit::along(p.shardDim,
                           p.block > 0 ? p.block : (size + tiles - 1) / tiles,
                           p.haloLo, p.haloHi);
    }
    need[v] = mergeSplits(need.lookup(v), s);
    any = true;
  }
  if (!any)
    return work;
  propagateBack(body, need);
  auto boxOn = [&](Value v, const TileSplit &s) {
    std::vector<int64_t> shape = detail::shapeOfValue(v);
    return placementBox(shape, placementFor(s, shape, region, 0), index);
  };
  for (Operation &bodyOp : body.without_terminator()) {
    Operation *op = &bodyOp;
    if (op->getNumResults() == 0)
      continue;
    TileSplit s = need.lookup(op->getResult(0));
    if (!s.needed())
      continue;
    ShardBox box = boxOn(op->getResult(0), s);
    if (box.elements() == 0)
      continue;
    StringRef name = op->getName().getStringRef();
    name.consume_front("graph.");
    std::vector<std::vector<int64_t>> operandShapes;
    for (Value v : op->getOperands())
      operandShapes.push_back(detail::shapeOfValue(v));
    std::vector<int64_t> resultShape = detail::shapeOfValue(op->getResult(0));
    rt::OpCost cost = rt::opCost(name, operandShapes, resultShape);
    switch (cost.kind) {
    case rt::OpCost::Contraction:
      if (auto conv = dyn_cast<graph::ConvOp>(op))
        work.contractions.push_back(rt::convContraction(
            operandShapes[1], conv.getGroup(), box.lo, box.hi));
      else
        work.contractions.push_back(rt::matmulContraction(
            operandShapes[0], operandShapes[1], box.lo, box.hi));
      break;
    case rt::OpCost::PerOutput:
      work.vectorOps += box.elements() * cost.ops;
      break;
    case rt::OpCost::PerInput: {
      // What this op reads of its input (not what all its readers need).
      std::vector<TileSplit> results;
      for (Value r : op->getResults())
        results.push_back(need.lookup(r));
      std::vector<TileSplit> operands = operandSplits(op, results);
      if (!operands.empty() && operands[0].needed())
        work.vectorOps +=
            boxOn(op->getOperand(0), operands[0]).elements() * cost.ops;
      break;
    }
    case rt::OpCost::DataMovement:
      break;
    }
  }
  return work;
}

} // namespace loom::spatial
