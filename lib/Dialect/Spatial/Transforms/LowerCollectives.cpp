//===- LowerCollectives.cpp - Collectives to chip-to-chip transfers -------===//
//
// Expands every spatial.collective into point-to-point transfers between
// chips and small kernels (slice, sum, concatenate) on each chip's first
// tile, following the algorithm graph-to-spatial chose for the topology.
// See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"
#include "loom/Dialect/Spatial/Transforms/KernelCost.h"
#include "loom/Dialect/Spatial/Transforms/Passes.h"
#include "loom/Target/ChipNetwork.h"
#include "loom/Target/CostModel.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <map>

namespace loom::spatial {
#define GEN_PASS_DEF_SPATIALLOWERCOLLECTIVES
#include "loom/Dialect/Spatial/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// [lo, hi) ranges cutting `size` into `parts` nearly equal pieces.
std::vector<std::pair<int64_t, int64_t>> cut(int64_t size, int64_t parts) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t j = 0; j < parts; ++j)
    out.push_back({size * j / parts, size * (j + 1) / parts});
  return out;
}

class Lowering {
public:
  Lowering(CollectiveOp op, const CostModel &model, const ChipNetwork &net)
      : op_(op), model_(model), net_(net), b_(op) {
    name_ = onnxNodeName(op.getLoc());
    if (name_.empty())
      name_ = "collective";
    name_ += ".";
    name_ += collectiveKindName(op.getKind());
    // The wire format: the one every input is stored in (graph-precision-
    // policy stores a narrow policy's collective inputs at bf16 or fp16).
    // Its pieces travel at it, and the sums and copies on the way are
    // stored at it too, as a bf16 all-reduce rounds each partial sum.
    wire_ = commonStorageFormat(op.getInputs());
  }

  LogicalResult run();
  std::string error;

private:
  /// A kernel on `chip`'s first tile whose body `build` makes from its
  /// arguments; returns its results.
  FailureOr<SmallVector<Value>>
  kernel(int64_t chip, KernelKind kind, ValueRange inputs, TypeRange results,
         const std::string &step,
         function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> build);
  Value send(Value v, int64_t from, int64_t to);
  FailureOr<SmallVector<Value>>
  slices(Value v, int64_t chip, int64_t axis,
         const std::vector<std::pair<int64_t, int64_t>> &ranges);
  FailureOr<Value> sum(ArrayRef<Value> parts, int64_t chip);
  FailureOr<Value> concat(ArrayRef<Value> parts, int64_t chip, int64_t axis);

  /// Ring all-reduce of `inputs[i]` (on chips[i]) in chunks along `axis`
  /// (`size` long): reduce-scatter round the ring, then all-gather.
  FailureOr<std::vector<Value>> allReduceRing(ArrayRef<int64_t> chips,
                                              ArrayRef<Value> inputs,
                                              int64_t axis, int64_t size);
  /// Hierarchical all-reduce in chunks along `axis` (`size` long) over the
  /// nodes `byNode` (node -> operand indices, as many on each):
  /// reduce-scatter inside each node, all-reduce between the chips of equal
  /// rank, all-gather inside each node.
  FailureOr<std::vector<Value>>
  allReduceHierarchical(ArrayRef<int64_t> chips, ArrayRef<Value> inputs,
                        int64_t axis, int64_t size,
                        const std::map<int64_t, std::vector<int64_t>> &byNode);
  /// Direct all-gather of `pieces[i]` (on chip group[i]): per member, every
  /// piece in group order (its own, or received).
  std::vector<std::vector<Value>> gatherDirect(ArrayRef<int64_t> group,
                                               ArrayRef<Value> pieces);
  /// Direct reduce-scatter of `whole[i]` (on group[i]) cut by `ranges`
  /// along `axis` (one range per member): member t gets range t summed.
  FailureOr<std::vector<Value>>
  reduceScatterDirect(ArrayRef<int64_t> group, ArrayRef<Value> whole,
                      int64_t axis,
                      const std::vector<std::pair<int64_t, int64_t>> &ranges);

  FailureOr<std::vector<Value>> allReduce();
  FailureOr<std::vector<Value>> allGather();

  CollectiveOp op_;
  /// Values that hold what another chip sent (received, or computed from
  /// something received): a send of one is past the first exchange.
  llvm::DenseSet<Value> exchanged_;
  std::optional<rt::NumericFormat> wire_;
  const CostModel &model_;
  const ChipNetwork &net_;
  OpBuilder b_;
  std::string name_;
  int64_t steps_ = 0;
};

