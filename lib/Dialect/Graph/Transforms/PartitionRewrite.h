//===- PartitionRewrite.h - graph-partition: the rewrite --------*- C++ -*-===//
//
// Step 3 of graph-partition: clones every op per rank with local shapes,
// inserts the collectives, slices constants and splits model inputs and
// outputs into per-chip parts, for the sharding (Sharding.h) and stages
// (PartitionCost.h) chosen.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_DIALECT_GRAPH_TRANSFORMS_PARTITIONREWRITE_H
#define LOOM_LIB_DIALECT_GRAPH_TRANSFORMS_PARTITIONREWRITE_H

#include "Sharding.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace loom::graph::partition {

/// A projection whose output is only ever read in column slices (a fused
/// QKV projection split into Q, K and V) becomes one projection per slice,
/// so each can be split by columns across chips on its own (by heads).
void unfuseSlicedProjections(func::FuncOp func);

class Rewriter {
public:
  Rewriter(func::FuncOp func, const Propagation &prop,
           const std::vector<Operation *> &ops,
           const std::vector<int64_t> &stageOf, int64_t tp)
      : func_(func), prop_(prop), tp_(tp), b_(func.getContext()) {
    for (size_t i = 0; i < ops.size(); ++i)
      stage_[ops[i]] = stageOf[i];
  }

  LogicalResult run();
  const std::string &error() const { return error_; }

private:
  int64_t chip(int64_t stage, int64_t rank) const { return stage * tp_ + rank; }
  Type localType(Value v, Shard s) const {
    RankedTensorType t = typeOf(v);
    if (s.kind != Shard::Split)
      return t;
    SmallVector<int64_t> shape(t.getShape());
    Box box = pieceBox(shape, s, 0, tp_);
    for (int64_t i = 0; i < s.span; ++i)
      shape[s.dim + i] = box.size[i];
    return RankedTensorType::get(shape, t.getElementType());
  }
  /// `v` in form `want` on every rank of `stage` (one value per rank).
  FailureOr<std::vector<Value>> get(Value v, Shard want, int64_t stage,
                                    Location loc);
  std::vector<Value> slices(const std::vector<Value> &whole, Value orig,
                            Shard want, int64_t stage, Location loc);
  /// `v`[lo, lo + size) along dims first.. on rank `rank`'s chip.
  Value sliceOnChip(Value v, ArrayRef<int64_t> lo, ArrayRef<int64_t> size,
                    int64_t first, int64_t stage, int64_t rank, Location loc);
  std::vector<Value> collective(const std::vector<Value> &parts, Value orig,
                                Shard have, int64_t stage, Location loc);
  Value argPart(BlockArgument arg, Shard s, int64_t rank);

  func::FuncOp func_;
  const Propagation &prop_;
  int64_t tp_;
  OpBuilder b_;
  std::map<Operation *, int64_t> stage_;
  /// Per original value: its per-rank values in its own form.
  std::map<void *, std::vector<Value>> local_;
  /// (value, form, stage) -> per-rank values.
  std::map<std::tuple<void *, Shard, int64_t>, std::vector<Value>> cache_;
  /// New arguments: (arg, form) -> per-rank argument.
  std::map<std::pair<void *, Shard>, std::vector<Value>> argParts_;
  std::vector<std::pair<Value, std::array<int64_t, 4>>>
      newArgs_; // arg, (orig, axis, index, count)
  std::string error_;
};

} // namespace loom::graph::partition

#endif // LOOM_LIB_DIALECT_GRAPH_TRANSFORMS_PARTITIONREWRITE_H
