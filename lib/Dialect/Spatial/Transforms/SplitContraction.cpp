//===- SplitContraction.cpp - K splits of matmul kernels ------------------===//
//
// See SplitContraction.h. The partial kernel's body is
//   a3 = reshape(A) : [M, P, K/P];  at = transpose(a3, [1, 0, 2]) : [P, M, K/P]
//   b3 = reshape(B) : [P, K/P, N];  p  = matmul(at, b3)           : [P, M, N]
// which the decomposition splits by its batch (one part per tile: A's
// column block and B's row block each), and the reduction kernel's is
//   s = reduce_sum(p, axes = [0]) : [M, N], then the epilogue on s.
//
//===----------------------------------------------------------------------===//
#include "SplitContraction.h"

#include "loom/Dialect/Graph/IR/OpClasses.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

namespace loom::spatial {

using namespace mlir;

namespace {

/// The kernel's matmul if it is the first op of the body, reads the first
/// two body arguments (2-D each), and only elementwise ops that read
/// neither argument follow it.
graph::MatMulOp splittableMatmul(graph::KernelOp kernel) {
  Block &body = kernel.getBody().front();
  if (body.getNumArguments() < 2 || body.without_terminator().empty())
    return nullptr;
  auto mm = dyn_cast<graph::MatMulOp>(body.front());
  if (!mm || mm.getLhs() != body.getArgument(0) ||
      mm.getRhs() != body.getArgument(1))
    return nullptr;
  auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
  auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
  if (lhs.getRank() != 2 || rhs.getRank() != 2)
    return nullptr;
  for (Operation &op : llvm::drop_begin(body.without_terminator())) {
    if (!graph::isElementwise(&op))
      return nullptr;
    for (Value v : op.getOperands())
      if (v == body.getArgument(0) || v == body.getArgument(1))
        return nullptr;
  }
  // A and B feed only the matmul.
  if (!body.getArgument(0).hasOneUse() || !body.getArgument(1).hasOneUse())
    return nullptr;
  return mm;
}

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

} // namespace

std::optional<int64_t> kSplitParts(graph::KernelOp kernel, int64_t tiles,
                                   int64_t minChunk) {
  graph::MatMulOp mm = splittableMatmul(kernel);
  if (!mm)
    return std::nullopt;
  const int64_t k = typeOf(mm.getLhs()).getShape()[1];
  for (int64_t parts = tiles; parts >= 2; --parts)
    if (k % parts == 0 && k / parts >= minChunk)
      return parts;
  return std::nullopt;
}

std::pair<graph::KernelOp, graph::KernelOp> splitK(graph::KernelOp kernel,
                                                   int64_t parts) {
  graph::MatMulOp mm = splittableMatmul(kernel);
  Block &old = kernel.getBody().front();
  auto aType = typeOf(mm.getLhs()), bType = typeOf(mm.getRhs());
  const int64_t m = aType.getShape()[0], k = aType.getShape()[1];
  const int64_t n = bType.getShape()[1], chunk = k / parts;
  Type elem = typeOf(mm.getOutput()).getElementType();
  auto tensor = [&](ArrayRef<int64_t> shape, Type e) {
    return RankedTensorType::get(shape, e);
  };
  OpBuilder b(kernel);
  Location loc = kernel.getLoc();
  MLIRContext *ctx = kernel.getContext();
  std::string name = "kernel";
  if (auto n = dyn_cast<NameLoc>(loc))
    name = n.getName().str();
  else if (auto f = dyn_cast<FusedLoc>(loc))
    for (Location l : f.getLocations())
      if (auto nl = dyn_cast<NameLoc>(l)) {
        name = nl.getName().str();
        break;
      }
  Location partialLoc =
      NameLoc::get(StringAttr::get(ctx, name + ".k_partials"), loc);

  // The partial products, one K chunk each.
  Value a = kernel.getInputs()[0], bIn = kernel.getInputs()[1];
  auto partialType = tensor({parts, m, n}, elem);
  auto partial = graph::KernelOp::create(
      b, partialLoc, TypeRange{partialType}, ValueRange{a, bIn},
      kernel.getKind(), kernel.getPrecision(), kernel.getBlockAttr(),
      graph::PrecisionAttr());
  if (auto chip = kernel->getAttr(graph::kChipAttr))
    partial->setAttr(graph::kChipAttr, chip);
  {
    Block *body = new Block();
    partial.getBody().push_back(body);
    Value pa = body->addArgument(aType, loc);
    Value pb = body->addArgument(bType, loc);
    OpBuilder ib = OpBuilder::atBlockBegin(body);
    // The body's ops are the matmul's: their locations name its ONNX node
    // (traces and reports check them against the model); only the kernel
    // is named for its part.
    Location at0 = mm.getLoc();
    Value a3 = graph::ReshapeOp::create(
        ib, at0, tensor({m, parts, chunk}, aType.getElementType()), pa);
    Value at = graph::TransposeOp::create(
        ib, at0, tensor({parts, m, chunk}, aType.getElementType()), a3,
        ArrayRef<int64_t>{1, 0, 2});
    Value b3 = graph::ReshapeOp::create(
        ib, at0, tensor({parts, chunk, n}, bType.getElementType()), pb);
    Value p = graph::MatMulOp::create(ib, at0, partialType, at, b3);
    graph::YieldOp::create(ib, at0, ValueRange{p});
  }

  // The sum of the parts and the epilogue, in the kernel's place.
  SmallVector<Value> inputs{partial.getResult(0)};
  for (Value v : llvm::drop_begin(kernel.getInputs(), 2))
    inputs.push_back(v);
  auto reduce = graph::KernelOp::create(
      b, loc, kernel.getResultTypes(), inputs, KernelKind::Reduction,
      kernel.getPrecision(), DenseI64ArrayAttr(), kernel.getStorageAttr());
  if (auto chip = kernel->getAttr(graph::kChipAttr))
    reduce->setAttr(graph::kChipAttr, chip);
  {
    Block *body = new Block();
    reduce.getBody().push_back(body);
    IRMapping map;
    Value parted = body->addArgument(partialType, loc);
    for (BlockArgument arg : llvm::drop_begin(old.getArguments(), 2))
      map.map(arg, body->addArgument(arg.getType(), arg.getLoc()));
    OpBuilder ib = OpBuilder::atBlockBegin(body);
    Value sum = graph::ReduceSumOp::create(ib, mm.getLoc(), typeOf(mm.getOutput()),
                                           parted, ArrayRef<int64_t>{0}, false);
    map.map(mm.getOutput(), sum);
    for (Operation &op : llvm::drop_begin(old.without_terminator()))
      ib.clone(op, map);
    SmallVector<Value> yielded;
    for (Value v : old.getTerminator()->getOperands())
      yielded.push_back(map.lookupOrDefault(v));
    graph::YieldOp::create(ib, loc, yielded);
  }
  kernel.replaceAllUsesWith(reduce.getResults());
  kernel.erase();
  return {partial, reduce};
}

} // namespace loom::spatial