FailureOr<SmallVector<Value>> Lowering::kernel(
    int64_t chip, KernelKind kind, ValueRange inputs, TypeRange results,
    const std::string &step,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> build) {
  Location loc = op_.getLoc();
  TileRegion region;
  SmallVector<int64_t> shardDims(results.size(), -1);
  auto k = KernelOp::create(
      b_, loc, results, inputs, b_.getI64IntegerAttr(0),
      b_.getStringAttr(name_ + "." + step),
      graph::KernelKindAttr::get(b_.getContext(), kind),
      graph::PrecisionAttr::get(b_.getContext(), rt::NumericFormat::F32),
      DenseI64ArrayAttr(),
      b_.getDenseI64ArrayAttr(
          {region.row, region.col, region.rows, region.cols}),
      b_.getDenseI64ArrayAttr(shardDims), b_.getI64IntegerAttr(0),
      graph::CostBoundAttr::get(b_.getContext(), CostBound::Compute),
      b_.getI64IntegerAttr(0), b_.getI64IntegerAttr(0), b_.getI64IntegerAttr(0),
      b_.getI64IntegerAttr(chip),
      wire_ ? graph::PrecisionAttr::get(b_.getContext(), *wire_)
            : graph::PrecisionAttr(),
      b_.getStringAttr("single_tile"));
  Block *body = new Block();
  k.getBody().push_back(body);
  for (Value in : inputs)
    body->addArgument(in.getType(), loc);
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  SmallVector<Value> outs = build(inner, body->getArguments());
  YieldOp::create(inner, loc, outs);
  if (llvm::any_of(inputs, [&](Value v) { return exchanged_.contains(v); }))
    for (Value r : k.getResults())
      exchanged_.insert(r);
  std::optional<KernelDesc> desc =
      describeKernel(kind, rt::NumericFormat::F32, k.getBody(), error);
  if (!desc)
    return failure();
  Region shape;
  shape.tileRows = 1;
  shape.tileCols = 1;
  std::optional<CostBreakdown> cost = model_.estimate(*desc, shape, &error);
  if (!cost)
    return failure();
  k.setCyclesAttr(b_.getI64IntegerAttr(
      static_cast<int64_t>(std::ceil(cost->totalCycles))));
  k.setBound(cost->bound);
  k.setFlopsAttr(b_.getI64IntegerAttr(
      static_cast<int64_t>(desc->matrixFlops())));
  k.setBytesAttr(
      b_.getI64IntegerAttr(desc->sramBytesRead + desc->sramBytesWritten));
  return SmallVector<Value>(k.getResults());
}

Value Lowering::send(Value v, int64_t from, int64_t to) {
  if (from == to)
    return v;
  std::vector<int64_t> route = net_.route(from, to);
  RankedTensorType t = typeOf(v);
  int64_t bytes = t.getNumElements() * storageElementBytes(v);
  auto whole = b_.getDenseI64ArrayAttr({0, 0, 1, 1});
  auto transfer = TransferOp::create(
      b_, op_.getLoc(), v.getType(), v, whole, b_.getI64IntegerAttr(-1),
      whole, b_.getI64IntegerAttr(-1), b_.getI64IntegerAttr(bytes),
      b_.getI64IntegerAttr(static_cast<int64_t>(route.size())),
      b_.getDenseI64ArrayAttr({}), b_.getI64IntegerAttr(from),
      b_.getI64IntegerAttr(to), b_.getDenseI64ArrayAttr(route),
      b_.getDenseI64ArrayAttr({}), b_.getDenseI64ArrayAttr({}));
  // The collective's first exchange (what it sends of its own inputs)
  // waits for the chips to synchronise; later steps follow it.
  if (net_.syncCycles() > 0 && !exchanged_.contains(v))
    transfer->setAttr(kCollectiveSyncAttr, b_.getUnitAttr());
  exchanged_.insert(transfer.getResult());
  return transfer.getResult();
}

FailureOr<SmallVector<Value>>
Lowering::slices(Value v, int64_t chip, int64_t axis,
                 const std::vector<std::pair<int64_t, int64_t>> &ranges) {
  if (ranges.size() == 1)
    return SmallVector<Value>{v};
  SmallVector<Type> types;
  for (auto [lo, hi] : ranges) {
    SmallVector<int64_t> shape(typeOf(v).getShape());
    shape[axis] = hi - lo;
    types.push_back(RankedTensorType::get(shape, typeOf(v).getElementType()));
  }
  return kernel(chip, KernelKind::DataMovement, {v}, types,
                "split" + std::to_string(steps_++),
                [&](OpBuilder &ob, ValueRange args) {
                  SmallVector<Value> outs;
                  for (auto [i, r] : llvm::enumerate(ranges))
                    outs.push_back(graph::SliceOp::create(
                        ob, op_.getLoc(), types[i], args[0],
                        ob.getDenseI64ArrayAttr({r.first}),
                        ob.getDenseI64ArrayAttr({r.second}),
                        ob.getDenseI64ArrayAttr({axis}),
                        ob.getDenseI64ArrayAttr({1})));
                  return outs;
                });
}

