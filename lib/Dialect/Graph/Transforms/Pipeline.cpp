//===- Pipeline.cpp - The graph-level pass pipeline -----------------------===//
#include "loom/Dialect/Graph/Transforms/Pipeline.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void loom::graph::buildGraphPipeline(mlir::OpPassManager &pm,
                                     const GraphPipelineOptions &opts) {
  using mlir::func::FuncOp;
  pm.addNestedPass<FuncOp>(createGraphVerifyShapes());
  pm.addPass(mlir::createCanonicalizerPass());
  // Before constants fold: a dequantized weight would fold to fp32.
  pm.addNestedPass<FuncOp>(createGraphFoldQuantized());
  pm.addNestedPass<FuncOp>(createGraphFoldBatchNorm());
  // Fold weight-layout work (a Gemm's transposed weight, say) at compile
  // time, up to 16M elements per result: that is the size of a large
  // weight matrix, and the folded copy replaces the original.
  GraphFoldConstantsOptions fold;
  fold.maxElements = int64_t(1) << 24;
  pm.addNestedPass<FuncOp>(createGraphFoldConstants(fold));
  pm.addPass(mlir::createCanonicalizerPass());
  // With a target, graph-partition always runs: on one chip it only checks
  // that the weights and inputs fit in its SRAM.
  if (opts.partitioned() || !opts.target.empty()) {
    GraphPartitionOptions partition;
    partition.target = opts.target.empty() ? std::string("tiny") : std::string(opts.target);
    partition.chips = std::max<int64_t>(
        opts.chips, std::max<int64_t>(1, opts.tp) * std::max<int64_t>(1, opts.pp));
    partition.tp = opts.tp;
    partition.pp = opts.pp;
    partition.systemChips = opts.systemChips;
    partition.precision = opts.precision;
    partition.objective = opts.objective;
    pm.addNestedPass<FuncOp>(createGraphPartition(partition));
  }
  pm.addNestedPass<FuncOp>(createGraphFormKernels());
  GraphPrecisionPolicyOptions precision;
  precision.precision = opts.precision;
  pm.addNestedPass<FuncOp>(createGraphPrecisionPolicy(precision));
  if (!opts.target.empty()) {
    GraphChooseLayoutOptions layout;
    layout.target = opts.target;
    pm.addNestedPass<FuncOp>(createGraphChooseLayout(layout));
  }
}

void loom::graph::registerGraphPipeline() {
  // Registering a pipeline name twice is a fatal error; allow repeat calls.
  static bool registered = false;
  if (registered)
    return;
  registered = true;
  mlir::PassPipelineRegistration<GraphPipelineOptions>(
      "graph-pipeline",
      "The graph passes: verify shapes, canonicalize, fold batch norms and "
      "constants, form kernels, set precision and (with target=) layout",
      buildGraphPipeline);
}
