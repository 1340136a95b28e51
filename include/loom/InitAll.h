//===- InitAll.h - Register every Loom dialect and pass ---------*- C++ -*-===//
#ifndef LOOM_INITALL_H
#define LOOM_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace loom {
/// Adds every dialect Loom uses (its own and the upstream ones it needs).
void registerAllDialects(mlir::DialectRegistry &registry);
/// Registers every Loom pass and pipeline with the global registry.
void registerAllPasses();
} // namespace loom

#endif // LOOM_INITALL_H