FailureOr<Value> Lowering::sum(ArrayRef<Value> parts, int64_t chip) {
  if (parts.size() == 1)
    return parts[0];
  FailureOr<SmallVector<Value>> r = kernel(
      chip, KernelKind::Elementwise, parts, {parts[0].getType()},
      "sum" + std::to_string(steps_++), [&](OpBuilder &ob, ValueRange args) {
        Value acc = args[0];
        for (Value a : args.drop_front())
          acc = graph::AddOp::create(ob, op_.getLoc(), acc.getType(), acc, a);
        return SmallVector<Value>{acc};
      });
  if (failed(r))
    return failure();
  return (*r)[0];
}

FailureOr<Value> Lowering::concat(ArrayRef<Value> parts, int64_t chip,
                                  int64_t axis) {
  if (parts.size() == 1)
    return parts[0];
  SmallVector<int64_t> shape(typeOf(parts[0]).getShape());
  shape[axis] = 0;
  for (Value p : parts)
    shape[axis] += typeOf(p).getDimSize(axis);
  Type type = RankedTensorType::get(shape, typeOf(parts[0]).getElementType());
  FailureOr<SmallVector<Value>> r = kernel(
      chip, KernelKind::DataMovement, parts, {type},
      "concat" + std::to_string(steps_++), [&](OpBuilder &ob, ValueRange args) {
        return SmallVector<Value>{graph::ConcatOp::create(
            ob, op_.getLoc(), type, args, ob.getI64IntegerAttr(axis))};
      });
  if (failed(r))
    return failure();
  return (*r)[0];
}

std::vector<std::vector<Value>> Lowering::gatherDirect(ArrayRef<int64_t> group,
                                                       ArrayRef<Value> pieces) {
  std::vector<std::vector<Value>> out(group.size());
  for (size_t dst = 0; dst < group.size(); ++dst)
    for (size_t src = 0; src < group.size(); ++src)
      out[dst].push_back(send(pieces[src], group[src], group[dst]));
  return out;
}

FailureOr<std::vector<Value>> Lowering::reduceScatterDirect(
    ArrayRef<int64_t> group, ArrayRef<Value> whole, int64_t axis,
    const std::vector<std::pair<int64_t, int64_t>> &ranges) {
  std::vector<SmallVector<Value>> chunks;
  for (size_t i = 0; i < group.size(); ++i) {
    FailureOr<SmallVector<Value>> c = slices(whole[i], group[i], axis, ranges);
    if (failed(c))
      return failure();
    chunks.push_back(*c);
  }
  std::vector<Value> reduced;
  for (size_t t = 0; t < ranges.size(); ++t) {
    SmallVector<Value> parts;
    for (size_t i = 0; i < group.size(); ++i)
      parts.push_back(send(chunks[i][t], group[i], group[t]));
    FailureOr<Value> s = sum(parts, group[t]);
    if (failed(s))
      return failure();
    reduced.push_back(*s);
  }
  return reduced;
}

FailureOr<std::vector<Value>>
Lowering::allReduceRing(ArrayRef<int64_t> chips, ArrayRef<Value> inputs,
                        int64_t axis, int64_t size) {
  const int64_t n = static_cast<int64_t>(chips.size());
  std::vector<Value> results(n);
  auto ranges = cut(size, n);
  std::vector<SmallVector<Value>> acc; // acc[i][j]: chunk j held at chip i
  for (int64_t i = 0; i < n; ++i) {
    FailureOr<SmallVector<Value>> c = slices(inputs[i], chips[i], axis, ranges);
    if (failed(c))
      return failure();
    acc.push_back(*c);
  }
  for (int64_t s = 0; s < n - 1; ++s) {
    std::vector<std::pair<int64_t, Value>> arriving; // (chip index, value)
    for (int64_t i = 0; i < n; ++i) {
      int64_t j = ((i - s) % n + n) % n, next = (i + 1) % n;
      arriving.push_back({next, send(acc[i][j], chips[i], chips[next])});
    }
    for (auto [next, v] : arriving) {
      int64_t j = ((next - 1 - s) % n + n) % n;
      FailureOr<Value> r = sum({acc[next][j], v}, chips[next]);
      if (failed(r))
        return failure();
      acc[next][j] = *r;
    }
  }
  // Chunk j is complete at chip j - 1; pass the complete chunks round.
  for (int64_t s = 0; s < n - 1; ++s) {
    std::vector<std::tuple<int64_t, int64_t, Value>> arriving;
    for (int64_t i = 0; i < n; ++i) {
      int64_t j = ((i + 1 - s) % n + n) % n, next = (i + 1) % n;
      arriving.push_back({next, j, send(acc[i][j], chips[i], chips[next])});
    }
    for (auto [next, j, v] : arriving)
      acc[next][j] = v;
  }
  for (int64_t i = 0; i < n; ++i) {
    FailureOr<Value> r = concat(acc[i], chips[i], axis);
    if (failed(r))
      return failure();
    results[i] = *r;
  }
  return results;
}

