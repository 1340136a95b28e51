//===- SpatialOps.cpp - spatial dialect: verifiers ------------------------===//
#include "loom/Dialect/Spatial/IR/Spatial.h"
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Runtime/TargetDesc.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace loom::spatial;

#include "loom/Dialect/Spatial/IR/SpatialDialect.cpp.inc"

void SpatialDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/Spatial/IR/SpatialOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "loom/Dialect/Spatial/IR/SpatialAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Collective attributes: `<spelling>` of a loom/Target/Collective.h value
//===----------------------------------------------------------------------===//

namespace {
/// The collective kinds spatial.collective takes, as error messages list
/// them.
constexpr const char *kCollectiveKinds = "all_reduce or all_gather";
} // namespace

Attribute CollectiveKindAttr::parse(AsmParser &parser, Type) {
  std::optional<loom::CollectiveKind> kind =
      loom::graph::parseEnumValue<loom::CollectiveKind>(
          parser, loom::parseCollectiveKind, "collective kind",
          kCollectiveKinds);
  if (!kind)
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), *kind);
}

void CollectiveKindAttr::print(AsmPrinter &printer) const {
  printer << '<' << loom::collectiveKindName(getValue()) << '>';
}

LogicalResult
CollectiveKindAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           loom::CollectiveKind kind) {
  if (kind != loom::CollectiveKind::AllReduce &&
      kind != loom::CollectiveKind::AllGather)
    return emitError() << "collective kind must be " << kCollectiveKinds
                       << ", got '" << loom::collectiveKindName(kind) << "'";
  return success();
}

Attribute CollectiveAlgorithmAttr::parse(AsmParser &parser, Type) {
  std::optional<loom::CollectiveAlgorithm> algorithm =
      loom::graph::parseEnumValue<loom::CollectiveAlgorithm>(
          parser, loom::parseCollectiveAlgorithm, "collective algorithm",
          loom::kCollectiveAlgorithms);
  if (!algorithm)
    return {};
  return get(parser.getContext(), *algorithm);
}

void CollectiveAlgorithmAttr::print(AsmPrinter &printer) const {
  printer << '<' << loom::collectiveAlgorithmName(getValue()) << '>';
}

namespace loom::spatial {

TileRegion regionFromAttr(llvm::ArrayRef<int64_t> region) {
  return TileRegion{region[0], region[1], region[2], region[3]};
}

Placement withLayout(Placement p, llvm::ArrayRef<int64_t> layout) {
  if (layout.size() == 3) {
    p.block = layout[0];
    p.haloLo = layout[1];
    p.haloHi = layout[2];
  }
  return p;
}

std::optional<Placement> placementOf(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (!func)
      return std::nullopt;
    auto region = func.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(),
                                                           kArgRegionAttr);
    auto dim = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                  kArgShardDimAttr);
    if (!region || !dim || region.size() != 4)
      return std::nullopt;
    auto chip = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                   kArgChipAttr);
    auto layout = func.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(),
                                                           kArgLayoutAttr);
    return withLayout(Placement{regionFromAttr(region.asArrayRef()),
                                dim.getInt(), chip ? chip.getInt() : 0},
                      layout ? layout.asArrayRef() : ArrayRef<int64_t>());
  }
  Operation *def = value.getDefiningOp();
  if (auto w = dyn_cast<WeightOp>(def))
    return withLayout(Placement{regionFromAttr(w.getRegion()),
                                w.getShardDim(), w.getChip()},
                      w.getLayout());
  if (auto k = dyn_cast<KernelOp>(def))
    return Placement{regionFromAttr(k.getRegion()),
                     k.getShardDims()[cast<OpResult>(value).getResultNumber()],
                     k.getChip()};
  if (auto t = dyn_cast<TransferOp>(def))
    return withLayout(Placement{regionFromAttr(t.getToRegion()),
                                t.getToShardDim(), t.getToChip()},
                      t.getToLayout());
  if (auto c = dyn_cast<CollectiveOp>(def))
    return Placement{TileRegion{}, -1,
                     c.getChips()[cast<OpResult>(value).getResultNumber()]};
  return std::nullopt;
}

} // namespace loom::spatial

/// Checks a (row, col, rows, cols) region attribute.
static LogicalResult verifyRegion(Operation *op, StringRef name,
                                  ArrayRef<int64_t> region) {
  if (region.size() != 4)
    return op->emitOpError()
           << name << " must have 4 entries (row, col, rows, cols)";
  if (region[0] < 0 || region[1] < 0 || region[2] < 1 || region[3] < 1)
    return op->emitOpError() << name << " must have row, col >= 0 and "
                             << "rows, cols >= 1";
  return success();
}

