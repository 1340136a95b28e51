//===- FoldConstants.cpp - Evaluate constant subgraphs --------------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Reference/Evaluator.h"

#include "mlir/IR/Builders.h"

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHFOLDCONSTANTS
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

namespace {
/// The value of a constant, or nullopt if its data is not available.
std::optional<rt::Tensor> constantValue(ConstantOp c) {
  std::string error;
  return tryTensorFromAttr(c.getValue(), error);
}

struct GraphFoldConstantsPass
    : impl::GraphFoldConstantsBase<GraphFoldConstantsPass> {
  using Base::Base;

  /// True if every result of `op` is small enough to fold.
  bool smallEnough(mlir::Operation *op) {
    for (mlir::Value r : op->getResults())
      if (llvm::cast<mlir::RankedTensorType>(r.getType()).getNumElements() >
          maxElements)
        return false;
    return true;
  }

  void runOnOperation() override {
    mlir::OpBuilder b(&getContext());
    bool failedAny = false;
    // Ops are visited in order, so a folded producer makes its users
    // foldable in the same sweep.
    getOperation().walk([&](mlir::Operation *op) {
      if (isa<ConstantOp>(op) || !isa<GraphDialect>(op->getDialect()) ||
          op->getNumResults() == 0 || !smallEnough(op))
        return;
      // Every operand a constant before any is read: reading one copies
      // its data, and a gather of the embedding table by the token ids
      // read the whole table only to find the ids were not constant (15%
      // of Llama-3-70B's compile on lpx-rack).
      if (!llvm::all_of(op->getOperands(), [](mlir::Value v) {
            return v.getDefiningOp<ConstantOp>() != nullptr;
          }))
        return;
      std::vector<rt::Tensor> operands;
      for (mlir::Value v : op->getOperands()) {
        auto c = v.getDefiningOp<ConstantOp>();
        // A constant whose data was elided from the text (a printed
        // `dense_resource` without its blob) cannot be folded; leave it.
        std::optional<rt::Tensor> t = constantValue(c);
        if (!t)
          return;
        operands.push_back(std::move(*t));
      }
      OpEvalResult r = evaluateOp(op, operands);
      if (!r.ok()) {
        op->emitError() << "constant folding failed: " << r.error;
        failedAny = true;
        return;
      }
      b.setInsertionPoint(op);
      for (auto [value, t] : llvm::zip(op->getResults(), r.results)) {
        auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
        value.replaceAllUsesWith(ConstantOp::create(
            b, op->getLoc(), type, attrFromTensor(t, type)));
      }
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
} // namespace loom::graph