FailureOr<std::vector<Value>> Lowering::allReduceHierarchical(
    ArrayRef<int64_t> chips, ArrayRef<Value> inputs, int64_t axis,
    int64_t size, const std::map<int64_t, std::vector<int64_t>> &byNode) {
  const int64_t n = static_cast<int64_t>(chips.size());
  std::vector<Value> results(n);
  size_t m = byNode.begin()->second.size();
  auto ranges = cut(size, int64_t(m));
  // 1. Reduce-scatter inside each node.
  std::map<int64_t, std::vector<Value>> chunkOf; // operand index -> chunk
  for (auto &[node, members] : byNode) {
    SmallVector<int64_t> group;
    SmallVector<Value> whole;
    for (int64_t i : members) {
      group.push_back(chips[i]);
      whole.push_back(inputs[i]);
    }
    FailureOr<std::vector<Value>> red =
        reduceScatterDirect(group, whole, axis, ranges);
    if (failed(red))
      return failure();
    for (size_t t = 0; t < m; ++t)
      chunkOf[members[t]] = {(*red)[t]};
  }
  // 2. All-reduce each chunk between the chips of equal rank.
  std::map<int64_t, Value> reduced;
  for (size_t t = 0; t < m; ++t) {
    SmallVector<int64_t> group;
    SmallVector<Value> pieces;
    for (auto &[node, members] : byNode) {
      group.push_back(chips[members[t]]);
      pieces.push_back(chunkOf[members[t]][0]);
    }
    std::vector<std::vector<Value>> got = gatherDirect(group, pieces);
    size_t k = 0;
    for (auto &[node, members] : byNode) {
      FailureOr<Value> s = sum(got[k++], chips[members[t]]);
      if (failed(s))
        return failure();
      reduced[members[t]] = *s;
    }
  }
  // 3. All-gather inside each node.
  for (auto &[node, members] : byNode) {
    SmallVector<int64_t> group;
    SmallVector<Value> pieces;
    for (int64_t i : members) {
      group.push_back(chips[i]);
      pieces.push_back(reduced[i]);
    }
    std::vector<std::vector<Value>> got = gatherDirect(group, pieces);
    for (size_t t = 0; t < m; ++t) {
      FailureOr<Value> r = concat(got[t], chips[members[t]], axis);
      if (failed(r))
        return failure();
      results[members[t]] = *r;
    }
  }
  return results;
}

