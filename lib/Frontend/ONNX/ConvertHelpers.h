//===- ConvertHelpers.h - Building blocks of the ONNX converters -*- C++
//-*-===//
//
// Small builders the converters share (OpConverters.cpp,
// ComposedConverters.cpp, ValueDependentConverters.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_FRONTEND_ONNX_CONVERTHELPERS_H
#define LOOM_LIB_FRONTEND_ONNX_CONVERTHELPERS_H

#include "ImporterImpl.h"

#include "mlir/Dialect/Traits.h"

namespace loom::onnx_import {

using Values = std::vector<mlir::Value>;

inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// The NumPy broadcast of two shapes; fails naming the node if there is none.
inline llvm::SmallVector<int64_t> broadcastShape(NodeContext &nc,
                                                 llvm::ArrayRef<int64_t> a,
                                                 llvm::ArrayRef<int64_t> b) {
  llvm::SmallVector<int64_t> out;
  if (!mlir::OpTrait::util::getBroadcastedShape(a, b, out))
    nc.fail("input shapes are not broadcast-compatible");
  return out;
}

/// A binary op with broadcasting; `boolResult` for comparisons.
template <typename OpT>
mlir::Value binaryOp(NodeContext &nc, mlir::Value a, mlir::Value b,
                     bool boolResult = false) {
  auto shape = broadcastShape(nc, typeOf(a).getShape(), typeOf(b).getShape());
  mlir::Type elt = boolResult ? nc.b.getI1Type() : typeOf(a).getElementType();
  return nc.create<OpT>(nc.tensorType(shape, elt), a, b);
}

/// A reduction over `axes` (sorted, non-negative).
template <typename OpT>
mlir::Value reduceOp(NodeContext &nc, mlir::Value x,
                     llvm::ArrayRef<int64_t> axes, bool keep) {
  auto in = typeOf(x);
  llvm::SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(in.getDimSize(d));
    else if (keep)
      shape.push_back(1);
  }
  return nc.create<OpT>(nc.tensorType(shape, in.getElementType()), x,
                        nc.b.getDenseI64ArrayAttr(axes),
                        nc.b.getBoolAttr(keep));
}

/// x[start:end:step] along one axis (start and end already in range).
mlir::Value sliceAxis(NodeContext &nc, mlir::Value x, int64_t axis,
                      int64_t start, int64_t end, int64_t step);

/// A convolution of `x` by `w` (plus `bias` if set) with the node's window
/// attributes (strides, dilations, pads or auto_pad, group), as Conv reads
/// them.
mlir::Value buildConv(NodeContext &nc, mlir::Value x, mlir::Value w,
                      mlir::Value bias);

} // namespace loom::onnx_import

#endif // LOOM_LIB_FRONTEND_ONNX_CONVERTHELPERS_H
