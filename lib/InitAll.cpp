//===- InitAll.cpp - Register every Loom dialect and pass -----------------===//
#include "loom/InitAll.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

void loom::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<loom::graph::GraphDialect, mlir::func::FuncDialect>();
}

void loom::registerAllPasses() {
  loom::graph::registerGraphPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
}
