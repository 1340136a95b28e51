//===- Graph.h - The graph dialect and its ops ------------------*- C++ -*-===//
#ifndef LOOM_DIALECT_GRAPH_IR_GRAPH_H
#define LOOM_DIALECT_GRAPH_IR_GRAPH_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "loom/Dialect/Graph/IR/GraphDialect.h.inc"

#define GET_OP_CLASSES
#include "loom/Dialect/Graph/IR/GraphOps.h.inc"

namespace loom::graph {
/// Discardable attributes set by `graph-partition` (see Passes.td):
/// the chip an op (or graph.kernel) runs on,
inline constexpr const char *kChipAttr = "graph.chip";
/// on the function: chips, tensor- and pipeline-parallel degrees and the
/// partition report,
inline constexpr const char *kChipsAttr = "graph.chips";
inline constexpr const char *kTensorParallelAttr = "graph.tp";
inline constexpr const char *kPipelineParallelAttr = "graph.pp";
inline constexpr const char *kPartitionReportAttr = "graph.partition_report";
/// the system the chips are part of, when bigger (see ChipNetwork),
inline constexpr const char *kSystemChipsAttr = "graph.system_chips";
/// and on an argument or result that is one part of a model input or
/// output: array<i64: axis, index, count> (axis -1: a replica on each chip),
/// beside its `graph.name`.
inline constexpr const char *kPartAttr = "graph.part";
/// On a function argument: it stands for an activation every chip already
/// holds whole (a layer's input in a body-only graph), so graph-partition
/// does not treat splitting it as free the way it treats a model input the
/// host scatters.
inline constexpr const char *kWholeAttr = "graph.whole";

/// The chip `graph-partition` put an op on (0 when not partitioned).
inline int64_t chipOf(mlir::Operation *op) {
  if (auto a = op->getAttrOfType<mlir::IntegerAttr>(kChipAttr))
    return a.getInt();
  return 0;
}
} // namespace loom::graph

#endif // LOOM_DIALECT_GRAPH_IR_GRAPH_H
