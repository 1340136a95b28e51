//===- GraphOps.cpp - graph dialect: verifiers and folders ----------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/IR/OpClasses.h"
#include "loom/Runtime/TargetDesc.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace loom::graph;

#include "loom/Dialect/Graph/IR/GraphDialect.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/Graph/IR/GraphOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "loom/Dialect/Graph/IR/GraphAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Kernel attributes: `<spelling>` of a runtime enum value
//===----------------------------------------------------------------------===//

Attribute KernelKindAttr::parse(AsmParser &parser, Type) {
  std::optional<loom::rt::KernelKind> kind =
      parseEnumValue<loom::rt::KernelKind>(parser, loom::rt::parseKernelKind,
                                           "kind", loom::rt::kKernelKinds);
  if (!kind)
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), *kind);
}

void KernelKindAttr::print(AsmPrinter &printer) const {
  printer << '<' << loom::rt::kernelKindName(getValue()) << '>';
}

LogicalResult
KernelKindAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       loom::rt::KernelKind kind) {
  if (kind == loom::rt::KernelKind::Collective)
    return emitError() << "kind must be " << loom::rt::kKernelKinds
                       << ", got 'collective'";
  return success();
}

Attribute PrecisionAttr::parse(AsmParser &parser, Type) {
  std::optional<loom::rt::NumericFormat> format =
      parseEnumValue<loom::rt::NumericFormat>(
          parser, loom::rt::kernelPrecisionFormat, "precision",
          loom::rt::kKernelPrecisions);
  if (!format)
    return {};
  return get(parser.getContext(), *format);
}

void PrecisionAttr::print(AsmPrinter &printer) const {
  printer << '<' << loom::rt::numericFormatName(getValue()) << '>';
}

LogicalResult
PrecisionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      loom::rt::NumericFormat format) {
  if (!loom::rt::kernelPrecisionFormat(loom::rt::numericFormatName(format)))
    return emitError() << "precision must be " << loom::rt::kKernelPrecisions
                       << ", got '" << loom::rt::numericFormatName(format)
                       << "'";
  return success();
}

Attribute CostBoundAttr::parse(AsmParser &parser, Type) {
  std::optional<loom::rt::CostBound> bound =
      parseEnumValue<loom::rt::CostBound>(parser, loom::rt::parseCostBound,
                                          "bound", loom::rt::kCostBounds);
  if (!bound)
    return {};
  return get(parser.getContext(), *bound);
}

