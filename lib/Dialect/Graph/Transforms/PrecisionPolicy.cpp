//===- PrecisionPolicy.cpp - Set each kernel's precision ------------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHPRECISIONPOLICY
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

namespace {
struct GraphPrecisionPolicyPass
    : impl::GraphPrecisionPolicyBase<GraphPrecisionPolicyPass> {
  using Base::Base;

  void runOnOperation() override {
    if (precision != "fp32" && precision != "bf16" && precision != "fp16" &&
        precision != "fp8") {
      getOperation().emitError() << "graph-precision-policy: precision must "
                                    "be fp32, bf16, fp16 or fp8, got '"
                                 << precision << "'";
      return signalPassFailure();
    }
    getOperation().walk([&](KernelOp kernel) {
      llvm::StringRef kind = kernel.getKind();
      // bf16, fp16 and fp8 (E4M3) apply to the matrix unit's inputs only;
      // it accumulates in fp32, and every vector kernel stays fp32.
      bool matrix = kind == "matmul" || kind == "conv";
      kernel.setPrecision(matrix ? llvm::StringRef(precision)
                                 : llvm::StringRef("fp32"));
    });
  }
};
} // namespace
} // namespace loom::graph
