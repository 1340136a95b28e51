//===- InitAll.cpp - Register every Loom dialect and pass -----------------===//
#include "loom/InitAll.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Dialect/Graph/Transforms/Pipeline.h"
#include "loom/Dialect/Sched/IR/Sched.h"
#include "loom/Dialect/Sched/Transforms/Passes.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"
#include "loom/Dialect/Spatial/Transforms/Passes.h"
#include "loom/Target/VerifySchedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

void loom::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<loom::graph::GraphDialect, mlir::func::FuncDialect>();
  registry.insert<loom::spatial::SpatialDialect, loom::sched::SchedDialect>();
}

void loom::registerAllPasses() {
  loom::graph::registerGraphPasses();
  loom::graph::registerGraphPipeline();
  loom::spatial::registerSpatialPasses();
  loom::sched::registerSchedPasses();
  loom::registerVerifySchedulePass();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
}