void CostBoundAttr::print(AsmPrinter &printer) const {
  printer << '<' << loom::rt::costBoundName(getValue()) << '>';
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(
      shape,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      [&] { os << "x"; });
  os << "]";
  return s;
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError("value type ")
           << getValue().getType() << " does not match result type "
           << getType();
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

/// Checks that the result shape is the numpy broadcast of `operands`.
static LogicalResult verifyBroadcast(Operation *op, ValueRange operands) {
  SmallVector<int64_t> shape;
  for (Value v : operands) {
    SmallVector<int64_t> next;
    if (!OpTrait::util::getBroadcastedShape(shape, tensorType(v).getShape(),
                                            next))
      return op->emitOpError("operand shapes are not broadcast-compatible: ")
             << shapeString(shape) << " and "
             << shapeString(tensorType(v).getShape());
    shape = std::move(next);
  }
  auto resultShape = tensorType(op->getResult(0)).getShape();
  if (ArrayRef<int64_t>(shape) != resultShape)
    return op->emitOpError("result shape ")
           << shapeString(resultShape) << " is not the broadcast shape "
           << shapeString(shape) << " of the operands";
  return success();
}

/// Verifies a binary op: broadcast shapes; comparisons give i1, Pow keeps
/// the base's element type.
template <typename OpT> static LogicalResult verifyBinary(OpT op) {
  if (failed(verifyBroadcast(op, {op.getLhs(), op.getRhs()})))
    return failure();
  Type resultElt = tensorType(op.getOutput()).getElementType();
  bool isCompare = isa<EqualOp, LessOp, GreaterOp, LessEqualOp,
                       GreaterEqualOp>(op.getOperation());
  if (isCompare && tensorType(op.getLhs()).getElementType() !=
                       tensorType(op.getRhs()).getElementType())
    return op.emitOpError("compared operands must share an element type");
  if (isCompare && !resultElt.isInteger(1))
    return op.emitOpError("comparison result must have element type i1, got ")
           << resultElt;
  if (!isCompare && resultElt != tensorType(op.getLhs()).getElementType())
    return op.emitOpError("result element type ")
           << resultElt << " differs from the left operand's "
           << tensorType(op.getLhs()).getElementType();
  return success();
}

#define LOOM_BINARY_VERIFIER(OP)                                               \
  LogicalResult OP::verify() { return verifyBinary(*this); }
LOOM_BINARY_VERIFIER(AddOp)
LOOM_BINARY_VERIFIER(SubOp)
LOOM_BINARY_VERIFIER(MulOp)
LOOM_BINARY_VERIFIER(DivOp)
LOOM_BINARY_VERIFIER(MinOp)
LOOM_BINARY_VERIFIER(MaxOp)
LOOM_BINARY_VERIFIER(ModOp)
LOOM_BINARY_VERIFIER(AndOp)
LOOM_BINARY_VERIFIER(OrOp)
LOOM_BINARY_VERIFIER(XorOp)
LOOM_BINARY_VERIFIER(BitShiftOp)
LOOM_BINARY_VERIFIER(PReluOp)
LOOM_BINARY_VERIFIER(PowOp)
LOOM_BINARY_VERIFIER(EqualOp)
LOOM_BINARY_VERIFIER(LessOp)
LOOM_BINARY_VERIFIER(GreaterOp)
LOOM_BINARY_VERIFIER(LessEqualOp)
LOOM_BINARY_VERIFIER(GreaterEqualOp)
#undef LOOM_BINARY_VERIFIER

/// True if `x` equals `value`, with the same sign for zeros (x + -0.0 is
/// an identity, x + +0.0 is not: it turns -0.0 into +0.0).
template <typename T> static bool sameNumber(T x, double value) {
  if constexpr (std::is_floating_point_v<T>)
    return x == static_cast<T>(value) &&
           std::signbit(x) == std::signbit(value);
  else
    return x == static_cast<T>(value);
}

/// True if every element of `values` (numbers) equals `value`.
template <typename T>
static bool allEqual(std::optional<ArrayRef<T>> values, double value) {
  return values && !values->empty() &&
         llvm::all_of(*values, [&](T x) { return sameNumber(x, value); });
}

/// True if `v` is a constant splat equal to `value`. The constant may be a
/// dense_resource blob (ONNX initializers are), which the ElementsAttr
/// interface cannot iterate as APFloat/APInt: those are read directly.
static bool isSplatOf(Value v, double value) {
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  Type elt = attr.getElementType();
  if (elt.isInteger(1))
    return false;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (!dense.isSplat())
      return false;
    if (isa<FloatType>(elt))
      return sameNumber(dense.getSplatValue<APFloat>().convertToDouble(),
                        value);
    if (isa<IntegerType>(elt))
      return dense.getSplatValue<APInt>().getSExtValue() ==
             static_cast<int64_t>(value);
    return false;
  }
  if (auto r = dyn_cast<DenseF32ResourceElementsAttr>(attr))
    return allEqual(r.tryGetAsArrayRef(), value);
  if (auto r = dyn_cast<DenseF64ResourceElementsAttr>(attr))
    return allEqual(r.tryGetAsArrayRef(), value);
  if (auto r = dyn_cast<DenseI32ResourceElementsAttr>(attr))
    return allEqual(r.tryGetAsArrayRef(), value);
  if (auto r = dyn_cast<DenseI64ResourceElementsAttr>(attr))
    return allEqual(r.tryGetAsArrayRef(), value);
  return false;
}

