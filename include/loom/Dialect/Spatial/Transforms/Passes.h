//===- Passes.h - spatial dialect passes ------------------------*- C++ -*-===//
#ifndef LOOM_DIALECT_SPATIAL_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_SPATIAL_TRANSFORMS_PASSES_H

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::spatial {

#define GEN_PASS_DECL
#include "loom/Dialect/Spatial/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/Spatial/Transforms/Passes.h.inc"

} // namespace loom::spatial

#endif // LOOM_DIALECT_SPATIAL_TRANSFORMS_PASSES_H
