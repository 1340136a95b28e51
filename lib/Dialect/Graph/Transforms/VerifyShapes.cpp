//===- VerifyShapes.cpp - Require static shapes everywhere ----------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"

#include "mlir/IR/Verifier.h"

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHVERIFYSHAPES
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

namespace {
/// Rejects a value whose type is not a statically shaped ranked tensor.
mlir::LogicalResult checkStatic(mlir::Operation *op, mlir::Value v,
                                llvm::StringRef what) {
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
  if (!t)
    return op->emitError() << what << " is not a ranked tensor: "
                           << v.getType();
  if (!t.hasStaticShape())
    return op->emitError() << what << " has a dynamic shape: " << t;
  return mlir::success();
}

struct GraphVerifyShapesPass
    : impl::GraphVerifyShapesBase<GraphVerifyShapesPass> {
  void runOnOperation() override {
    mlir::func::FuncOp func = getOperation();
    bool ok = true;
    for (mlir::BlockArgument arg : func.getArguments())
      ok &= succeeded(checkStatic(func, arg, "argument"));
    func.walk([&](mlir::Operation *op) {
      if (op == func.getOperation())
        return;
      for (auto [i, r] : llvm::enumerate(op->getResults()))
        ok &= succeeded(checkStatic(op, r, "result #" + std::to_string(i)));
      if (op->getDialect() &&
          llvm::isa<GraphDialect>(op->getDialect()))
        ok &= succeeded(mlir::verify(op, /*verifyRecursively=*/false));
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
} // namespace loom::graph
