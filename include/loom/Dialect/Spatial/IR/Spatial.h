//===- Spatial.h - The spatial dialect and its ops --------------*- C++ -*-===//
#ifndef LOOM_DIALECT_SPATIAL_IR_SPATIAL_H
#define LOOM_DIALECT_SPATIAL_IR_SPATIAL_H

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Spatial/IR/Placement.h"
#include "loom/Target/Collective.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#include "loom/Dialect/Spatial/IR/SpatialDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Spatial/IR/SpatialAttrs.h.inc"

#define GET_OP_CLASSES
#include "loom/Dialect/Spatial/IR/SpatialOps.h.inc"

namespace loom::spatial {

/// Names of the function-argument attributes that place a model input.
inline constexpr const char *kArgRegionAttr = "spatial.region";
inline constexpr const char *kArgShardDimAttr = "spatial.shard_dim";
/// Its layout (block, halo_lo, halo_hi), when not a plain shard.
inline constexpr const char *kArgLayoutAttr = "spatial.layout";
/// Function attributes set by graph-to-spatial: how kernels share tiles
/// ("sequential", "pipelined" or "hybrid") and the number of pipeline
/// groups; spatial-to-sched modulo-schedules the last two.
inline constexpr const char *kMappingAttr = "spatial.mapping";
inline constexpr const char *kPipelineGroupsAttr = "spatial.pipeline_groups";
/// On a function argument: the chip its placement is on (default 0).
inline constexpr const char *kArgChipAttr = "spatial.chip";
/// On the function: chips, tensor- and pipeline-parallel degrees and the
/// chip network's topology, when the program spans several chips.
inline constexpr const char *kChipsAttr = "spatial.chips";
inline constexpr const char *kTensorParallelAttr = "spatial.tp";
inline constexpr const char *kPipelineParallelAttr = "spatial.pp";
/// The system the chips are part of, when bigger: link shares follow it.
inline constexpr const char *kSystemChipsAttr = "spatial.system_chips";
/// A function's kSystemChipsAttr, or 0 (its chips are the whole system).
inline int64_t systemChipsOf(mlir::Operation *func) {
  auto a = func->getAttrOfType<mlir::IntegerAttr>(kSystemChipsAttr);
  return a ? a.getInt() : 0;
}
/// A function's kTensorParallelAttr (its chip network's traffic block for
/// adaptive routing, loom::ChipNetwork), or 0.
inline int64_t tensorParallelOf(mlir::Operation *func) {
  auto a = func->getAttrOfType<mlir::IntegerAttr>(kTensorParallelAttr);
  return a ? a.getInt() : 0;
}

/// A region attribute (row, col, rows, cols) as a TileRegion.
TileRegion regionFromAttr(llvm::ArrayRef<int64_t> region);
/// `p` with the block and halo of a layout attribute (empty: unchanged).
Placement withLayout(Placement p, llvm::ArrayRef<int64_t> layout);
/// The placement of a value in spatial form: a weight's, a kernel result's,
/// a transfer result's or a placed function argument's. std::nullopt for
/// anything else.
std::optional<Placement> placementOf(mlir::Value value);

} // namespace loom::spatial

#endif // LOOM_DIALECT_SPATIAL_IR_SPATIAL_H
