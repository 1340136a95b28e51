//===- ChooseLayout.cpp - Matrix-unit blocks for matmul/conv kernels ------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Target/TargetModel.h"

#include "mlir/IR/Builders.h"

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHCHOOSELAYOUT
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

namespace {
struct GraphChooseLayoutPass
    : impl::GraphChooseLayoutBase<GraphChooseLayoutPass> {
  using Base::Base;

  std::optional<TargetModel> model;
  std::string loadError;

  mlir::LogicalResult initialize(mlir::MLIRContext *) override {
    // Errors are reported in runOnOperation, at the function, so that they
    // reach the diagnostic handler with a location.
    model.reset();
    loadError.clear();
    if (!target.empty())
      model = TargetModel::load(target, loadError);
    return mlir::success();
  }

  void runOnOperation() override {
    if (!model) {
      if (target.empty())
        getOperation().emitError()
            << "graph-choose-layout: no target given; use target=NAME|FILE";
      else
        getOperation().emitError()
            << "graph-choose-layout: cannot load target '" << target
            << "': " << loadError;
      return signalPassFailure();
    }
    const rt::MatrixUnitDesc &unit = model->desc().chip.tile.matrix;
    mlir::OpBuilder b(&getContext());
    getOperation().walk([&](KernelOp kernel) {
      loom::KernelKind kind = kernel.getKind();
      if (kind != loom::KernelKind::MatMul && kind != loom::KernelKind::Conv)
        return;
      if (model->matrixSupports(kernel.getPrecision()))
        kernel.setBlockAttr(
            b.getDenseI64ArrayAttr({unit.blockM, unit.blockN, unit.blockK}));
      else
        kernel.removeBlockAttr();
    });
  }
};
} // namespace
} // namespace loom::graph