// x + 0 -> x and x * 1 -> x, when the constant does not broadcast x. For
// floats the identity of addition is -0.0 (x + +0.0 maps -0.0 to +0.0).
OpFoldResult AddOp::fold(FoldAdaptor) {
  bool isFloat = isa<FloatType>(getType().getElementType());
  if (getLhs().getType() == getType() &&
      isSplatOf(getRhs(), isFloat ? -0.0 : 0.0))
    return getLhs();
  return {};
}
OpFoldResult MulOp::fold(FoldAdaptor) {
  if (getLhs().getType() == getType() && isSplatOf(getRhs(), 1.0))
    return getLhs();
  return {};
}

LogicalResult SelectOp::verify() {
  if (!tensorType(getCondition()).getElementType().isInteger(1))
    return emitOpError("condition must have element type i1");
  if (tensorType(getX()).getElementType() !=
          tensorType(getY()).getElementType() ||
      tensorType(getX()).getElementType() !=
          tensorType(getOutput()).getElementType())
    return emitOpError("x, y and the result must share an element type");
  return verifyBroadcast(*this, {getCondition(), getX(), getY()});
}

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//

/// Checks `axis` lies in [0, rank).
static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

template <typename OpT> static LogicalResult verifyReduce(OpT op) {
  auto in = tensorType(op.getInput());
  ArrayRef<int64_t> axes = op.getAxes();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (failed(verifyAxis(op, axes[i], in.getRank())))
      return failure();
    if (i && axes[i] <= axes[i - 1])
      return op.emitOpError("axes must be sorted and unique");
  }
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    bool reduced = axes.empty() || llvm::is_contained(axes, d);
    if (!reduced)
      expected.push_back(in.getDimSize(d));
    else if (op.getKeepdims())
      expected.push_back(1);
  }
  auto out = tensorType(op.getOutput());
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return op.emitOpError("result shape ")
           << shapeString(out.getShape()) << " should be "
           << shapeString(expected);
  return success();
}

#define LOOM_REDUCE_VERIFIER(OP)                                               \
  LogicalResult OP::verify() { return verifyReduce(*this); }
LOOM_REDUCE_VERIFIER(ReduceSumOp)
LOOM_REDUCE_VERIFIER(ReduceMeanOp)
LOOM_REDUCE_VERIFIER(ReduceMaxOp)
LOOM_REDUCE_VERIFIER(ReduceMinOp)
LOOM_REDUCE_VERIFIER(ReduceProdOp)
LOOM_REDUCE_VERIFIER(ReduceL1Op)
LOOM_REDUCE_VERIFIER(ReduceL2Op)
LOOM_REDUCE_VERIFIER(ReduceSumSquareOp)
LOOM_REDUCE_VERIFIER(ReduceLogSumOp)
LOOM_REDUCE_VERIFIER(ReduceLogSumExpOp)
#undef LOOM_REDUCE_VERIFIER

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), tensorType(getInput()).getRank());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), tensorType(getInput()).getRank());
}
LogicalResult HardmaxOp::verify() {
  return verifyAxis(*this, getAxis(), tensorType(getInput()).getRank());
}

LogicalResult TriluOp::verify() {
  if (tensorType(getInput()).getRank() < 2)
    return emitOpError("input must have rank >= 2");
  return success();
}

LogicalResult BatchNormOp::verify() {
  auto in = tensorType(getInput());
  if (in.getRank() < 2)
    return emitOpError("input must have rank >= 2 (N, C, ...)");
  int64_t channels = in.getDimSize(1);
  for (Value v : {getScale(), getBias(), getMean(), getVariance()})
    if (tensorType(v).getShape() != ArrayRef<int64_t>{channels})
      return emitOpError("scale, bias, mean and variance must have shape [")
             << channels << "], got " << shapeString(tensorType(v).getShape());
  if (getOutput().getType() != in)
    return emitOpError("result type must equal the input type");
  return success();
}

