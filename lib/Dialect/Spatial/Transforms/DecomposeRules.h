//===- DecomposeRules.h - Per-family rules of Decompose.cpp -----*- C++ -*-===//
//
// Internal to the decomposition: each rule gives what an op's operands need
// for its result split as `result` (see loom::spatial::operandSplits), or
// std::nullopt when the op is not of its family.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_DIALECT_SPATIAL_TRANSFORMS_DECOMPOSERULES_H
#define LOOM_LIB_DIALECT_SPATIAL_TRANSFORMS_DECOMPOSERULES_H

#include "loom/Dialect/Spatial/Transforms/Decompose.h"

#include <optional>
#include <vector>

namespace loom::spatial::detail {

using SplitList = std::optional<std::vector<TileSplit>>;

/// matmul, conv, max_pool and avg_pool (DecomposeContraction.cpp).
SplitList contractionSplits(mlir::Operation *op, const TileSplit &result);
/// Elementwise ops with broadcasting, reductions, arg max/min, softmax and
/// its kin, the normalisations and transpose (DecomposeVector.cpp).
SplitList vectorSplits(mlir::Operation *op, const TileSplit &result);
/// gather (DecomposeDataMovement.cpp).
SplitList dataMovementSplits(mlir::Operation *op, const TileSplit &result);

/// The shape of value `v` (a ranked tensor).
std::vector<int64_t> shapeOfValue(mlir::Value v);
/// Every operand of `op` whole.
std::vector<TileSplit> allWhole(mlir::Operation *op);

} // namespace loom::spatial::detail

#endif // LOOM_LIB_DIALECT_SPATIAL_TRANSFORMS_DECOMPOSERULES_H
