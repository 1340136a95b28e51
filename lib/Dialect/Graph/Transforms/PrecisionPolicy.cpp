//===- PrecisionPolicy.cpp - Set each kernel's precision ------------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Runtime/TargetDesc.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHPRECISIONPOLICY
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

namespace {
struct GraphPrecisionPolicyPass
    : impl::GraphPrecisionPolicyBase<GraphPrecisionPolicyPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<rt::NumericFormat> format =
        rt::kernelPrecisionFormat(precision);
    if (!format) {
      getOperation().emitError()
          << "graph-precision-policy: precision must be "
          << rt::kKernelPrecisions << ", got '" << precision << "'";
      return signalPassFailure();
    }
    mlir::func::FuncOp func = getOperation();
    if (failed(checkStorageAttrs(func)))
      return signalPassFailure();
    // Kernels in program order, so a copy's input has its storage set.
    llvm::DenseMap<mlir::Value, rt::NumericFormat> storedAs;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (std::optional<rt::NumericFormat> f =
              storageNamed(func.getArgAttr(i, kStorageAttr)))
        storedAs[func.getArgument(i)] = *f;
    func.walk([&](KernelOp kernel) {
      loom::KernelKind kind = kernel.getKind();
      // bf16, fp16, fp8 (E4M3) and int8 (symmetric, per tensor) apply to
      // the matrix unit's inputs only; it accumulates in fp32 (int32 for
      // int8, whose products are exact), and every vector kernel stays
      // fp32.
      bool matrix =
          kind == loom::KernelKind::MatMul || kind == loom::KernelKind::Conv;
      kernel.setPrecision(matrix ? *format : rt::NumericFormat::F32);
      // A quantized model's own int8 kernels (graph-fold-quantized) stay
      // int8 under every policy.
      if (matrix && hasInt8Anchor(kernel))
        kernel.setPrecision(rt::NumericFormat::I8);
      std::optional<rt::NumericFormat> storage = returnedStorage(func, kernel);
      if (!storage)
        storage = copiedStorage(kernel, storedAs);
      if (storage) {
        kernel.setStorage(*storage);
        for (mlir::Value r : kernel.getResults())
          storedAs[r] = *storage;
      }
    });
    // Under a narrow policy the activations cross chips at the policy's
    // 16-bit format (bf16; fp16 under fp16), as serving engines send them:
    // a kernel whose every result goes only to all-reduces and all-gathers
    // (a tensor-parallel layer's partial sums, the k and v gathered past
    // the key-value heads) or to kernels on other chips (the activations a
    // pipeline stage hands to the next) stores them so; the collective
    // carries, sums and copies them at it (spatial-lower-collectives), and
    // a transfer moves a stored value's bytes.
    if (std::optional<rt::NumericFormat> wireFormat =
            rt::activationWireFormat(precision)) {
      func.walk([&](KernelOp kernel) {
        if (kernel.getStorage() || kernel.getNumResults() == 0)
          return;
        for (mlir::Value r : kernel.getResults()) {
          if (!llvm::cast<mlir::RankedTensorType>(r.getType())
                   .getElementType()
                   .isF32() ||
              r.use_empty())
            return;
          for (mlir::Operation *user : r.getUsers())
            if (!llvm::isa<AllReduceOp, AllGatherOp>(user) &&
                !(llvm::isa<KernelOp>(user) && chipOf(user) != chipOf(kernel)))
              return;
        }
        kernel.setStorage(*wireFormat);
      });
    }
    // A result asked to be stored narrow whose value no kernel stores so
    // (an argument returned as it is, a kernel with other results, a value
    // gathered or reduced across chips first) would come back unrounded
    // and counted wide: refused rather than ignored.
    auto ret = llvm::cast<mlir::func::ReturnOp>(
        func.getBody().front().getTerminator());
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      std::optional<rt::NumericFormat> want =
          storageNamed(func.getResultAttr(i, kStorageAttr));
      if (!want)
        continue;
      auto have = storedAs.find(ret.getOperand(i));
      if (have != storedAs.end() && have->second == *want)
        continue;
      auto name = func.getResultAttrOfType<mlir::StringAttr>(i, "graph.name");
      mlir::Operation *def = ret.getOperand(i).getDefiningOp();
      func.emitError()
          << "graph-precision-policy: result " << i
          << (name ? " '" + name.getValue().str() + "'" : std::string())
          << " is to be stored at " << rt::numericFormatName(*want)
          << ", but its value comes from "
          << (def ? "'" + def->getName().getStringRef().str() + "'"
                  : std::string("an argument"))
          << ", which does not store it so (storage is partial: only a "
             "kernel whose every result is returned stores narrow)";
      return signalPassFailure();
    }
  }