LogicalResult LayerNormOp::verify() {
  auto in = tensorType(getInput());
  if (failed(verifyAxis(*this, getAxis(), in.getRank())))
    return failure();
  if (getOutput().getType() != in)
    return emitOpError("result type must equal the input type");
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::verify() {
  auto a = tensorType(getLhs()).getShape();
  auto b = tensorType(getRhs()).getShape();
  if (a.empty() || b.empty())
    return emitOpError("operands must have rank >= 1");
  SmallVector<int64_t> aShape(a), bShape(b);
  if (aShape.size() == 1)
    aShape.insert(aShape.begin(), 1);
  if (bShape.size() == 1)
    bShape.push_back(1);
  int64_t k = aShape.back();
  if (k != bShape[bShape.size() - 2])
    return emitOpError("contraction sizes differ: ")
           << shapeString(a) << " times " << shapeString(b);
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(
          ArrayRef<int64_t>(aShape).drop_back(2),
          ArrayRef<int64_t>(bShape).drop_back(2), batch))
    return emitOpError("batch dimensions do not broadcast: ")
           << shapeString(a) << " times " << shapeString(b);
  SmallVector<int64_t> expected = batch;
  if (a.size() > 1)
    expected.push_back(aShape[aShape.size() - 2]);
  if (b.size() > 1)
    expected.push_back(bShape.back());
  if (tensorType(getOutput()).getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << shapeString(tensorType(getOutput()).getShape())
           << " should be " << shapeString(expected);
  return success();
}

LogicalResult ConvOp::verify() {
  auto x = tensorType(getInput());
  auto w = tensorType(getWeight());
  int64_t spatial = x.getRank() - 2;
  if (spatial < 1 || w.getRank() != x.getRank())
    return emitOpError("input and weight must have the same rank >= 3");
  if (static_cast<int64_t>(getStrides().size()) != spatial ||
      static_cast<int64_t>(getDilations().size()) != spatial ||
      static_cast<int64_t>(getPads().size()) != 2 * spatial)
    return emitOpError("strides, dilations need ")
           << spatial << " values and pads " << 2 * spatial;
  int64_t group = getGroup();
  if (group < 1 || x.getDimSize(1) != w.getDimSize(1) * group ||
      w.getDimSize(0) % group != 0)
    return emitOpError("channels do not match: input has ")
           << x.getDimSize(1) << ", weight expects " << w.getDimSize(1)
           << " x group " << group;
  if (getBias() && tensorType(getBias()).getShape() !=
                       ArrayRef<int64_t>{w.getDimSize(0)})
    return emitOpError("bias must have shape [") << w.getDimSize(0) << "]";
  SmallVector<int64_t> expected = {x.getDimSize(0), w.getDimSize(0)};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t extent = x.getDimSize(i + 2) + getPads()[i] + getPads()[i + spatial];
    int64_t window = getDilations()[i] * (w.getDimSize(i + 2) - 1) + 1;
    if (getStrides()[i] < 1 || extent < window)
      return emitOpError("window does not fit the padded input on axis ")
             << i + 2;
    expected.push_back((extent - window) / getStrides()[i] + 1);
  }
  if (tensorType(getOutput()).getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << shapeString(tensorType(getOutput()).getShape())
           << " should be " << shapeString(expected);
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = tensorType(getInput());
  auto out = tensorType(getOutput());
  if (in.getElementType() != out.getElementType())
    return emitOpError("reshape cannot change the element type");
  // Element counts are only known for static shapes; dynamic ones are
  // graph-verify-shapes' to report.
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << shapeString(in.getShape()) << " (" << in.getNumElements()
           << " elements) to " << shapeString(out.getShape()) << " ("
           << out.getNumElements() << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) -> reshape(x).
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

LogicalResult TransposeOp::verify() {
  auto in = tensorType(getInput());
  ArrayRef<int64_t> perm = getPerm();
  if (static_cast<int64_t>(perm.size()) != in.getRank())
    return emitOpError("perm has ")
           << perm.size() << " entries for rank " << in.getRank();
  llvm::SmallSet<int64_t, 8> seen;
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || !seen.insert(p).second)
      return emitOpError("perm is not a permutation");
    expected.push_back(in.getDimSize(p));
  }
  if (tensorType(getOutput()).getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape should be ") << shapeString(expected);
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPerm()))
    if (static_cast<int64_t>(i) != p)
      return {};
  return getInput();
}

