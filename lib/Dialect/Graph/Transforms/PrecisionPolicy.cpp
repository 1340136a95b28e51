//===- PrecisionPolicy.cpp - Set each kernel's precision ------------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Runtime/TargetDesc.h"

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHPRECISIONPOLICY
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

namespace {
struct GraphPrecisionPolicyPass
    : impl::GraphPrecisionPolicyBase<GraphPrecisionPolicyPass> {
  using Base::Base;

  void runOnOperation() override {
    if (!rt::kernelPrecisionFormat(precision)) {
      getOperation().emitError()
          << "graph-precision-policy: precision must be "
          << rt::kKernelPrecisions << ", got '" << precision << "'";
      return signalPassFailure();
    }
    getOperation().walk([&](KernelOp kernel) {
      llvm::StringRef kind = kernel.getKind();
      // bf16, fp16, fp8 (E4M3) and int8 (symmetric, per tensor) apply to
      // the matrix unit's inputs only; it accumulates in fp32 (int32 for
      // int8, whose products are exact), and every vector kernel stays
      // fp32.
      bool matrix = kind == "matmul" || kind == "conv";
      kernel.setPrecision(matrix ? llvm::StringRef(precision)
                                 : llvm::StringRef("fp32"));
    });
  }
};
} // namespace
} // namespace loom::graph