FailureOr<std::vector<Value>> Lowering::allReduce() {
  ArrayRef<int64_t> chips = op_.getChips();
  const int64_t n = static_cast<int64_t>(chips.size());
  RankedTensorType type = typeOf(op_.getInputs()[0]);
  // Chunks along the longest dimension.
  int64_t axis = 0;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) > type.getDimSize(axis))
      axis = d;
  int64_t size = type.getRank() ? type.getDimSize(axis) : 1;
  SmallVector<Value> inputs(op_.getInputs());
  CollectiveAlgorithm alg = op_.getAlgorithm();
  if (type.getRank() == 0 || size < n)
    alg = CollectiveAlgorithm::Direct;
  std::vector<Value> results(n);

  if (alg == CollectiveAlgorithm::Ring)
    return allReduceRing(chips, inputs, axis, size);

  if (alg == CollectiveAlgorithm::Hierarchical) {
    // Members per node, in chip order; every node must have as many.
    std::map<int64_t, std::vector<int64_t>> byNode; // node -> operand indices
    for (int64_t i = 0; i < n; ++i)
      byNode[net_.node(chips[i])].push_back(i);
    size_t m = byNode.begin()->second.size();
    bool even = byNode.size() > 1 && m > 1 && size >= int64_t(m);
    for (auto &[node, members] : byNode)
      even = even && members.size() == m;
    if (even)
      return allReduceHierarchical(chips, inputs, axis, size, byNode);
  }

  // Direct: reduce-scatter then all-gather, each in one step.
  int64_t parts = type.getRank() ? std::min<int64_t>(n, size) : 1;
  auto ranges = cut(size, parts);
  SmallVector<int64_t> owners(chips.begin(), chips.begin() + parts);
  SmallVector<int64_t> all(chips.begin(), chips.end());
  std::vector<SmallVector<Value>> chunks;
  for (int64_t i = 0; i < n; ++i) {
    FailureOr<SmallVector<Value>> c =
        type.getRank() ? slices(inputs[i], chips[i], axis, ranges)
                       : FailureOr<SmallVector<Value>>(SmallVector<Value>{inputs[i]});
    if (failed(c))
      return failure();
    chunks.push_back(*c);
  }
  std::vector<Value> reduced;
  for (int64_t t = 0; t < parts; ++t) {
    SmallVector<Value> in;
    for (int64_t i = 0; i < n; ++i)
      in.push_back(send(chunks[i][t], chips[i], owners[t]));
    FailureOr<Value> s = sum(in, owners[t]);
    if (failed(s))
      return failure();
    reduced.push_back(*s);
  }
  for (int64_t i = 0; i < n; ++i) {
    SmallVector<Value> got;
    for (int64_t t = 0; t < parts; ++t)
      got.push_back(send(reduced[t], owners[t], chips[i]));
    FailureOr<Value> r = concat(got, chips[i], axis);
    if (failed(r))
      return failure();
    results[i] = *r;
  }
  return results;
}

FailureOr<std::vector<Value>> Lowering::allGather() {
  ArrayRef<int64_t> chips = op_.getChips();
  const int64_t n = static_cast<int64_t>(chips.size());
  int64_t axis = op_.getAxis();
  SmallVector<Value> pieces(op_.getInputs());
  std::vector<std::vector<Value>> got(n);
  if (op_.getAlgorithm() == CollectiveAlgorithm::Ring) {
    for (int64_t i = 0; i < n; ++i) {
      got[i].assign(n, Value());
      got[i][i] = pieces[i];
    }
    for (int64_t s = 0; s < n - 1; ++s) {
      std::vector<std::tuple<int64_t, int64_t, Value>> arriving;
      for (int64_t i = 0; i < n; ++i) {
        int64_t j = ((i - s) % n + n) % n, next = (i + 1) % n;
        arriving.push_back({next, j, send(got[i][j], chips[i], chips[next])});
      }
      for (auto [next, j, v] : arriving)
        got[next][j] = v;
    }
  } else {
    SmallVector<int64_t> group(chips.begin(), chips.end());
    got = gatherDirect(group, pieces);
  }
  std::vector<Value> results(n);
  for (int64_t i = 0; i < n; ++i) {
    FailureOr<Value> r = concat(got[i], chips[i], axis);
    if (failed(r))
      return failure();
    results[i] = *r;
  }
  return results;
}

LogicalResult Lowering::run() {
  FailureOr<std::vector<Value>> results =
      op_.getKind() == CollectiveKind::AllReduce ? allReduce() : allGather();
  if (failed(results))
    return failure();
  for (auto [r, v] : llvm::zip(op_.getResults(), *results))
    r.replaceAllUsesWith(v);
  op_.erase();
  return success();
}

struct SpatialLowerCollectivesPass
    : impl::SpatialLowerCollectivesBase<SpatialLowerCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::vector<CollectiveOp> collectives;
    func.walk([&](CollectiveOp c) { collectives.push_back(c); });
    if (collectives.empty())
      return;
    std::string error;
    std::optional<TargetModel> t = TargetModel::load(target, error);
    if (!t) {
      func.emitError() << "spatial-lower-collectives: " << error;
      return signalPassFailure();
    }
    int64_t chips = 1;
    if (auto a = func->getAttrOfType<IntegerAttr>(kChipsAttr))
      chips = a.getInt();
    for (CollectiveOp c : collectives)
      for (int64_t chip : c.getChips())
        chips = std::max(chips, chip + 1);
    CostModel model(*t);
    ChipNetwork net(*t, chips, systemChipsOf(func), tensorParallelOf(func));
    for (CollectiveOp c : collectives) {
      Lowering lowering(c, model, net);
      if (failed(lowering.run())) {
        c.emitError() << "spatial-lower-collectives: " << lowering.error;
        return signalPassFailure();
      }
    }
    // Kernel ids follow program order.
    int64_t id = 0;
    func.walk([&](KernelOp k) {
      k.setIdAttr(OpBuilder(k).getI64IntegerAttr(id++));
    });
  }
};

} // namespace
} // namespace loom::spatial