LogicalResult BroadcastToOp::verify() {
  SmallVector<int64_t> shape;
  auto out = tensorType(getOutput()).getShape();
  if (!OpTrait::util::getBroadcastedShape(tensorType(getInput()).getShape(),
                                          out, shape) ||
      ArrayRef<int64_t>(shape) != out)
    return emitOpError("cannot broadcast ")
           << shapeString(tensorType(getInput()).getShape()) << " to "
           << shapeString(out);
  return success();
}

/// The shape of `inputs` concatenated along `axis`, or failure (reported
/// on `op`) when they do not line up; `what` names the axis kind.
static FailureOr<SmallVector<int64_t>>
concatenatedShape(Operation *op, ValueRange inputs, int64_t axis,
                  StringRef what) {
  auto first = tensorType(inputs.front());
  if (failed(verifyAxis(op, axis, first.getRank())))
    return failure();
  SmallVector<int64_t> expected(first.getShape());
  expected[axis] = 0;
  for (Value v : inputs) {
    auto t = tensorType(v);
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return op->emitOpError("inputs must share rank and element type");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != first.getDimSize(d))
        return op->emitOpError("inputs differ on non-") << what << " axis " << d;
    expected[axis] += t.getDimSize(axis);
  }
  return expected;
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  FailureOr<SmallVector<int64_t>> expected =
      concatenatedShape(*this, getInputs(), getAxis(), "concatenated");
  if (failed(expected))
    return failure();
  if (tensorType(getOutput()).getShape() != ArrayRef<int64_t>(*expected))
    return emitOpError("result shape should be ") << shapeString(*expected);
  return success();
}

LogicalResult SliceOp::verify() {
  auto in = tensorType(getInput());
  size_t n = getAxes().size();
  if (getStarts().size() != n || getEnds().size() != n ||
      getSteps().size() != n)
    return emitOpError("starts, ends, axes and steps must have equal length");
  SmallVector<int64_t> expected(in.getShape());
  for (size_t i = 0; i < n; ++i) {
    int64_t axis = getAxes()[i], step = getSteps()[i];
    if (failed(verifyAxis(*this, axis, in.getRank())))
      return failure();
    if (step == 0)
      return emitOpError("step must be nonzero");
    // Without overflow, even for a step of INT64_MIN.
    int64_t span;
    if (step > 0 ? __builtin_sub_overflow(getEnds()[i], getStarts()[i], &span)
                 : __builtin_sub_overflow(getStarts()[i], getEnds()[i], &span))
      return emitOpError("starts and ends are too far apart");
    uint64_t mag = step > 0 ? uint64_t(step) : 0 - uint64_t(step);
    expected[axis] = span <= 0 ? 0 : int64_t((uint64_t(span) - 1) / mag + 1);
  }
  if (tensorType(getOutput()).getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape should be ") << shapeString(expected);
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

std::optional<loom::rt::NumericFormat> loom::graph::declaredStorage(Value v) {
  auto func = dyn_cast_or_null<FunctionOpInterface>(
      v.getParentRegion() ? v.getParentRegion()->getParentOp() : nullptr);
  if (!func || v.getParentRegion() != &func.getFunctionBody())
    return std::nullopt;
  StringAttr a;
  if (auto arg = dyn_cast<BlockArgument>(v))
    a = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kStorageAttr);
  for (OpOperand &use : v.getUses())
    if (!a && use.getOwner()->hasTrait<OpTrait::ReturnLike>() &&
        use.getOwner()->getParentOp() == func.getOperation())
      a = func.getResultAttrOfType<StringAttr>(use.getOperandNumber(),
                                               kStorageAttr);
  return a ? loom::rt::narrowStorageFormat(a.getValue()) : std::nullopt;
}

bool loom::graph::isMatmulOperandTranspose(Operation *op) {
  auto t = dyn_cast<TransposeOp>(op);
  if (!t || !t->hasOneUse())
    return false;
  ArrayRef<int64_t> perm = t.getPerm();
  int64_t n = static_cast<int64_t>(perm.size());
  if (n < 2 || perm[n - 2] != n - 1 || perm[n - 1] != n - 2)
    return false;
  for (int64_t i = 0; i + 2 < n; ++i)
    if (perm[i] != i)
      return false;
  OpOperand &use = *t->getUses().begin();
  return isa<MatMulOp>(use.getOwner()) && use.getOperandNumber() < 2;
}

LogicalResult KernelOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments for "
           << getInputs().size() << " inputs";
  for (auto [arg, in] : llvm::zip(body.getArguments(), getInputs()))
    if (arg.getType() != in.getType())
      return emitOpError("body argument type ")
             << arg.getType() << " differs from input type " << in.getType();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yielded types differ from the kernel's result types");
  if (failed(loom::graph::verifyStorage(getOperation(), getStorage())))
    return failure();
  return success();
}

