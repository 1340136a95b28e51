//===- Evaluator.h - Golden reference evaluator of the graph dialect -*- C++ -*-===//
//
// The oracle: evaluates a graph-dialect function op by op with the runtime's
// reference kernels. Every compiled result is checked against it, and the
// ONNX conformance suite checks it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_REFERENCE_EVALUATOR_H
#define LOOM_REFERENCE_EVALUATOR_H

#include "loom/Runtime/OpExecutor.h"
#include "loom/Runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <functional>
#include <optional>
#include <vector>

namespace loom {

/// The runtime element type for an MLIR element type, or nullopt.
std::optional<rt::DType> dtypeFromType(mlir::Type elementType);
/// The MLIR element type for a runtime element type.
mlir::Type typeFromDType(rt::DType dtype, mlir::MLIRContext *ctx);

/// A host tensor holding the value of a constant attribute. dense_resource
/// blobs are viewed, not copied.
rt::Tensor tensorFromAttr(mlir::ElementsAttr attr);
/// Like tensorFromAttr, but reports a problem (a blob whose data was elided
/// from the text, a size mismatch) through `error` instead of throwing; for
/// callers built without exceptions.
std::optional<rt::Tensor> tryTensorFromAttr(mlir::ElementsAttr attr,
                                            std::string &error);
/// A constant attribute holding `t` (a DenseElementsAttr; bool as i1).
mlir::ElementsAttr attrFromTensor(const rt::Tensor &t, mlir::RankedTensorType type);

/// The op's attributes as the runtime sees them (by ODS name; attributes
/// that are not op parameters, such as a constant's value, are skipped).
rt::AttrMap attrsOf(mlir::Operation *op);
/// The declared shape and element type of each result of `op`.
std::vector<rt::ResultType> resultTypesOf(mlir::Operation *op);

/// Evaluates one graph op on its operand values. On failure, returns an
/// error message (the op's location is not included).
struct OpEvalResult {
  std::vector<rt::Tensor> results;
  std::string error;
  bool ok() const { return error.empty(); }
};
OpEvalResult evaluateOp(mlir::Operation *op,
                        const std::vector<rt::Tensor> &operands);

/// Called after each op with its results; used to find the first divergence.
using EvalObserver =
    std::function<void(mlir::Operation *, const std::vector<rt::Tensor> &)>;

/// Evaluates `func` on `inputs` (one per argument, matching its type).
/// Emits an error diagnostic at the failing op and returns nullopt on
/// failure.
std::optional<std::vector<rt::Tensor>>
evaluate(mlir::func::FuncOp func, const std::vector<rt::Tensor> &inputs,
         const EvalObserver &observer = nullptr);

} // namespace loom

#endif // LOOM_REFERENCE_EVALUATOR_H
