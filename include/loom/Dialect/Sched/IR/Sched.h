//===- Sched.h - The sched dialect and its ops ------------------*- C++ -*-===//
#ifndef LOOM_DIALECT_SCHED_IR_SCHED_H
#define LOOM_DIALECT_SCHED_IR_SCHED_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "loom/Dialect/Sched/IR/SchedDialect.h.inc"

#define GET_OP_CLASSES
#include "loom/Dialect/Sched/IR/SchedOps.h.inc"

#endif // LOOM_DIALECT_SCHED_IR_SCHED_H