#define GET_OP_CLASSES
#include "loom/Dialect/Graph/IR/GraphOps.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Graph/IR/GraphAttrs.cpp.inc"

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {
LogicalResult verifyCollective(Operation *op, ArrayRef<int64_t> chips) {
  if (op->getNumOperands() < 2)
    return op->emitOpError("needs one operand per chip, at least 2");
  if (op->getNumResults() != op->getNumOperands() ||
      chips.size() != op->getNumOperands())
    return op->emitOpError("needs as many results and chips as operands (")
           << op->getNumOperands() << ")";
  for (size_t i = 0; i < chips.size(); ++i) {
    if (chips[i] < 0)
      return op->emitOpError("chip ") << chips[i] << " is negative";
    for (size_t j = 0; j < i; ++j)
      if (chips[j] == chips[i])
        return op->emitOpError("chip ") << chips[i] << " appears twice";
  }
  return success();
}
} // namespace

LogicalResult AllReduceOp::verify() {
  return verifyCollective(getOperation(), getChips());
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifyCollective(getOperation(), getChips())))
    return failure();
  FailureOr<SmallVector<int64_t>> expected =
      concatenatedShape(*this, getInputs(), getAxis(), "gathered");
  if (failed(expected))
    return failure();
  Type element = tensorType(getInputs().front()).getElementType();
  for (Value r : getOutputs())
    if (tensorType(r).getShape() != ArrayRef<int64_t>(*expected) ||
        tensorType(r).getElementType() != element)
      return emitOpError("every result should be ") << shapeString(*expected);
  return success();
}

//===----------------------------------------------------------------------===//
// Op families (OpClasses.h)
//===----------------------------------------------------------------------===//

namespace loom::graph {

bool isElementwise(mlir::Operation *op) {
  return op->hasTrait<traits::Elementwise>();
}

bool isReduction(mlir::Operation *op) {
  return op->hasTrait<traits::Reduce>();
}

namespace {
template <loom::KernelKind K> bool statesKind(mlir::Operation *op) {
  return op->hasTrait<traits::KernelKindIs<K>::template Impl>();
}
} // namespace

std::optional<loom::KernelKind> kernelKindOf(mlir::Operation *op) {
  using loom::KernelKind;
  if (isElementwise(op))
    return KernelKind::Elementwise;
  if (statesKind<KernelKind::MatMul>(op))
    return KernelKind::MatMul;
  if (statesKind<KernelKind::Conv>(op))
    return KernelKind::Conv;
  if (statesKind<KernelKind::Reduction>(op))
    return KernelKind::Reduction;
  if (statesKind<KernelKind::Softmax>(op))
    return KernelKind::Softmax;
  if (statesKind<KernelKind::Normalization>(op))
    return KernelKind::Normalization;
  if (statesKind<KernelKind::DataMovement>(op))
    return KernelKind::DataMovement;
  return std::nullopt;
}

} // namespace loom::graph