/// Checks a layout attribute: empty, or (block, halo_lo, halo_hi) with a
/// block of at least one element on a real shard dimension.
static LogicalResult verifyLayout(Operation *op, StringRef name,
                                  ArrayRef<int64_t> layout, int64_t dim) {
  if (layout.empty())
    return success();
  if (layout.size() != 3)
    return op->emitOpError()
           << name << " must have 3 entries (block, halo_lo, halo_hi)";
  if (dim < 0)
    return op->emitOpError()
           << name << " needs a shard dimension, not " << dim;
  if (layout[0] < 0)
    return op->emitOpError() << name << " block must be non-negative";
  return success();
}

/// Checks that a shard dimension is -1, -2 (replicated) or a dimension of
/// `type`.
static LogicalResult verifyShardDim(Operation *op, int64_t dim, Type type) {
  int64_t rank = cast<RankedTensorType>(type).getRank();
  if (dim < kReplicated || dim >= rank)
    return op->emitOpError()
           << "shard dimension " << dim << " is out of range for rank " << rank;
  return success();
}

LogicalResult WeightOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError("value type ")
           << getValue().getType() << " does not match result type "
           << getType();
  if (failed(verifyRegion(*this, "region", getRegion())))
    return failure();
  if (getChip() < 0)
    return emitOpError("chip ") << getChip() << " is negative";
  if (failed(verifyLayout(*this, "layout", getLayout(), getShardDim())))
    return failure();
  return verifyShardDim(*this, getShardDim(), getType());
}

LogicalResult KernelOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments for " << getInputs().size()
           << " inputs";
  for (auto [arg, in] : llvm::zip(body.getArguments(), getInputs()))
    if (arg.getType() != in.getType())
      return emitOpError("body argument type ")
             << arg.getType() << " differs from input type " << in.getType();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yielded types differ from the kernel's result types");
  if (failed(verifyRegion(*this, "region", getRegion())))
    return failure();
  if (getShardDims().size() != getNumResults())
    return emitOpError("has ")
           << getShardDims().size() << " shard dimensions for "
           << getNumResults() << " results";
  for (auto [dim, type] : llvm::zip(getShardDims(), getResultTypes())) {
    if (failed(verifyShardDim(*this, dim, type)))
      return failure();
    if (dim == kReplicated)
      return emitOpError("a result is computed once: its shard dimension "
                         "cannot be -2 (replicated)");
  }
  if (getCycles() < 0 || getFlops() < 0 || getBytes() < 0)
    return emitOpError("cycles, flops and bytes must be non-negative");
  if (failed(loom::graph::verifyStorage(getOperation(), getStorage())))
    return failure();
  return success();
}

LogicalResult TransferOp::verify() {
  if (failed(verifyRegion(*this, "from_region", getFromRegion())) ||
      failed(verifyRegion(*this, "to_region", getToRegion())) ||
      failed(verifyShardDim(*this, getFromShardDim(), getType())) ||
      failed(verifyShardDim(*this, getToShardDim(), getType())) ||
      failed(verifyLayout(*this, "from_layout", getFromLayout(),
                          getFromShardDim())) ||
      failed(verifyLayout(*this, "to_layout", getToLayout(),
                          getToShardDim())))
    return failure();
  if (getBytes() < 0 || getHops() < 0)
    return emitOpError("bytes and hops must be non-negative");
  if (getFromChip() < 0 || getToChip() < 0)
    return emitOpError("chips must be non-negative");
  if (getFromChip() == getToChip() && !getChipLinks().empty())
    return emitOpError("a transfer within one chip uses no chip links");
  if (getFromChip() != getToChip() && getChipLinks().empty())
    return emitOpError("a transfer between chips needs its chip links");
  if (!llvm::is_sorted(getLinks()))
    return emitOpError("links must be sorted");
  return success();
}

LogicalResult CollectiveOp::verify() {
  size_t n = getInputs().size();
  if (n < 2 || getNumResults() != n || getChips().size() != n)
    return emitOpError("needs one operand, result and chip per chip (at least "
                       "2), got ")
           << n << " operands, " << getNumResults() << " results and "
           << getChips().size() << " chips";
  for (size_t i = 0; i < n; ++i) {
    if (getChips()[i] < 0)
      return emitOpError("chip ") << getChips()[i] << " is negative";
    for (size_t j = 0; j < i; ++j)
      if (getChips()[i] == getChips()[j])
        return emitOpError("chip ") << getChips()[i] << " appears twice";
  }
  if (getKind() == loom::CollectiveKind::AllGather) {
    auto first = cast<RankedTensorType>(getInputs().front().getType());
    if (getAxis() < 0 || getAxis() >= first.getRank())
      return emitOpError("axis ") << getAxis() << " is out of range";
  }
  if (getBytes() < 0)
    return emitOpError("bytes must be non-negative");
  return success();
}

#define GET_OP_CLASSES
#include "loom/Dialect/Spatial/IR/SpatialOps.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Spatial/IR/SpatialAttrs.cpp.inc"
