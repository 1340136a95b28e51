//===- OpClasses.h - Families of graph ops ----------------------*- C++ -*-===//
//
// Which graph ops behave alike, for the passes that group or split them
// (graph-form-kernels, the tile decomposition).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DIALECT_GRAPH_IR_OPCLASSES_H
#define LOOM_DIALECT_GRAPH_IR_OPCLASSES_H

#include "loom/Target/KernelKind.h"

#include <optional>

namespace mlir {
class Operation;
} // namespace mlir

namespace loom::graph {

/// True for the elementwise ops (unary, and binary or ternary with numpy
/// broadcasting): each result element depends only on the operands'
/// elements at the same (broadcast) position. The ops carry ODS's
/// Graph_Elementwise trait (GraphBase.td), the one list of them.
bool isElementwise(mlir::Operation *op);

/// True for the reduce_* ops (axes and keepdims attributes): ODS's
/// Graph_Reduce, on the Graph_ReduceOp class.
bool isReduction(mlir::Operation *op);

/// The kind of kernel `op`'s graph-form-kernels kernel takes: ODS's
/// Graph_KernelKind on its .td line or class, elementwise for the
/// Graph_Elementwise ops; std::nullopt for an op that states none.
std::optional<loom::KernelKind> kernelKindOf(mlir::Operation *op);

} // namespace loom::graph

#endif // LOOM_DIALECT_GRAPH_IR_OPCLASSES_H
