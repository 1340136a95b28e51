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

#endif // LOOM_DIALECT_GRAPH_IR_GRAPH_H
