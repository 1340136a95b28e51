//===- Passes.h - graph dialect passes --------------------------*- C++ -*-===//
#ifndef LOOM_DIALECT_GRAPH_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_GRAPH_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::graph {

#define GEN_PASS_DECL
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

} // namespace loom::graph

#endif // LOOM_DIALECT_GRAPH_TRANSFORMS_PASSES_H
