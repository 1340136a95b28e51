//===- Passes.h - sched dialect passes --------------------------*- C++ -*-===//
#ifndef LOOM_DIALECT_SCHED_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_SCHED_TRANSFORMS_PASSES_H

#include "loom/Dialect/Sched/IR/Sched.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::sched {

#define GEN_PASS_DECL
#include "loom/Dialect/Sched/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/Sched/Transforms/Passes.h.inc"

} // namespace loom::sched

#endif // LOOM_DIALECT_SCHED_TRANSFORMS_PASSES_H
