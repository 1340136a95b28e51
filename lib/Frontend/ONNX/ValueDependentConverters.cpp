//===- ValueDependentConverters.cpp - Ops whose shapes follow values ------===//
//
// Converters of ONNX operators whose output shape depends on the values of
// an input (NonZero, Compress, Unique). Loom compiles static shapes, so that
// input must be a compile-time constant: the result (or the indices it
// selects) is computed here when the model is imported. With `loom eval`
// the inputs given are such constants (ImportOptions::knownInputs); a
// model that computes the input at run time is refused, naming the node.
//
//===----------------------------------------------------------------------===//
#include "ConvertHelpers.h"

#include "loom/Dialect/Graph/IR/Graph.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace mlir;
using namespace loom::graph;

namespace loom::onnx_import {
namespace {

rt::Tensor int64Tensor(const rt::Shape &shape,
                       const std::vector<int64_t> &values) {
  return rt::Tensor::fromVector(rt::DType::I64, shape, values);
}

// NonZero: the indices of the nonzero elements, one row per axis, in
// row-major order.
Values convertNonZero(NodeContext &nc) {
  rt::Tensor x = nc.requireConstant(0, "the input",
                                    "its nonzero count gives the output shape");
  int64_t rank = static_cast<int64_t>(x.shape().size());
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < x.numElements(); ++i)
    if (x.getDouble(i) != 0)
      flat.push_back(i);
  int64_t count = static_cast<int64_t>(flat.size());
  int64_t rows = std::max<int64_t>(rank, 1);
  std::vector<int64_t> out(rows * count, 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = flat[k];
    for (int64_t d = rank - 1; d >= 0; --d) {
      out[d * count + k] = rest % x.shape()[d];
      rest /= x.shape()[d];
    }
  }
  return {nc.constant(int64Tensor({rows, count}, out))};
}

// Compress: the slices along `axis` (of the flattened input without one)
// whose condition is true; a condition shorter than the axis drops the
// rest. A gather with the chosen positions as constant indices.
Values convertCompress(NodeContext &nc) {
  Value x = nc.input(0);
  rt::Tensor cond =
      nc.requireConstant(1, "condition", "it gives the output shape");
  if (cond.shape().size() != 1)
    nc.fail("condition must be 1-D");
  auto type = typeOf(x);
  int64_t axis = 0;
  if (nc.hasAttr("axis")) {
    axis = nc.axis(nc.intAttr("axis", 0), type.getRank());
  } else {
    x = nc.reshape(x, {type.getNumElements()});
    type = typeOf(x);
  }
  int64_t dim = type.getDimSize(axis);
  if (cond.numElements() > dim)
    nc.fail("condition has " + std::to_string(cond.numElements()) +
            " values for an axis of " + std::to_string(dim));
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < cond.numElements(); ++i)
    if (cond.getDouble(i) != 0)
      picked.push_back(i);
  int64_t count = static_cast<int64_t>(picked.size());
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = count;
  return {nc.create<GatherOp>(nc.tensorType(shape, type.getElementType()), x,
                              nc.constant(int64Tensor({count}, picked)),
                              nc.b.getI64IntegerAttr(axis))};
}

} // namespace

void addValueDependentConverters(llvm::StringMap<Converter> &t) {
  t["NonZero"] = convertNonZero;
  t["Compress"] = convertCompress;
}

} // namespace loom::onnx_import