private:
  /// True if the kernel's matmul or conv reads 8-bit integer operands.
  static bool hasInt8Anchor(KernelOp kernel) {
    for (mlir::Operation &op : kernel.getBody().front())
      if (llvm::isa<MatMulOp, ConvOp>(op))
        for (mlir::Value v : op.getOperands().take_front(2))
          if (auto t = llvm::dyn_cast<mlir::IntegerType>(
                  llvm::cast<mlir::RankedTensorType>(v.getType())
                      .getElementType());
              t && t.getWidth() == 8)
            return true;
    return false;
  }

  /// Every graph.storage of `func` names a narrow storage format.
  static mlir::LogicalResult checkStorageAttrs(mlir::func::FuncOp func) {
    auto check = [&](mlir::Attribute a, llvm::StringRef what,
                     unsigned i) -> mlir::LogicalResult {
      if (!a)
        return mlir::success();
      auto s = llvm::dyn_cast<mlir::StringAttr>(a);
      if (s && rt::narrowStorageFormat(s.getValue()))
        return mlir::success();
      return func.emitError()
             << "graph-precision-policy: " << what << " " << i << ": "
             << kStorageAttr << " must be bf16, fp16 or fp8, got " << a;
    };
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (failed(check(func.getArgAttr(i, kStorageAttr), "argument", i)))
        return mlir::failure();
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (failed(check(func.getResultAttr(i, kStorageAttr), "result", i)))
        return mlir::failure();
    return mlir::success();
  }

  /// The narrow format a `graph.storage` attribute names (checked by
  /// checkStorageAttrs), or std::nullopt for none.
  static std::optional<rt::NumericFormat> storageNamed(mlir::Attribute a) {
    auto s = llvm::dyn_cast_or_null<mlir::StringAttr>(a);
    return s ? rt::narrowStorageFormat(s.getValue()) : std::nullopt;
  }

  /// The storage format of `kernel` when every result is returned as a
  /// function result with the same `graph.storage`.
  static std::optional<rt::NumericFormat>
  returnedStorage(mlir::func::FuncOp func, KernelOp kernel) {
    std::optional<rt::NumericFormat> common;
    for (mlir::Value r : kernel.getResults()) {
      std::optional<rt::NumericFormat> mine;
      for (mlir::OpOperand &use : r.getUses()) {
        if (!llvm::isa<mlir::func::ReturnOp>(use.getOwner()))
          continue;
        std::optional<rt::NumericFormat> a = storageNamed(
            func.getResultAttr(use.getOperandNumber(), kStorageAttr));
        if (!a || (mine && *mine != *a))
          return std::nullopt;
        mine = a;
      }
      if (!mine || (common && *common != *mine) ||
          !llvm::cast<mlir::RankedTensorType>(r.getType())
               .getElementType()
               .isF32())
        return std::nullopt;
      common = mine;
    }
    return common;
  }

  /// The storage format of a kernel that only copies values all stored in
  /// one format (so its results are exact in it).
  static std::optional<rt::NumericFormat> copiedStorage(
      KernelOp kernel,
      const llvm::DenseMap<mlir::Value, rt::NumericFormat> &storedAs) {
    if (kernel.getKind() != loom::KernelKind::DataMovement)
      return std::nullopt;
    for (mlir::Operation &op : kernel.getBody().front().without_terminator())
      if (!llvm::isa<ReshapeOp, TransposeOp, ConcatOp, SliceOp, GatherOp,
                     BroadcastToOp, TileOp>(op))
        return std::nullopt;
    std::optional<rt::NumericFormat> common;
    for (mlir::Value in : kernel.getInputs()) {
      if (!llvm::cast<mlir::RankedTensorType>(in.getType())
               .getElementType()
               .isF32())
        continue; // indices, shapes
      auto it = storedAs.find(in);
      if (it == storedAs.end() || (common && *common != it->second))
        return std::nullopt;
      common = it->second;
    }
    for (mlir::Value r : kernel.getResults())
      if (!llvm::cast<mlir::RankedTensorType>(r.getType())
               .getElementType()
               .isF32())
        return std::nullopt;
    return common;
  }
};
} // namespace
} // namespace loom::graph
