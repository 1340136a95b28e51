//===- Pipeline.h - The graph-level pass pipeline ---------------*- C++ -*-===//
//
// The graph passes in the order `loom compile` and `loom-opt --graph-pipeline`
// run them: verify shapes, canonicalise, fold batch norms and constants,
// form kernels, set their precision and, given a target, their layout.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DIALECT_GRAPH_TRANSFORMS_PIPELINE_H
#define LOOM_DIALECT_GRAPH_TRANSFORMS_PIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace loom::graph {

struct GraphPipelineOptions
    : public mlir::PassPipelineOptions<GraphPipelineOptions> {
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("Matrix precision policy: fp32, bf16, fp16 or fp8 "
                     "(narrow inputs, fp32 accumulation)"),
      llvm::cl::init("fp32")};
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("Target preset name or JSON file; when empty, "
                     "graph-choose-layout is not run"),
      llvm::cl::init("")};
  Option<int64_t> chips{*this, "chips",
                        llvm::cl::desc("Chips to partition over (1: none)"),
                        llvm::cl::init(1)};
  Option<int64_t> tp{*this, "tp",
                     llvm::cl::desc("Tensor-parallel degree (0: choose)"),
                     llvm::cl::init(0)};
  Option<int64_t> pp{*this, "pp",
                     llvm::cl::desc("Pipeline stages (0: choose)"),
                     llvm::cl::init(0)};
  Option<int64_t> systemChips{
      *this, "system-chips",
      llvm::cl::desc("The system the chips are the first of (0: the chips "
                     "alone); chip-link shares follow it"),
      llvm::cl::init(0)};
  Option<std::string> objective{
      *this, "objective",
      llvm::cl::desc("Partition objective: latency or throughput"),
      llvm::cl::init("latency")};

  /// True if graph-partition runs: more than one chip asked for.
  bool partitioned() const { return chips > 1 || tp > 1 || pp > 1; }
};

/// Adds to `pm` (anchored on the module): graph-verify-shapes, canonicalize,
/// graph-fold-batch-norm, graph-fold-constants, canonicalize,
/// graph-partition (for more than one chip),
/// graph-form-kernels, graph-precision-policy and, when `opts.target` is set,
/// graph-choose-layout.
void buildGraphPipeline(mlir::OpPassManager &pm,
                        const GraphPipelineOptions &opts);

/// Registers `graph-pipeline` (with options precision= and target=).
void registerGraphPipeline();

} // namespace loom::graph

#endif // LOOM_DIALECT_GRAPH_TRANSFORMS_PIPELINE_H
