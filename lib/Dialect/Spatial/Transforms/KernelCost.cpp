//===- KernelCost.cpp - Cost-model descriptions of fused kernels ----------===//
#include "loom/Dialect/Spatial/Transforms/KernelCost.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <functional>
#include "mlir/IR/Location.h"

using namespace mlir;

namespace loom::spatial {

namespace {
int64_t numElements(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.hasStaticShape() ? t.getNumElements() : 0;
}

/// The largest element count among `types`.
int64_t maxElements(TypeRange types) {
  int64_t n = 0;
  for (Type t : types)
    n = std::max(n, numElements(t));
  return n;
}

/// Ops of the body that do work (not constants, not the terminator, not
/// a matmul operand's transpose).
int64_t countWorkOps(Block &block) {
  int64_t n = 0;
  for (Operation &op : block.without_terminator())
    if (!isa<graph::ConstantOp>(op) && !graph::isMatmulOperandTranspose(&op))
      ++n;
  return n;
}

KernelDesc describeMatmul(graph::MatMulOp mm, NumericFormat format) {
  auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
  auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
  int64_t k = lhs.getShape().back();
  int64_t m = lhs.getRank() >= 2 ? lhs.getShape()[lhs.getRank() - 2] : 1;
  int64_t n = rhs.getRank() >= 2 ? rhs.getShape().back() : 1;
  int64_t batch = std::max<int64_t>(1, numElements(mm.getType()) /
                                           std::max<int64_t>(1, m * n));
  return KernelDesc::matmul(m, n, k, format, batch);
}

KernelDesc describeConv(graph::ConvOp conv, NumericFormat format) {
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  auto out = cast<RankedTensorType>(conv.getType());
  // An N-d convolution costs like a 2-d one whose spatial extent is the
  // product of its spatial dimensions.
  auto spatialProduct = [](ArrayRef<int64_t> shape) {
    int64_t p = 1;
    for (int64_t d : shape.drop_front(2))
      p *= d;
    return p;
  };
  ConvShape shape;
  shape.batch = in.getShape()[0];
  shape.inChannels = in.getShape()[1];
  shape.inHeight = spatialProduct(in.getShape());
  shape.outChannels = out.getShape()[1];
  shape.outHeight = spatialProduct(out.getShape());
  shape.kernelHeight = spatialProduct(w.getShape());
  shape.groups = conv.getGroup();
  return KernelDesc::conv(shape, format);
}
} // namespace

std::optional<KernelDesc> describeKernel(KernelKind kind, NumericFormat format,
                                         mlir::Region &body, std::string &error,
                                         std::optional<NumericFormat> storage) {
  Block &block = body.front();
  TypeRange inputs = block.getArgumentTypes();
  TypeRange outputs = block.getTerminator()->getOperandTypes();
  int64_t outElements = maxElements(outputs);
  int64_t workOps = countWorkOps(block);

  switch (kind) {
  case KernelKind::MatMul:
  case KernelKind::Conv:
    for (Operation &op : block.without_terminator()) {
      std::optional<KernelDesc> desc;
      if (auto mm = dyn_cast<graph::MatMulOp>(op))
        desc = describeMatmul(mm, format);
      else if (auto conv = dyn_cast<graph::ConvOp>(op))
        desc = describeConv(conv, format);
      if (desc) {
        desc->epilogueOpsPerOutput = std::max<int64_t>(0, workOps - 1);
        return desc;
      }
    }
    // No anchor op (an einsum, say): cost it as vector work.
    return KernelDesc::elementwise(outElements, inputs.size(), format,
                                   std::max<int64_t>(1, workOps));
  case KernelKind::Elementwise:
    return KernelDesc::elementwise(outElements,
                                   std::max<size_t>(1, inputs.size()), format,
                                   std::max<int64_t>(1, workOps));
  case KernelKind::Reduction:
    return KernelDesc::reduction(maxElements(inputs), outElements, format);
  case KernelKind::Softmax:
    return KernelDesc::softmax(outElements, format);
  case KernelKind::Normalization:
    return KernelDesc::normalization(outElements, format);
  case KernelKind::DataMovement: {
    int64_t bytes = 0;
    for (Type t : outputs)
      bytes += numElements(t) *
               rt::bytesStoredAs(
                   elementBytes(cast<RankedTensorType>(t).getElementType()),
                   storage);
    return KernelDesc::dataMovement(bytes);
  }
  case KernelKind::Collective:
    break;
  }
  error = std::string("no kernel is of kind '") + kernelKindName(kind) + "'";
  return std::nullopt;
}

std::string onnxNodeName(Location loc) {
  std::string name;
  loc->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

int64_t elementBytes(Type elementType) {
  if (elementType.isIntOrFloat())
    return std::max<int64_t>(1, (elementType.getIntOrFloatBitWidth() + 7) / 8);
  if (elementType.isIndex())
    return 8;
  if (auto c = dyn_cast<ComplexType>(elementType))
    return 2 * elementBytes(c.getElementType());
  return 4;
}

namespace {
/// Bytes per element of a narrow precision policy's operands; 0 for fp32.
int64_t narrowBytes(NumericFormat precision) {
  if (precision == NumericFormat::F32)
    return 0;
  return static_cast<int64_t>(rt::numericFormatBytes(precision));
}

/// The bytes per element `v` needs where kernel operand `index` of
/// (`precision`, `body`) reads it: narrow if every use inside is a matrix
/// operand (rounded to the policy's format), else 0 (keep the type's).
template <typename KernelT>
int64_t narrowUse(KernelT kernel, unsigned index) {
  int64_t bytes = narrowBytes(kernel.getPrecision());
  if (!bytes)
    return 0;
  Block &body = kernel.getBody().front();
  if (index >= body.getNumArguments())
    return 0;
  // Every use a matrix operand, directly or through its transpose or a
  // reshape (a K split's partial products read B as [parts, K/parts, N]):
  // neither changes a value, so the operand is rounded all the same.
  std::function<bool(Value)> matrixOnly = [&](Value v) {
    return llvm::all_of(v.getUses(), [&](OpOperand &use) {
      Operation *op = use.getOwner();
      if (graph::isMatmulOperandTranspose(op) || isa<graph::ReshapeOp>(op))
        return matrixOnly(op->getResult(0));
      return isa<graph::MatMulOp, graph::ConvOp, graph::ConvTransposeOp>(op) &&
             use.getOperandNumber() < 2;
    });
  };
  return matrixOnly(body.getArgument(index)) ? bytes : 0;
}
} // namespace

KernelUnit kernelUnit(KernelKind kind, const KernelDesc &desc,
                      const CostModel &model, int64_t rows, int64_t cols) {
  KernelUnit u;
  bool contraction =
      (kind == KernelKind::MatMul || kind == KernelKind::Conv) &&
      (desc.kind == KernelKind::MatMul || desc.kind == KernelKind::Conv);
  if (contraction) {
    Region region;
    region.tileRows = rows;
    region.tileCols = cols;
    std::optional<CostBreakdown> cost = model.estimate(desc, region);
    if (cost && !cost->usedVectorFallback) {
      u.unit = 0;
      u.epilogue = desc.epilogueOpsPerOutput > 0;
    }
    return u;
  }
  u.unit = kind == KernelKind::DataMovement ? 2 : 1;
  return u;
}

int64_t storedElementBytes(Value weight) {
  auto type = cast<RankedTensorType>(weight.getType());
  int64_t own = elementBytes(type.getElementType());
  if (!type.getElementType().isF32() || weight.use_empty())
    return own;
  int64_t widest = 0;
  for (OpOperand &use : weight.getUses()) {
    Operation *user = use.getOwner();
    int64_t bytes = 0;
    if (auto t = dyn_cast<TransferOp>(user))
      bytes = storedElementBytes(t.getResult());
    else if (auto k = dyn_cast<KernelOp>(user))
      bytes = narrowUse(k, use.getOperandNumber());
    else if (auto k = dyn_cast<graph::KernelOp>(user))
      bytes = narrowUse(k, use.getOperandNumber());
    if (!bytes || bytes >= own)
      return own;
    widest = std::max(widest, bytes);
  }
  return widest;
}

std::optional<NumericFormat> storageFormatOf(Value v) {
  if (isa<BlockArgument>(v))
    return graph::declaredStorage(v);
  if (auto k = v.getDefiningOp<graph::KernelOp>())
    return k.getStorage();
  if (auto k = v.getDefiningOp<KernelOp>())
    return k.getStorage();
  if (auto t = v.getDefiningOp<TransferOp>())
    return storageFormatOf(t.getSource());
  return std::nullopt;
}

std::optional<NumericFormat> commonStorageFormat(ValueRange values) {
  std::optional<NumericFormat> common;
  for (auto [i, v] : llvm::enumerate(values)) {
    std::optional<NumericFormat> f = storageFormatOf(v);
    if (i == 0)
      common = f;
    else if (f != common)
      return std::nullopt;
  }
  return common;
}

int64_t storageElementBytes(Value v) {
  Type element = cast<RankedTensorType>(v.getType()).getElementType();
  return element.isF32() ? rt::bytesStoredAs(elementBytes(element),
                                             storageFormatOf(v))
                         : elementBytes(element);
}

} // namespace loom::spatial
