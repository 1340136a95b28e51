//===- OpConverters.cpp - One converter per ONNX operator -----------------===//
//
// Each converter turns one ONNX node into graph-dialect ops, normalising as
// it goes (see the graph dialect's description). Constant operands that
// carry shapes or axes become static attributes; anything that would need a
// dynamic shape is rejected as unsupported, naming the node.
//
// It is long (over 1,000 lines) because it holds one small converter per
// ONNX operator and their registry; the families with more logic live in
// ComposedConverters, RecurrentConverters and ValueDependentConverters.
//
//===----------------------------------------------------------------------===//
#include "ConvertHelpers.h"
#include "ImporterImpl.h"

#include "loom/Reference/Evaluator.h"
#include "loom/Runtime/TensorIO.h"

#include "mlir/Dialect/Traits.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/defs/schema.h>

#include <cmath>
#include <numeric>

using namespace mlir;
namespace loom::onnx_import {

Value sliceAxis(NodeContext &nc, Value x, int64_t axis, int64_t start,
                int64_t end, int64_t step) {
  auto t = typeOf(x);
  SmallVector<int64_t> shape(t.getShape());
  int64_t span = step > 0 ? end - start : start - end;
  int64_t mag = std::abs(step);
  shape[axis] = span <= 0 ? 0 : (span + mag - 1) / mag;
  return nc.create<graph::SliceOp>(
      nc.tensorType(shape, t.getElementType()), x,
      nc.b.getDenseI64ArrayAttr({start}), nc.b.getDenseI64ArrayAttr({end}),
      nc.b.getDenseI64ArrayAttr({axis}), nc.b.getDenseI64ArrayAttr({step}));
}

namespace {

using namespace loom::graph;

int64_t product(ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpT> Values unary(NodeContext &nc) {
  Value x = nc.input(0);
  return {nc.create<OpT>(x.getType(), x)};
}

/// Whether the node's op, at the model's opset, has attribute `name` in its
/// schema (legacy attributes come and go with the opset).
bool hasSchemaAttribute(const NodeContext &nc, const char *name) {
  const onnx::OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(nc.node.op_type(), nc.opset, "");
  return schema && schema->attributes().count(name);
}
/// Whether the node's op has the legacy `broadcast` attribute (opsets 1 to
/// 6): broadcasting then is off unless asked for, and aligns the second
/// operand at `axis` rather than at the trailing axes.
bool hasLegacyBroadcast(const NodeContext &nc) {
  return hasSchemaAttribute(nc, "broadcast");
}

/// The second operand of a legacy (opset 1 to 6) binary op, reshaped so that
/// NumPy broadcasting gives the legacy meaning: without `broadcast=1` the
/// shapes must be equal; with it, B's shape must be a run of A's dimensions
/// starting at `axis` (by default the trailing ones), or B a single value.
Value alignLegacyOperand(NodeContext &nc, Value a, Value b) {
  ArrayRef<int64_t> as = typeOf(a).getShape(), bs = typeOf(b).getShape();
  auto str = [](ArrayRef<int64_t> s) {
    return rt::shapeToString(rt::Shape(s.begin(), s.end()));
  };
  if (!nc.intAttr("broadcast", 0)) {
    if (as != bs)
      nc.fail("input shapes " + str(as) + " and " + str(bs) +
              " differ and broadcast is not set (opset " +
              std::to_string(nc.opset) + ")");
    if (nc.hasAttr("axis"))
      nc.fail("attribute 'axis' is given without broadcast=1");
    return b;
  }
  int64_t ra = as.size(), rb = bs.size();
  if (rb > ra)
    nc.fail("with broadcast=1, B " + str(bs) + " has a higher rank than A " +
            str(as));
  if (typeOf(b).getNumElements() == 1 && !nc.hasAttr("axis"))
    return nc.reshape(b, {});
  int64_t axis = nc.intAttr("axis", ra - rb);
  if (axis < 0)
    axis += ra;
  if (axis < 0 || axis > ra - rb)
    nc.fail("with broadcast=1, axis " + std::to_string(nc.intAttr("axis", 0)) +
            " does not place B " + str(bs) + " within A " + str(as));
  for (int64_t i = 0; i < rb; ++i)
    if (bs[i] != as[axis + i] && bs[i] != 1)
      nc.fail("with broadcast=1 and axis " + std::to_string(axis) + ", B " +
              str(bs) + " is not a run of A's dimensions " + str(as));
  SmallVector<int64_t> shape(axis, 1);
  shape.append(bs.begin(), bs.end());
  shape.resize(ra, 1);
  return nc.reshape(b, shape);
}

template <typename OpT>
Value legacyAwareBinary(NodeContext &nc, bool boolResult) {
  Value a = nc.input(0), b = nc.input(1);
  if (hasLegacyBroadcast(nc))
    b = alignLegacyOperand(nc, a, b);
  return binaryOp<OpT>(nc, a, b, boolResult);
}

template <typename OpT> Values binary(NodeContext &nc) {
  return {legacyAwareBinary<OpT>(nc, /*boolResult=*/false)};
}
template <typename OpT> Values compare(NodeContext &nc) {
  return {legacyAwareBinary<OpT>(nc, /*boolResult=*/true)};
}

/// Min/Max/Sum/Mean over any number of inputs.
template <typename OpT> Value variadicFold(NodeContext &nc) {
  Value acc = nc.input(0);
  for (size_t i = 1; i < nc.numInputs(); ++i)
    acc = binaryOp<OpT>(nc, acc, nc.input(i));
  return acc;
}

Values convertMean(NodeContext &nc) {
  Value sum = variadicFold<AddOp>(nc);
  Value n = nc.scalarLike(sum, static_cast<double>(nc.numInputs()));
  return {binaryOp<DivOp>(nc, sum, n)};
}

Values convertClip(NodeContext &nc) {
  Value x = nc.input(0);
  Value lo, hi;
  if (nc.opset < 11) {
    if (nc.hasAttr("min"))
      lo = nc.scalarLike(x, nc.floatAttr("min", 0));
    if (nc.hasAttr("max"))
      hi = nc.scalarLike(x, nc.floatAttr("max", 0));
  } else {
    if (nc.hasInput(1))
      lo = nc.input(1);
    if (nc.hasInput(2))
      hi = nc.input(2);
  }
  if (lo)
    x = binaryOp<MaxOp>(nc, x, lo);
  if (hi)
    x = binaryOp<MinOp>(nc, x, hi);
  return {x};
}

Values convertCast(NodeContext &nc, Type to) {
  Value x = nc.input(0);
  return {nc.create<CastOp>(nc.tensorType(typeOf(x).getShape(), to), x)};
}

Values convertWhere(NodeContext &nc) {
  Value c = nc.input(0), x = nc.input(1), y = nc.input(2);
  auto shape = broadcastShape(nc, typeOf(c).getShape(), typeOf(x).getShape());
  shape = broadcastShape(nc, shape, typeOf(y).getShape());
  return {nc.create<SelectOp>(nc.tensorType(shape, typeOf(x).getElementType()),
                              c, x, y)};
}

const Refusal &kDropoutIsTest = declareRefusal(
    "Dropout",
    "training mode (is_test=0, the default before opset 7; inference only)");
const Refusal &kDropoutTraining = declareRefusal(
    "Dropout",
    "training mode with a ratio other than 0 (a random mask; inference only)");

Values convertIdentity(NodeContext &nc) {
  Values outs{nc.input(0)};
  if (nc.node.op_type() == "Dropout") {
    // Before opset 7 is_test defaults to 0: training, a random mask.
    if (hasSchemaAttribute(nc, "is_test") && !nc.intAttr("is_test", 0))
      nc.refuse(kDropoutIsTest);
    if (nc.hasInput(2)) {
      rt::Tensor training = nc.requireConstant(2, "training_mode");
      if (training.numElements() != 1)
        nc.fail("training_mode must hold one value");
      // Training mode drops nothing when the ratio is 0 (exporters write
      // it so): the identity, and a mask of all true.
      if (training.getInt(0) != 0) {
        std::optional<rt::Tensor> ratio;
        if (nc.hasInput(1))
          ratio = nc.requireConstant(1, "ratio");
        if (!ratio || ratio->numElements() != 1 || ratio->getDouble(0) != 0)
          nc.refuse(kDropoutTraining);
      }
    }
    if (nc.hasOutput(1)) {
      rt::Tensor mask(rt::DType::Bool, rt::Shape(typeOf(outs[0]).getShape()));
      for (int64_t i = 0; i < mask.numElements(); ++i)
        mask.mutableData<bool>()[i] = true;
      outs.push_back(nc.constant(mask));
    }
  }
  return outs;
}

template <typename OpT>
Values unaryAlpha(NodeContext &nc, const char *name, double dflt) {
  Value x = nc.input(0);
  return {nc.create<OpT>(x.getType(), x,
                         nc.b.getF64FloatAttr(nc.floatAttr(name, dflt)))};
}

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//

/// Axes from the attribute (older opsets) or the second input, normalised
/// and sorted; nullopt means "no-op" (noop_with_empty_axes with no axes).
std::optional<SmallVector<int64_t>> reduceAxes(NodeContext &nc, int64_t rank,
                                               bool axesAsInput) {
  std::vector<int64_t> axes = axesAsInput && nc.hasInput(1)
                                  ? nc.constantInts(1, "axes")
                                  : nc.intsAttr("axes");
  if (axes.empty() && nc.intAttr("noop_with_empty_axes", 0))
    return std::nullopt;
  SmallVector<int64_t> out;
  for (int64_t a : axes)
    out.push_back(nc.axis(a, rank));
  llvm::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.empty())
    for (int64_t d = 0; d < rank; ++d)
      out.push_back(d);
  return out;
}

template <typename OpT> Values reduce(NodeContext &nc, int64_t inputOpset) {
  Value x = nc.input(0);
  bool keep = nc.intAttr("keepdims", 1);
  auto axes = reduceAxes(nc, typeOf(x).getRank(), nc.opset >= inputOpset);
  if (!axes)
    return {x};
  return {reduceOp<OpT>(nc, x, *axes, keep)};
}

template <typename OpT> Values argReduce(NodeContext &nc) {
  Value x = nc.input(0);
  auto in = typeOf(x);
  int64_t axis = nc.axis(nc.intAttr("axis", 0), in.getRank());
  bool keep = nc.intAttr("keepdims", 1);
  SmallVector<int64_t> shape(in.getShape());
  if (keep)
    shape[axis] = 1;
  else
    shape.erase(shape.begin() + axis);
  return {nc.create<OpT>(nc.tensorType(shape, nc.b.getI64Type()), x,
                         nc.b.getI64IntegerAttr(axis), nc.b.getBoolAttr(keep),
                         nc.b.getBoolAttr(nc.intAttr("select_last_index", 0)))};
}

/// Softmax-like ops: opset >= 13 works on one axis; older opsets flatten to
/// 2-D at `axis` and work on the second axis.
template <typename OpT> Values softmaxLike(NodeContext &nc) {
  Value x = nc.input(0);
  auto in = typeOf(x);
  int64_t rank = in.getRank();
  if (nc.opset >= 13) {
    int64_t axis = nc.axis(nc.intAttr("axis", -1), rank);
    return {nc.create<OpT>(x.getType(), x, nc.b.getI64IntegerAttr(axis))};
  }
  int64_t axis = nc.axis(nc.intAttr("axis", 1), rank);
  SmallVector<int64_t> flat = {product(in.getShape().take_front(axis)),
                               product(in.getShape().drop_front(axis))};
  Value x2 = nc.reshape(x, flat);
  Value y = nc.create<OpT>(x2.getType(), x2, nc.b.getI64IntegerAttr(1));
  return {nc.reshape(y, in.getShape())};
}

Value castTo(NodeContext &nc, Value v, Type elt);

/// BatchNormalization with training_mode=1 (opsets 14 and 15): normalised
/// with the batch's mean and (population) variance over every axis but the
/// channels, and the running statistics updated with `momentum`:
/// running = input * momentum + batch * (1 - momentum).
Values batchNormTraining(NodeContext &nc) {
  Value x = nc.input(0);
  auto in = typeOf(x);
  if (in.getRank() < 2)
    nc.fail("X must have rank 2 or more");
  SmallVector<int64_t> axes, statShape(in.getRank(), 1);
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (d != 1)
      axes.push_back(d);
  statShape[1] = in.getDimSize(1);
  Value mean = reduceOp<ReduceMeanOp>(nc, x, axes, false);
  Value centered = binaryOp<SubOp>(nc, x, nc.reshape(mean, statShape));
  Value var = reduceOp<ReduceMeanOp>(
      nc, binaryOp<MulOp>(nc, centered, centered), axes, false);
  double momentum = nc.floatAttr("momentum", 0.9);
  Values outs{nc.create<BatchNormOp>(
      x.getType(), x, nc.input(1), nc.input(2), mean, var,
      nc.b.getF64FloatAttr(nc.floatAttr("epsilon", 1e-5)))};
  for (int k = 0; k < 2; ++k) {
    Value batch = k == 0 ? mean : var, given = nc.input(3 + k);
    Value running = binaryOp<AddOp>(
        nc, binaryOp<MulOp>(nc, given, nc.scalarLike(given, momentum)),
        binaryOp<MulOp>(nc, batch, nc.scalarLike(batch, 1 - momentum)));
    outs.push_back(castTo(nc, running, typeOf(given).getElementType()));
  }
  return outs;
}

const Refusal &kBatchNormOutputs = declareRefusal(
    "BatchNormalization",
    "training-mode outputs (before opset 14, or without training_mode=1)");
const Refusal &kBatchNormIsTest = declareRefusal(
    "BatchNormalization",
    "training mode (is_test=0, the default before opset 7; inference only)");
const Refusal &kBatchNormSpatial = declareRefusal(
    "BatchNormalization", "spatial=0 (statistics per activation)");

Values convertBatchNorm(NodeContext &nc) {
  if (nc.opset >= 14 && nc.intAttr("training_mode", 0))
    return batchNormTraining(nc);
  if (nc.numOutputs() > 1 && (nc.hasOutput(1) || nc.hasOutput(2)))
    nc.refuse(kBatchNormOutputs);
  // Attributes that change the computation, read here so none is ignored:
  // before opset 7 is_test defaults to 0 (training: batch statistics);
  // spatial=0 (opsets 1 to 8) keeps statistics per activation.
  if (hasSchemaAttribute(nc, "is_test") && !nc.intAttr("is_test", 0))
    nc.refuse(kBatchNormIsTest);
  if (!nc.intAttr("spatial", 1))
    nc.refuse(kBatchNormSpatial);
  Value x = nc.input(0);
  return {nc.create<BatchNormOp>(
      x.getType(), x, nc.input(1), nc.input(2), nc.input(3), nc.input(4),
      nc.b.getF64FloatAttr(nc.floatAttr("epsilon", 1e-5)))};
}

Values convertLayerNorm(NodeContext &nc) {
  Value x = nc.input(0);
  auto in = typeOf(x);
  int64_t axis = nc.axis(nc.intAttr("axis", -1), in.getRank());
  double eps = nc.floatAttr("epsilon", 1e-5);
  Value bias = nc.hasInput(2) ? nc.input(2) : Value();
  Values outs{nc.create<LayerNormOp>(x.getType(), x, nc.input(1), bias,
                                     nc.b.getI64IntegerAttr(axis),
                                     nc.b.getF64FloatAttr(eps))};
  if (!nc.hasOutput(1) && !nc.hasOutput(2))
    return outs;
  // Mean and InvStdDev outputs, spelled out in graph ops.
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < in.getRank(); ++d)
    axes.push_back(d);
  Type statType = nc.hasOutput(1) ? nc.outputType(1).getElementType()
                                  : nc.outputType(2).getElementType();
  Value xs = x;
  if (statType != in.getElementType())
    xs = nc.create<CastOp>(nc.tensorType(in.getShape(), statType), x);
  Value mean = reduceOp<ReduceMeanOp>(nc, xs, axes, true);
  Value centered = binaryOp<SubOp>(nc, xs, mean);
  Value var = reduceOp<ReduceMeanOp>(
      nc, binaryOp<MulOp>(nc, centered, centered), axes, true);
  Value std = nc.create<SqrtOp>(
      var.getType(), binaryOp<AddOp>(nc, var, nc.scalarLike(var, eps)));
  outs.push_back(mean);
  outs.push_back(nc.create<ReciprocalOp>(std.getType(), std));
  return outs;
}

Values convertInstanceNorm(NodeContext &nc) {
  Value x = nc.input(0);
  return {nc.create<InstanceNormOp>(
      x.getType(), x, nc.input(1), nc.input(2),
      nc.b.getF64FloatAttr(nc.floatAttr("epsilon", 1e-5)))};
}

Values convertGlobalPool(NodeContext &nc, bool isMax) {
  Value x = nc.input(0);
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < typeOf(x).getRank(); ++d)
    axes.push_back(d);
  if (isMax)
    return {reduceOp<ReduceMaxOp>(nc, x, axes, true)};
  return {reduceOp<ReduceMeanOp>(nc, x, axes, true)};
}

Values convertCumSum(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t axis = nc.axis(nc.constantInts(1, "axis").at(0), typeOf(x).getRank());
  return {nc.create<CumSumOp>(x.getType(), x, nc.b.getI64IntegerAttr(axis),
                              nc.b.getBoolAttr(nc.intAttr("exclusive", 0)),
                              nc.b.getBoolAttr(nc.intAttr("reverse", 0)))};
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling
//===----------------------------------------------------------------------===//

Value matmul(NodeContext &nc, Value a, Value b) {
  auto as = typeOf(a).getShape(), bs = typeOf(b).getShape();
  if (as.empty() || bs.empty())
    nc.fail("matmul operands must have rank >= 1");
  SmallVector<int64_t> a2(as), b2(bs);
  if (a2.size() == 1)
    a2.insert(a2.begin(), 1);
  if (b2.size() == 1)
    b2.push_back(1);
  if (a2.back() != b2[b2.size() - 2])
    nc.fail("matmul contraction sizes differ (" + std::to_string(a2.back()) +
            " vs " + std::to_string(b2[b2.size() - 2]) + ")");
  auto shape = broadcastShape(nc, ArrayRef<int64_t>(a2).drop_back(2),
                              ArrayRef<int64_t>(b2).drop_back(2));
  if (as.size() > 1)
    shape.push_back(a2[a2.size() - 2]);
  if (bs.size() > 1)
    shape.push_back(b2.back());
  return nc.create<MatMulOp>(
      nc.tensorType(shape, typeOf(a).getElementType()), a, b);
}

Value transpose2d(NodeContext &nc, Value v) {
  auto t = typeOf(v);
  if (t.getRank() != 2)
    nc.fail("Gemm operands must be 2-D");
  return nc.create<TransposeOp>(
      nc.tensorType({t.getDimSize(1), t.getDimSize(0)}, t.getElementType()), v,
      nc.b.getDenseI64ArrayAttr({1, 0}));
}

Values convertGemm(NodeContext &nc) {
  Value a = nc.input(0), b = nc.input(1);
  if (nc.intAttr("transA", 0))
    a = transpose2d(nc, a);
  if (nc.intAttr("transB", 0))
    b = transpose2d(nc, b);
  Value y = matmul(nc, a, b);
  double alpha = nc.floatAttr("alpha", 1.0), beta = nc.floatAttr("beta", 1.0);
  if (alpha != 1.0)
    y = binaryOp<MulOp>(nc, y, nc.scalarLike(y, alpha));
  // Before opset 7, C broadcasts only with broadcast=1.
  bool broadcastOff = hasLegacyBroadcast(nc) && !nc.intAttr("broadcast", 0);
  if (nc.hasInput(2) && beta != 0.0) {
    Value c = nc.input(2);
    if (broadcastOff && typeOf(c).getShape() != typeOf(y).getShape())
      nc.fail("C's shape differs from A*B's and broadcast is not set (opset " +
              std::to_string(nc.opset) + ")");
    if (beta != 1.0)
      c = binaryOp<MulOp>(nc, c, nc.scalarLike(c, beta));
    y = binaryOp<AddOp>(nc, y, c);
  }
  return {y};
}

/// Shape arithmetic on sizes and attributes from the model: an overflow is an
/// error at the node, not undefined behaviour.
int64_t add(NodeContext &nc, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    nc.fail("shape arithmetic overflows 64 bits");
  return r;
}
int64_t sub(NodeContext &nc, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    nc.fail("shape arithmetic overflows 64 bits");
  return r;
}
int64_t mul(NodeContext &nc, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    nc.fail("shape arithmetic overflows 64 bits");
  return r;
}
/// A size computed in floating point, refused unless it is a representable,
/// non-negative dimension.
int64_t toSize(NodeContext &nc, double v) {
  if (!(v >= 0 && v < 9.2e18))
    nc.fail("computed size " + std::to_string(v) + " is out of range");
  return static_cast<int64_t>(v);
}

/// Window geometry shared by conv and pooling.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
};

/// Reads kernel/strides/dilations/pads/auto_pad; `kernel` is given for conv
/// (from the weight) and read from kernel_shape for pooling.
Window readWindow(NodeContext &nc, ArrayRef<int64_t> inShape,
                  SmallVector<int64_t> kernel) {
  size_t n = inShape.size() - 2;
  Window w;
  w.kernel = kernel;
  auto orOnes = [&](std::vector<int64_t> v) {
    if (v.empty())
      v.assign(n, 1);
    if (v.size() != n)
      nc.fail("expected " + std::to_string(n) + " values per spatial axis");
    return SmallVector<int64_t>(v.begin(), v.end());
  };
  w.strides = orOnes(nc.intsAttr("strides"));
  w.dilations = orOnes(nc.intsAttr("dilations"));
  std::vector<int64_t> pads = nc.intsAttr("pads");
  if (pads.empty())
    pads.assign(2 * n, 0);
  if (pads.size() != 2 * n)
    nc.fail("pads must have " + std::to_string(2 * n) + " values");
  w.pads.assign(pads.begin(), pads.end());
  if (w.kernel.size() != n)
    nc.fail("kernel must have " + std::to_string(n) + " spatial dimensions");
  for (size_t i = 0; i < n; ++i)
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
      nc.fail("kernel, strides and dilations must be positive");
  for (int64_t p : w.pads)
    if (p < 0)
      nc.fail("pads must not be negative");
  std::string autoPad = nc.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      int64_t in = inShape[i + 2];
      int64_t out = add(nc, in, w.strides[i] - 1) / w.strides[i];
      int64_t window = add(nc, mul(nc, w.kernel[i] - 1, w.dilations[i]), 1);
      int64_t total = std::max<int64_t>(
          0, sub(nc, add(nc, mul(nc, out - 1, w.strides[i]), window), in));
      int64_t small = total / 2;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : total - small;
      w.pads[i + n] = total - w.pads[i];
    }
  } else if (autoPad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (autoPad != "NOTSET") {
    nc.fail("unknown auto_pad '" + autoPad + "'");
  }
  return w;
}

SmallVector<int64_t> windowOutput(NodeContext &nc, ArrayRef<int64_t> inShape,
                                  const Window &w, bool ceilMode) {
  size_t n = inShape.size() - 2;
  SmallVector<int64_t> out;
  for (size_t i = 0; i < n; ++i) {
    int64_t extent = add(nc, add(nc, inShape[i + 2], w.pads[i]), w.pads[i + n]);
    int64_t window = add(nc, mul(nc, w.kernel[i] - 1, w.dilations[i]), 1);
    if (w.strides[i] < 1 || extent < window)
      nc.fail("window does not fit the padded input on spatial axis " +
              std::to_string(i));
    int64_t num = extent - window;
    int64_t o = ceilMode ? (num + w.strides[i] - 1) / w.strides[i] + 1
                         : num / w.strides[i] + 1;
    // A window may not start in the end padding.
    if (ceilMode &&
        mul(nc, o - 1, w.strides[i]) >= add(nc, inShape[i + 2], w.pads[i]))
      --o;
    out.push_back(o);
  }
  return out;
}

} // namespace

Value buildConv(NodeContext &nc, Value x, Value w, Value bias) {
  auto xs = typeOf(x).getShape(), ws = typeOf(w).getShape();
  if (xs.size() < 3 || ws.size() != xs.size())
    nc.fail("input and weight must have the same rank >= 3");
  SmallVector<int64_t> kernel(ws.drop_front(2));
  Window win = readWindow(nc, xs, kernel);
  SmallVector<int64_t> shape = {xs[0], ws[0]};
  shape.append(windowOutput(nc, xs, win, false));
  return nc.create<ConvOp>(nc.tensorType(shape, typeOf(x).getElementType()), x,
                           w, bias, nc.b.getDenseI64ArrayAttr(win.strides),
                           nc.b.getDenseI64ArrayAttr(win.dilations),
                           nc.b.getDenseI64ArrayAttr(win.pads),
                           nc.b.getI64IntegerAttr(nc.intAttr("group", 1)));
}

namespace {

Values convertConv(NodeContext &nc) {
  return {buildConv(nc, nc.input(0), nc.input(1),
                    nc.hasInput(2) ? nc.input(2) : Value())};
}

Values convertConvTranspose(NodeContext &nc) {
  Value x = nc.input(0), w = nc.input(1);
  auto xs = typeOf(x).getShape(), ws = typeOf(w).getShape();
  if (xs.size() < 3 || ws.size() != xs.size())
    nc.fail("input and weight must have the same rank >= 3");
  size_t n = xs.size() - 2;
  int64_t group = nc.intAttr("group", 1);
  SmallVector<int64_t> kernel(ws.drop_front(2));
  auto ones = [&](const char *name, int64_t dflt) {
    std::vector<int64_t> v = nc.intsAttr(name);
    if (v.empty())
      v.assign(n, dflt);
    if (v.size() != n)
      nc.fail(std::string(name) + " must have " + std::to_string(n) +
              " values");
    return SmallVector<int64_t>(v.begin(), v.end());
  };
  SmallVector<int64_t> strides = ones("strides", 1), dil = ones("dilations", 1),
                       outPad = ones("output_padding", 0);
  std::vector<int64_t> padsV = nc.intsAttr("pads");
  SmallVector<int64_t> pads(padsV.begin(), padsV.end());
  if (pads.empty())
    pads.assign(2 * n, 0);
  if (pads.size() != 2 * n)
    nc.fail("pads must have " + std::to_string(2 * n) + " values");
  std::vector<int64_t> outputShape = nc.intsAttr("output_shape");
  if (!outputShape.empty() && outputShape.size() < n)
    nc.fail("output_shape must have at least " + std::to_string(n) + " values");
  for (size_t i = 0; i < n; ++i)
    if (kernel[i] < 1 || strides[i] < 1 || dil[i] < 1 || outPad[i] < 0 ||
        pads[i] < 0 || pads[i + n] < 0)
      nc.fail("kernel, strides and dilations must be positive, pads and "
              "output_padding not negative");
  std::string autoPad = nc.stringAttr("auto_pad", "NOTSET");
  SmallVector<int64_t> spatial;
  for (size_t i = 0; i < n; ++i) {
    int64_t full =
        add(nc, add(nc, mul(nc, strides[i], xs[i + 2] - 1), outPad[i]),
            add(nc, mul(nc, kernel[i] - 1, dil[i]), 1));
    if (!outputShape.empty() || autoPad == "SAME_UPPER" ||
        autoPad == "SAME_LOWER") {
      int64_t target = !outputShape.empty()
                           ? outputShape[outputShape.size() - n + i]
                           : mul(nc, xs[i + 2], strides[i]);
      int64_t total = std::max<int64_t>(0, full - target);
      bool upper = autoPad != "SAME_LOWER";
      pads[i] = upper ? total / 2 : total - total / 2;
      pads[i + n] = total - pads[i];
      spatial.push_back(target);
    } else {
      spatial.push_back(sub(nc, sub(nc, full, pads[i]), pads[i + n]));
    }
  }
  SmallVector<int64_t> shape = {xs[0], mul(nc, ws[1], group)};
  shape.append(spatial);
  Value bias = nc.hasInput(2) ? nc.input(2) : Value();
  return {nc.create<ConvTransposeOp>(
      nc.tensorType(shape, typeOf(x).getElementType()), x, w, bias,
      nc.b.getDenseI64ArrayAttr(strides), nc.b.getDenseI64ArrayAttr(dil),
      nc.b.getDenseI64ArrayAttr(pads), nc.b.getDenseI64ArrayAttr(outPad),
      nc.b.getI64IntegerAttr(group))};
}

const Refusal &kMaxPoolStorageOrder =
    declareRefusal("MaxPool", "MaxPool indices with storage_order=1");

Values convertPool(NodeContext &nc, bool isMax) {
  Value x = nc.input(0);
  auto xs = typeOf(x).getShape();
  if (xs.size() < 3)
    nc.fail("pooling input must have rank >= 3");
  std::vector<int64_t> k = nc.intsAttr("kernel_shape");
  if (k.size() != xs.size() - 2)
    nc.fail("kernel_shape must have one value per spatial axis");
  Window win = readWindow(nc, xs, SmallVector<int64_t>(k.begin(), k.end()));
  SmallVector<int64_t> shape(xs.take_front(2));
  shape.append(windowOutput(nc, xs, win, nc.intAttr("ceil_mode", 0)));
  auto type = nc.tensorType(shape, typeOf(x).getElementType());
  auto kAttr = nc.b.getDenseI64ArrayAttr(win.kernel);
  auto sAttr = nc.b.getDenseI64ArrayAttr(win.strides);
  auto dAttr = nc.b.getDenseI64ArrayAttr(win.dilations);
  auto pAttr = nc.b.getDenseI64ArrayAttr(win.pads);
  if (!isMax)
    return {nc.create<AvgPoolOp>(
        type, x, kAttr, sAttr, dAttr, pAttr,
        nc.b.getBoolAttr(nc.intAttr("count_include_pad", 0)))};
  if (!nc.hasOutput(1))
    return {nc.create<MaxPoolOp>(type, Type(), x, kAttr, sAttr, dAttr, pAttr)};
  if (nc.intAttr("storage_order", 0))
    nc.refuse(kMaxPoolStorageOrder);
  auto results = nc.createMulti<MaxPoolOp>(
      type, nc.tensorType(shape, nc.b.getI64Type()), x, kAttr, sAttr, dAttr,
      pAttr);
  return {results[0], results[1]};
}

/// Normalises an einsum equation: no spaces, explicit "->" output.
std::string normaliseEquation(NodeContext &nc, std::string eq) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  if (eq.find("->") != std::string::npos)
    return eq;
  // Implicit output: labels seen once, in alphabetical order, after "...".
  std::map<char, int> counts;
  bool ellipsis = eq.find("...") != std::string::npos;
  for (char c : eq)
    if (std::isalpha(static_cast<unsigned char>(c)))
      ++counts[c];
  std::string out = ellipsis ? "..." : "";
  for (auto [c, n] : counts)
    if (n == 1)
      out.push_back(c);
  (void)nc;
  return eq + "->" + out;
}

Values convertEinsum(NodeContext &nc) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < nc.numInputs(); ++i)
    inputs.push_back(nc.input(i));
  std::string eq = normaliseEquation(nc, nc.stringAttr("equation", ""));
  return {nc.create<EinsumOp>(nc.outputType(0), inputs,
                              nc.b.getStringAttr(eq))};
}

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

Values convertReshape(NodeContext &nc) {
  Value x = nc.input(0);
  auto in = typeOf(x);
  std::vector<int64_t> target = nc.opset < 5 ? nc.intsAttr("shape")
                                             : nc.constantInts(1, "shape");
  bool allowZero = nc.intAttr("allowzero", 0);
  int64_t inferred = -1, known = 1;
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= in.getRank())
        nc.fail("shape entry 0 at position " + std::to_string(i) +
                " has no input dimension to copy");
      d = in.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        nc.fail("shape has more than one -1");
      inferred = i;
      shape.push_back(1);
      continue;
    }
    if (d < 0)
      nc.fail("shape has a negative entry " + std::to_string(d));
    shape.push_back(d);
    known *= d;
  }
  if (inferred >= 0) {
    if (known == 0 || in.getNumElements() % known != 0)
      nc.fail("cannot infer the -1 dimension");
    shape[inferred] = in.getNumElements() / known;
  }
  if (product(shape) != in.getNumElements())
    nc.fail("cannot reshape " + std::to_string(in.getNumElements()) +
            " elements into " + std::to_string(product(shape)));
  return {nc.reshape(x, shape)};
}

Values convertFlatten(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  int64_t rank = s.size();
  int64_t axis = nc.intAttr("axis", 1);
  if (axis < -rank || axis > rank)
    nc.fail("axis out of range");
  if (axis < 0)
    axis += rank;
  return {nc.reshape(x, {product(s.take_front(axis)),
                         product(s.drop_front(axis))})};
}

Values convertSqueeze(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  std::vector<int64_t> axes = nc.opset >= 13 && nc.hasInput(1)
                                  ? nc.constantInts(1, "axes")
                                  : nc.intsAttr("axes");
  SmallVector<int64_t> norm;
  for (int64_t a : axes) {
    int64_t n = nc.axis(a, s.size());
    if (s[n] != 1)
      nc.fail("cannot squeeze axis " + std::to_string(a) + " of size " +
              std::to_string(s[n]));
    norm.push_back(n);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    bool drop = norm.empty() ? s[d] == 1 : llvm::is_contained(norm, d);
    if (!drop)
      shape.push_back(s[d]);
  }
  return {nc.reshape(x, shape)};
}

Values convertUnsqueeze(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  std::vector<int64_t> axes = nc.opset >= 13 ? nc.constantInts(1, "axes")
                                             : nc.intsAttr("axes");
  int64_t rank = s.size() + axes.size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    int64_t n = nc.axis(a, rank);
    if (inserted[n])
      nc.fail("repeated axis " + std::to_string(a));
    inserted[n] = true;
  }
  SmallVector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : s[next++]);
  return {nc.reshape(x, shape)};
}

Values convertTranspose(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  std::vector<int64_t> perm = nc.intsAttr("perm");
  if (perm.empty())
    for (int64_t d = s.size() - 1; d >= 0; --d)
      perm.push_back(d);
  if (perm.size() != s.size())
    nc.fail("perm has the wrong length");
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(s.size()))
      nc.fail("perm entry out of range");
    shape.push_back(s[p]);
  }
  return {nc.create<TransposeOp>(
      nc.tensorType(shape, typeOf(x).getElementType()), x,
      nc.b.getDenseI64ArrayAttr(perm))};
}

Values convertConcat(NodeContext &nc) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < nc.numInputs(); ++i)
    inputs.push_back(nc.input(i));
  if (inputs.empty())
    nc.fail("needs at least one input");
  auto first = typeOf(inputs[0]);
  int64_t axis = nc.axis(nc.intAttr("axis", 0), first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : inputs) {
    if (typeOf(v).getRank() != first.getRank())
      nc.fail("inputs have different ranks");
    shape[axis] = add(nc, shape[axis], typeOf(v).getDimSize(axis));
  }
  return {nc.create<ConcatOp>(nc.tensorType(shape, first.getElementType()),
                              inputs, nc.b.getI64IntegerAttr(axis))};
}

Values convertSlice(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  int64_t rank = s.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (nc.opset < 10) {
    starts = nc.intsAttr("starts");
    ends = nc.intsAttr("ends");
    axes = nc.intsAttr("axes");
  } else {
    starts = nc.constantInts(1, "starts");
    ends = nc.constantInts(2, "ends");
    if (nc.hasInput(3))
      axes = nc.constantInts(3, "axes");
    if (nc.hasInput(4))
      steps = nc.constantInts(4, "steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    nc.fail("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> st, en, ax, sp;
  SmallVector<int64_t> shape(s);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = nc.axis(axes[i], rank), dim = s[a], step = steps[i];
    if (step == 0)
      nc.fail("slice step is 0");
    if (llvm::is_contained(ax, a))
      nc.fail("repeated axis " + std::to_string(axes[i]));
    auto clampIdx = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0)
        v += dim;
      return std::clamp(v, lo, hi);
    };
    int64_t b = step > 0 ? clampIdx(starts[i], 0, dim)
                         : clampIdx(starts[i], -1, dim - 1);
    int64_t e;
    if (step > 0)
      e = clampIdx(std::max<int64_t>(ends[i], -dim - 1), 0, dim);
    else
      e = ends[i] < -dim ? -1 : clampIdx(ends[i], -1, dim - 1);
    if (step < 0 && b < 0)
      b = -1;
    int64_t span = step > 0 ? e - b : b - e;
    // ceil(span / |step|) without overflow, even for a step of INT64_MIN.
    uint64_t mag = step > 0 ? uint64_t(step) : 0 - uint64_t(step);
    shape[a] = span <= 0 ? 0 : int64_t((uint64_t(span) - 1) / mag + 1);
    st.push_back(std::max<int64_t>(b, step > 0 ? 0 : -1));
    en.push_back(e);
    ax.push_back(a);
    sp.push_back(step);
  }
  return {nc.create<SliceOp>(nc.tensorType(shape, typeOf(x).getElementType()),
                             x, nc.b.getDenseI64ArrayAttr(st),
                             nc.b.getDenseI64ArrayAttr(en),
                             nc.b.getDenseI64ArrayAttr(ax),
                             nc.b.getDenseI64ArrayAttr(sp))};
}

Values convertSplit(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  int64_t axis = nc.axis(nc.intAttr("axis", 0), s.size());
  std::vector<int64_t> split = nc.opset >= 13 && nc.hasInput(1)
                                   ? nc.constantInts(1, "split")
                                   : nc.intsAttr("split");
  size_t n = nc.numOutputs();
  if (split.empty()) {
    int64_t parts = nc.intAttr("num_outputs", n);
    if (parts < 1 || parts != static_cast<int64_t>(n))
      nc.fail("num_outputs must equal the number of outputs");
    int64_t chunk = add(nc, s[axis], parts - 1) / parts;
    for (int64_t i = 0, left = s[axis]; i < parts; ++i, left -= chunk)
      split.push_back(std::min(chunk, left));
  }
  if (split.size() != n)
    nc.fail("split has " + std::to_string(split.size()) + " parts for " +
            std::to_string(n) + " outputs");
  int64_t total = 0;
  for (int64_t size : split) {
    if (size < 0)
      nc.fail("split sizes must not be negative");
    total = add(nc, total, size);
  }
  if (total != s[axis])
    nc.fail("split sizes do not add up to the axis size");
  Values outs;
  int64_t start = 0;
  for (int64_t size : split) {
    outs.push_back(sliceAxis(nc, x, axis, start, start + size, 1));
    start += size;
  }
  return outs;
}

/// Refuses a constant index input `i` that holds an index outside
/// [-size, size) of the dimension it indexes: `dimOf(position)` gives that
/// dimension's size for the index at flat position `position`. An index
/// that is not constant is checked when the graph runs.
void checkConstantIndices(NodeContext &nc, size_t i,
                          llvm::function_ref<int64_t(int64_t)> dimOf) {
  std::optional<rt::Tensor> idx = nc.constantInput(i);
  if (!idx)
    return;
  for (int64_t p = 0; p < idx->numElements(); ++p) {
    int64_t v = idx->getInt(p), size = dimOf(p);
    if (v < -size || v >= size)
      nc.fail("constant index " + std::to_string(v) + " (element " +
              std::to_string(p) + " of input '" + nc.node.input(i) +
              "') is out of range for a dimension of size " +
              std::to_string(size));
  }
}

/// Checks the constant indices of Gather, GatherElements and
/// ScatterElements: every one indexes `axis` of input 0.
void checkAxisIndices(NodeContext &nc, size_t i, int64_t axis) {
  int64_t size = typeOf(nc.input(0)).getDimSize(axis);
  checkConstantIndices(nc, i, [&](int64_t) { return size; });
}

/// Checks the constant index tuples of GatherND and ScatterND: the last
/// dimension of the indices holds one index per dimension of input 0 after
/// the `batchDims` leading ones.
void checkTupleIndices(NodeContext &nc, size_t i, int64_t batchDims) {
  auto data = typeOf(nc.input(0)).getShape();
  auto idx = typeOf(nc.input(i)).getShape();
  if (idx.empty())
    return;
  int64_t k = idx.back();
  if (k <= 0 || batchDims < 0 ||
      batchDims + k > static_cast<int64_t>(data.size()))
    return; // The op's verifier names the mismatch.
  checkConstantIndices(
      nc, i, [&](int64_t p) { return data[batchDims + p % k]; });
}

template <typename OpT> Values gatherLike(NodeContext &nc, const char *attr) {
  Value x = nc.input(0), idx = nc.input(1);
  int64_t rank = typeOf(x).getRank();
  int64_t axis = nc.axis(nc.intAttr(attr, 0), rank);
  checkAxisIndices(nc, 1, axis);
  return {nc.create<OpT>(nc.outputType(0), x, idx,
                         nc.b.getI64IntegerAttr(axis))};
}

Values convertGatherND(NodeContext &nc) {
  checkTupleIndices(nc, 1, nc.intAttr("batch_dims", 0));
  return {nc.create<GatherNDOp>(
      nc.outputType(0), nc.input(0), nc.input(1),
      nc.b.getI64IntegerAttr(nc.intAttr("batch_dims", 0)))};
}

Values convertScatterND(NodeContext &nc) {
  Value x = nc.input(0);
  checkTupleIndices(nc, 1, 0);
  return {nc.create<ScatterNDOp>(
      x.getType(), x, nc.input(1), nc.input(2),
      nc.b.getStringAttr(nc.stringAttr("reduction", "none")))};
}

Values convertScatterElements(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t axis = nc.axis(nc.intAttr("axis", 0), typeOf(x).getRank());
  checkAxisIndices(nc, 1, axis);
  return {nc.create<ScatterElementsOp>(
      x.getType(), x, nc.input(1), nc.input(2), nc.b.getI64IntegerAttr(axis),
      nc.b.getStringAttr(nc.stringAttr("reduction", "none")))};
}

Values convertExpand(NodeContext &nc) {
  Value x = nc.input(0);
  std::vector<int64_t> shape = nc.constantInts(1, "shape");
  auto out = broadcastShape(nc, typeOf(x).getShape(), shape);
  if (ArrayRef<int64_t>(out) == typeOf(x).getShape())
    return {x};
  return {nc.create<BroadcastToOp>(
      nc.tensorType(out, typeOf(x).getElementType()), x)};
}

Values convertTile(NodeContext &nc) {
  Value x = nc.input(0);
  std::vector<int64_t> repeats = nc.constantInts(1, "repeats");
  auto s = typeOf(x).getShape();
  if (repeats.size() != s.size())
    nc.fail("repeats must have one entry per axis");
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < s.size(); ++i) {
    if (repeats[i] < 0)
      nc.fail("negative repeat");
    shape.push_back(mul(nc, s[i], repeats[i]));
  }
  return {nc.create<TileOp>(nc.tensorType(shape, typeOf(x).getElementType()),
                            x, nc.b.getDenseI64ArrayAttr(repeats))};
}

Values convertPad(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  int64_t rank = s.size();
  std::vector<int64_t> pads;
  double value = 0;
  if (nc.opset < 11) {
    // Opset 1 spells the attribute "paddings" (the same layout).
    pads = nc.intsAttr(nc.hasAttr("paddings") ? "paddings" : "pads");
    value = nc.floatAttr("value", 0);
  } else {
    pads = nc.constantInts(1, "pads");
    if (nc.hasInput(2)) {
      rt::Tensor v = nc.requireConstant(2, "constant_value");
      value = v.numElements() ? v.getDouble(0) : 0.0;
    }
  }
  if (nc.hasInput(3)) {
    std::vector<int64_t> axes = nc.constantInts(3, "axes");
    std::vector<int64_t> full(2 * rank, 0);
    if (pads.size() != 2 * axes.size())
      nc.fail("pads must have two entries per axis");
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = nc.axis(axes[i], rank);
      full[a] = pads[i];
      full[a + rank] = pads[i + axes.size()];
    }
    pads = full;
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    nc.fail("pads must have " + std::to_string(2 * rank) + " entries");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = add(nc, add(nc, s[d], pads[d]), pads[d + rank]);
    if (size < 0)
      nc.fail("padding makes axis " + std::to_string(d) + " negative");
    shape.push_back(size);
  }
  std::string mode = nc.stringAttr("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    nc.fail("unknown pad mode '" + mode + "'");
  return {nc.create<PadOp>(nc.tensorType(shape, typeOf(x).getElementType()), x,
                           nc.b.getDenseI64ArrayAttr(pads),
                           nc.b.getStringAttr(mode),
                           nc.b.getF64FloatAttr(value))};
}

Values convertTopK(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  int64_t k = nc.opset >= 10 ? nc.constantInts(1, "k").at(0)
                             : nc.intAttr("k", 0);
  int64_t axis = nc.axis(nc.intAttr("axis", -1), s.size());
  if (k < 0 || k > s[axis])
    nc.fail("k = " + std::to_string(k) + " exceeds the axis size " +
            std::to_string(s[axis]));
  SmallVector<int64_t> shape(s);
  shape[axis] = k;
  auto results = nc.createMulti<TopKOp>(
      nc.tensorType(shape, typeOf(x).getElementType()),
      nc.tensorType(shape, nc.b.getI64Type()), x, nc.b.getI64IntegerAttr(k),
      nc.b.getI64IntegerAttr(axis),
      nc.b.getBoolAttr(nc.intAttr("largest", 1)),
      nc.b.getBoolAttr(nc.intAttr("sorted", 1)));
  return {results[0], results[1]};
}

Values convertTrilu(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t k = nc.hasInput(1) ? nc.constantInts(1, "k").at(0) : 0;
  return {nc.create<TriluOp>(x.getType(), x, nc.b.getI64IntegerAttr(k),
                             nc.b.getBoolAttr(nc.intAttr("upper", 1)))};
}

Values convertResize(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  int64_t rank = s.size();
  bool isUpsample = nc.node.op_type() == "Upsample";
  std::vector<double> roi, scales;
  std::vector<int64_t> sizes;
  auto floats = [&](size_t i) {
    std::vector<double> v;
    if (!nc.hasInput(i))
      return v;
    rt::Tensor t = nc.requireConstant(i, "resize parameters",
                                      "the output shape depends on them");
    for (int64_t j = 0; j < t.numElements(); ++j)
      v.push_back(t.getDouble(j));
    return v;
  };
  if (isUpsample && nc.opset < 7) {
    // Opset 1: the two spatial scales of an NCHW tensor.
    if (rank != 4)
      nc.fail("Upsample of opset " + std::to_string(nc.opset) +
              " scales an NCHW tensor (rank 4), got rank " +
              std::to_string(rank));
    scales = {1.0, 1.0, nc.floatAttr("height_scale", 1.0),
              nc.floatAttr("width_scale", 1.0)};
  } else if (isUpsample) {
    scales = nc.opset >= 9 ? floats(1) : nc.floatsAttr("scales");
  } else if (nc.opset < 11) {
    scales = floats(1);
  } else {
    roi = floats(1);
    scales = floats(2);
    if (nc.hasInput(3))
      sizes = nc.constantInts(3, "sizes");
  }
  std::vector<int64_t> axes = nc.intsAttr("axes");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  for (int64_t &a : axes)
    a = nc.axis(a, rank);
  std::vector<double> fullScales(rank, 1.0);
  SmallVector<int64_t> shape(s);
  std::vector<double> fullRoi;
  if (!roi.empty()) {
    fullRoi.assign(2 * rank, 0.0);
    for (int64_t d = 0; d < rank; ++d)
      fullRoi[d + rank] = 1.0;
    if (roi.size() != 2 * axes.size())
      nc.fail("roi must have two entries per axis");
    for (size_t i = 0; i < axes.size(); ++i) {
      fullRoi[axes[i]] = roi[i];
      fullRoi[axes[i] + rank] = roi[i + axes.size()];
    }
  }
  if (!sizes.empty()) {
    if (sizes.size() != axes.size())
      nc.fail("sizes must have one entry per axis");
    for (int64_t size : sizes)
      if (size < 0)
        nc.fail("sizes must not be negative");
    std::string policy = nc.stringAttr("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        shape[axes[i]] = sizes[i];
        fullScales[axes[i]] = double(sizes[i]) / double(s[axes[i]]);
      }
    } else {
      double scale = policy == "not_larger" ? 1e300 : 0.0;
      for (size_t i = 0; i < axes.size(); ++i) {
        double r = double(sizes[i]) / double(s[axes[i]]);
        scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
      }
      for (int64_t a : axes) {
        fullScales[a] = scale;
        shape[a] = toSize(nc, std::nearbyint(scale * s[a]));
      }
    }
  } else {
    if (scales.size() != axes.size())
      nc.fail("scales must have one entry per axis (or give sizes)");
    for (size_t i = 0; i < axes.size(); ++i) {
      if (scales[i] <= 0)
        nc.fail("scales must be positive");
      fullScales[axes[i]] = scales[i];
      shape[axes[i]] = toSize(nc, std::floor(s[axes[i]] * scales[i] + 1e-9));
    }
  }
  std::string mode = nc.stringAttr("mode", "nearest");
  if (mode == "bilinear" || mode == "trilinear")
    mode = "linear";
  std::string ctm = nc.stringAttr(
      "coordinate_transformation_mode",
      isUpsample || nc.opset < 11 ? "asymmetric" : "half_pixel");
  std::string nearest = nc.stringAttr(
      "nearest_mode",
      isUpsample || nc.opset < 11 ? "floor" : "round_prefer_floor");
  if (isUpsample || nc.opset < 11)
    nearest = "floor";
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    nc.fail("unknown resize mode '" + mode + "'");
  return {nc.create<ResizeOp>(
      nc.tensorType(shape, typeOf(x).getElementType()), x,
      nc.b.getStringAttr(mode), nc.b.getStringAttr(ctm),
      nc.b.getStringAttr(nearest),
      nc.b.getF64FloatAttr(nc.floatAttr("cubic_coeff_a", -0.75)),
      nc.b.getBoolAttr(nc.intAttr("exclude_outside", 0)),
      nc.b.getF64FloatAttr(nc.floatAttr("extrapolation_value", 0.0)),
      nc.b.getDenseF64ArrayAttr(fullScales),
      nc.b.getDenseF64ArrayAttr(fullRoi))};
}

Values convertDepthToSpace(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  int64_t bs = nc.intAttr("blocksize", 0);
  if (s.size() != 4 || bs <= 0 || s[1] % mul(nc, bs, bs) != 0)
    nc.fail("needs a 4-D input whose channels divide by blocksize^2");
  return {nc.create<DepthToSpaceOp>(
      nc.tensorType(
          {s[0], s[1] / (bs * bs), mul(nc, s[2], bs), mul(nc, s[3], bs)},
          typeOf(x).getElementType()),
      x, nc.b.getI64IntegerAttr(bs),
      nc.b.getStringAttr(nc.stringAttr("mode", "DCR")))};
}

Values convertSpaceToDepth(NodeContext &nc) {
  Value x = nc.input(0);
  auto s = typeOf(x).getShape();
  int64_t bs = nc.intAttr("blocksize", 0);
  if (s.size() != 4 || bs <= 0 || s[2] % bs != 0 || s[3] % bs != 0)
    nc.fail("needs a 4-D input whose spatial sizes divide by blocksize");
  return {nc.create<SpaceToDepthOp>(
      nc.tensorType(
          {s[0], mul(nc, mul(nc, s[1], bs), bs), s[2] / bs, s[3] / bs},
          typeOf(x).getElementType()),
      x, nc.b.getI64IntegerAttr(bs))};
}

Values convertOneHot(NodeContext &nc) {
  Value idx = nc.input(0), values = nc.input(2);
  rt::Tensor depthT =
      nc.requireConstant(1, "depth", "the output shape depends on it");
  if (depthT.numElements() != 1)
    nc.fail("depth must hold one value");
  int64_t depth = static_cast<int64_t>(depthT.getDouble(0));
  auto s = typeOf(idx).getShape();
  int64_t rank = s.size() + 1;
  int64_t axis = nc.axis(nc.intAttr("axis", -1), rank);
  SmallVector<int64_t> shape(s);
  shape.insert(shape.begin() + axis, depth);
  return {nc.create<OneHotOp>(
      nc.tensorType(shape, typeOf(values).getElementType()), idx, values,
      nc.b.getI64IntegerAttr(depth), nc.b.getI64IntegerAttr(axis))};
}

//===----------------------------------------------------------------------===//
// Quantisation, spelled out in elementwise graph ops
//===----------------------------------------------------------------------===//

const Refusal &kBlockedQuantisation =
    declareRefusal("QuantizeLinear,DequantizeLinear",
                   "blocked quantisation (parameters of rank > 1)");
const Refusal &kQuantiseType = declareRefusal(
    "QuantizeLinear", "quantisation to a type other than int8/uint8");

/// Reshapes a per-axis (1-D) quantisation parameter so it broadcasts along
/// `axis` of a tensor of rank `rank`; scalars are left alone.
Value alongAxis(NodeContext &nc, Value param, int64_t axis, int64_t rank) {
  auto t = typeOf(param);
  if (t.getRank() == 0)
    return param;
  if (t.getRank() != 1)
    nc.refuse(kBlockedQuantisation);
  if (t.getDimSize(0) == 1)
    return param;
  axis = nc.axis(axis, rank);
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = t.getDimSize(0);
  return nc.reshape(param, shape);
}

Value castTo(NodeContext &nc, Value v, Type elt) {
  auto t = typeOf(v);
  if (t.getElementType() == elt)
    return v;
  return nc.create<CastOp>(nc.tensorType(t.getShape(), elt), v);
}

/// y = (x - zero_point) * scale, in the scale's float type.
Values convertDequantize(NodeContext &nc) {
  Value x = nc.input(0), scale = nc.input(1);
  int64_t rank = typeOf(x).getRank();
  int64_t axis = nc.intAttr("axis", 1);
  Type ft = typeOf(scale).getElementType();
  Value xf = castTo(nc, x, ft);
  if (nc.hasInput(2))
    xf = binaryOp<SubOp>(
        nc, xf, castTo(nc, alongAxis(nc, nc.input(2), axis, rank), ft));
  return {binaryOp<MulOp>(nc, xf, alongAxis(nc, scale, axis, rank))};
}

/// y = saturate(round_half_even(x / scale) + zero_point).
Values convertQuantize(NodeContext &nc) {
  Value x = nc.input(0), scale = nc.input(1);
  int64_t rank = typeOf(x).getRank();
  int64_t axis = nc.intAttr("axis", 1);
  Type ft = typeOf(x).getElementType();
  Type qt = nc.hasInput(2) ? typeOf(nc.input(2)).getElementType()
                           : nc.b.getIntegerType(8, /*isSigned=*/false);
  auto qint = dyn_cast<IntegerType>(qt);
  if (!qint || qint.getWidth() != 8)
    nc.refuse(kQuantiseType);
  Value q = binaryOp<DivOp>(nc, x, castTo(nc, alongAxis(nc, scale, axis, rank), ft));
  q = nc.create<RoundOp>(q.getType(), q);
  if (nc.hasInput(2))
    q = binaryOp<AddOp>(
        nc, q, castTo(nc, alongAxis(nc, nc.input(2), axis, rank), ft));
  bool isUnsigned = qint.isUnsigned();
  q = binaryOp<MaxOp>(nc, q, nc.scalarLike(q, isUnsigned ? 0 : -128));
  q = binaryOp<MinOp>(nc, q, nc.scalarLike(q, isUnsigned ? 255 : 127));
  return {castTo(nc, q, qt)};
}

//===----------------------------------------------------------------------===//
// Ops that fold to constants at import (static shapes make them known)
//===----------------------------------------------------------------------===//

Values convertShape(NodeContext &nc) {
  auto s = typeOf(nc.input(0)).getShape();
  int64_t rank = s.size();
  int64_t start = nc.intAttr("start", 0), end = nc.intAttr("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> dims(s.begin() + start, s.begin() + end);
  return {nc.constant(rt::Tensor::fromVector(
      rt::DType::I64, {static_cast<int64_t>(dims.size())}, dims))};
}

Values convertSize(NodeContext &nc) {
  rt::Tensor t(rt::DType::I64, {});
  t.setInt(0, typeOf(nc.input(0)).getNumElements());
  return {nc.constant(t)};
}

const Refusal &kConstantExternal =
    declareRefusal("Constant,ConstantOfShape", "constant with external data");
const Refusal &kConstantKind =
    declareRefusal("Constant", "constant kind (only tensor, float(s) and "
                               "int(s) values)");
const Refusal &kEyeLikeType = declareRefusal(
    "EyeLike", "dtype (a type other than the numeric and bool ones)");

/// The tensor held by a TensorProto attribute.
rt::Tensor attrTensor(NodeContext &nc, const onnx::TensorProto &p) {
  if (p.data_location() == onnx::TensorProto::EXTERNAL)
    nc.refuse(kConstantExternal);
  return rt::tensorFromProto(p, nodeLabel(nc.node));
}

Values convertConstantOfShape(NodeContext &nc) {
  std::vector<int64_t> shape = nc.constantInts(0, "shape");
  rt::Tensor value(rt::DType::F32, {1});
  if (auto *a = nc.attr("value"))
    value = attrTensor(nc, a->t());
  rt::Tensor out(value.dtype(), rt::Shape(shape.begin(), shape.end()));
  size_t elt = rt::dtypeSize(value.dtype());
  for (int64_t i = 0; i < out.numElements(); ++i)
    std::memcpy(static_cast<char *>(out.mutableRaw()) + i * elt, value.raw(),
                elt);
  return {nc.constant(out)};
}

Values convertConstant(NodeContext &nc) {
  if (auto *a = nc.attr("value"))
    return {nc.constant(attrTensor(nc, a->t()))};
  if (nc.hasAttr("value_float")) {
    rt::Tensor t(rt::DType::F32, {});
    t.setDouble(0, nc.floatAttr("value_float", 0));
    return {nc.constant(t)};
  }
  if (nc.hasAttr("value_int")) {
    rt::Tensor t(rt::DType::I64, {});
    t.setInt(0, nc.intAttr("value_int", 0));
    return {nc.constant(t)};
  }
  if (nc.hasAttr("value_floats")) {
    auto v = nc.floatsAttr("value_floats");
    return {nc.constant(rt::Tensor::fromVector(
        rt::DType::F32, {static_cast<int64_t>(v.size())}, v))};
  }
  if (nc.hasAttr("value_ints")) {
    auto v = nc.intsAttr("value_ints");
    return {nc.constant(rt::Tensor::fromVector(
        rt::DType::I64, {static_cast<int64_t>(v.size())}, v))};
  }
  nc.refuse(kConstantKind);
}

Values convertRange(NodeContext &nc) {
  // The output's length depends on all three.
  std::optional<rt::Tensor> start = nc.requireConstant(
                                0, "start", "the output shape depends on it"),
                            limit = nc.requireConstant(
                                1, "limit", "the output shape depends on it"),
                            delta = nc.requireConstant(
                                2, "delta", "the output shape depends on it");
  for (const auto *t : {&start, &limit, &delta})
    if ((*t)->numElements() != 1)
      nc.fail("start, limit and delta must each hold one value");
  double s = start->getDouble(0), l = limit->getDouble(0),
         d = delta->getDouble(0);
  if (d == 0)
    nc.fail("delta is 0");
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
  if (n > (int64_t(1) << 31))
    nc.fail("range has too many elements");
  rt::Tensor out(start->dtype(), {n});
  for (int64_t i = 0; i < n; ++i) {
    if (rt::isFloat(start->dtype()))
      out.setDouble(i, s + i * d);
    else
      out.setInt(i, start->getInt(0) + i * delta->getInt(0));
  }
  return {nc.constant(out)};
}

Values convertEyeLike(NodeContext &nc) {
  auto in = typeOf(nc.input(0));
  if (in.getRank() != 2)
    nc.fail("EyeLike needs a 2-D input");
  rt::DType dt = *dtypeFromType(in.getElementType());
  if (nc.hasAttr("dtype")) {
    auto d = rt::dtypeFromOnnx(nc.intAttr("dtype", 1));
    if (!d)
      nc.refuse(kEyeLikeType);
    dt = *d;
  }
  int64_t k = nc.intAttr("k", 0);
  rt::Tensor out(dt, {in.getDimSize(0), in.getDimSize(1)});
  for (int64_t i = 0; i < in.getDimSize(0); ++i) {
    int64_t j = i + k;
    if (j >= 0 && j < in.getDimSize(1))
      out.setDouble(i * in.getDimSize(1) + j, 1.0);
  }
  return {nc.constant(out)};
}

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

/// Unary ops, casts and the identities.
void addUnaryConverters(llvm::StringMap<Converter> &t) {
  // Unary.
  t["Neg"] = unary<NegOp>;
  t["Abs"] = unary<AbsOp>;
  t["Sqrt"] = unary<SqrtOp>;
  t["Reciprocal"] = unary<ReciprocalOp>;
  t["Exp"] = unary<ExpOp>;
  t["Log"] = unary<LogOp>;
  t["Erf"] = unary<ErfOp>;
  t["Tanh"] = unary<TanhOp>;
  t["Sigmoid"] = unary<SigmoidOp>;
  t["Relu"] = unary<ReluOp>;
  t["Sin"] = unary<SinOp>;
  t["Cos"] = unary<CosOp>;
  t["Tan"] = unary<TanOp>;
  t["Asin"] = unary<AsinOp>;
  t["Acos"] = unary<AcosOp>;
  t["Atan"] = unary<AtanOp>;
  t["Sinh"] = unary<SinhOp>;
  t["Cosh"] = unary<CoshOp>;
  t["Asinh"] = unary<AsinhOp>;
  t["Acosh"] = unary<AcoshOp>;
  t["Atanh"] = unary<AtanhOp>;
  t["Floor"] = unary<FloorOp>;
  t["Ceil"] = unary<CeilOp>;
  t["Round"] = unary<RoundOp>;
  t["Sign"] = unary<SignOp>;
  t["Softsign"] = unary<SoftsignOp>;
  t["Softplus"] = unary<SoftplusOp>;
  t["Not"] = unary<NotOp>;
  t["HardSwish"] = unary<HardSwishOp>;
  t["IsNaN"] = [](NodeContext &nc) -> Values {
    Value x = nc.input(0);
    return {nc.create<IsNaNOp>(
        nc.tensorType(typeOf(x).getShape(), nc.b.getI1Type()), x)};
  };
  t["IsInf"] = [](NodeContext &nc) -> Values {
    Value x = nc.input(0);
    return {nc.create<IsInfOp>(
        nc.tensorType(typeOf(x).getShape(), nc.b.getI1Type()), x,
        nc.b.getBoolAttr(nc.intAttr("detect_positive", 1)),
        nc.b.getBoolAttr(nc.intAttr("detect_negative", 1)))};
  };
  t["LeakyRelu"] = [](NodeContext &nc) {
    return unaryAlpha<LeakyReluOp>(nc, "alpha", 0.01);
  };
  t["Elu"] = [](NodeContext &nc) {
    return unaryAlpha<EluOp>(nc, "alpha", 1.0);
  };
  t["Celu"] = [](NodeContext &nc) {
    return unaryAlpha<CeluOp>(nc, "alpha", 1.0);
  };
  t["ThresholdedRelu"] = [](NodeContext &nc) {
    return unaryAlpha<ThresholdedReluOp>(nc, "alpha", 1.0);
  };
  t["Selu"] = [](NodeContext &nc) -> Values {
    Value x = nc.input(0);
    return {nc.create<SeluOp>(
        x.getType(), x,
        nc.b.getF64FloatAttr(nc.floatAttr("alpha", 1.67326319217681884765625)),
        nc.b.getF64FloatAttr(nc.floatAttr("gamma", 1.05070102214813232421875)))};
  };
  t["HardSigmoid"] = [](NodeContext &nc) -> Values {
    Value x = nc.input(0);
    return {nc.create<HardSigmoidOp>(
        x.getType(), x, nc.b.getF64FloatAttr(nc.floatAttr("alpha", 0.2)),
        nc.b.getF64FloatAttr(nc.floatAttr("beta", 0.5)))};
  };
  t["Shrink"] = [](NodeContext &nc) -> Values {
    Value x = nc.input(0);
    return {nc.create<ShrinkOp>(
        x.getType(), x, nc.b.getF64FloatAttr(nc.floatAttr("lambd", 0.5)),
        nc.b.getF64FloatAttr(nc.floatAttr("bias", 0.0)))};
  };
  t["Cast"] = [](NodeContext &nc) {
    return convertCast(nc, elementTypeFromOnnx(*nc.b.getContext(),
                                               nc.intAttr("to", 0),
                                               nodeLabel(nc.node)));
  };
  t["CastLike"] = [](NodeContext &nc) {
    return convertCast(nc, nc.inputType(1).getElementType());
  };
  t["Identity"] = convertIdentity;
  t["Dropout"] = convertIdentity;
}

/// Binary ops, comparisons and the variadic folds.
void addBinaryConverters(llvm::StringMap<Converter> &t) {
  // Binary.
  t["Add"] = binary<AddOp>;
  t["Sub"] = binary<SubOp>;
  t["Mul"] = binary<MulOp>;
  t["Div"] = binary<DivOp>;
  t["Pow"] = binary<PowOp>;
  t["And"] = binary<AndOp>;
  t["Or"] = binary<OrOp>;
  t["Xor"] = binary<XorOp>;
  t["PRelu"] = [](NodeContext &nc) -> Values {
    Value x = nc.input(0), slope = nc.input(1);
    auto xs = typeOf(x).getShape(), ss = typeOf(slope).getShape();
    // Before opset 7 a 1-D slope of C values applies along axis 1.
    SmallVector<int64_t> unused;
    if (ss.size() == 1 && xs.size() > 2 && ss[0] == xs[1] &&
        !OpTrait::util::getBroadcastedShape(xs, ss, unused)) {
      SmallVector<int64_t> shape(xs.size() - 1, 1);
      shape[0] = ss[0];
      slope = nc.reshape(slope, shape);
    }
    return {binaryOp<PReluOp>(nc, x, slope)};
  };
  t["Equal"] = compare<EqualOp>;
  t["Less"] = compare<LessOp>;
  t["Greater"] = compare<GreaterOp>;
  t["LessOrEqual"] = compare<LessEqualOp>;
  t["GreaterOrEqual"] = compare<GreaterEqualOp>;
  t["Mod"] = [](NodeContext &nc) -> Values {
    Value a = nc.input(0), b = nc.input(1);
    auto shape = broadcastShape(nc, typeOf(a).getShape(), typeOf(b).getShape());
    return {nc.create<ModOp>(nc.tensorType(shape, typeOf(a).getElementType()),
                             a, b, nc.b.getBoolAttr(nc.intAttr("fmod", 0)))};
  };
  t["BitShift"] = [](NodeContext &nc) -> Values {
    Value a = nc.input(0), b = nc.input(1);
    auto shape = broadcastShape(nc, typeOf(a).getShape(), typeOf(b).getShape());
    return {nc.create<BitShiftOp>(
        nc.tensorType(shape, typeOf(a).getElementType()), a, b,
        nc.b.getBoolAttr(nc.stringAttr("direction", "") == "LEFT"))};
  };
  t["Min"] = [](NodeContext &nc) -> Values { return {variadicFold<MinOp>(nc)}; };
  t["Max"] = [](NodeContext &nc) -> Values { return {variadicFold<MaxOp>(nc)}; };
  t["Sum"] = [](NodeContext &nc) -> Values { return {variadicFold<AddOp>(nc)}; };
  t["Mean"] = convertMean;
  t["Clip"] = convertClip;
  t["Where"] = convertWhere;
}

/// Reductions, softmax-likes and normalisations.
void addReductionConverters(llvm::StringMap<Converter> &t) {
  // Reductions and normalisations.
  t["ReduceSum"] = [](NodeContext &nc) { return reduce<ReduceSumOp>(nc, 13); };
  t["ReduceMean"] = [](NodeContext &nc) { return reduce<ReduceMeanOp>(nc, 18); };
  t["ReduceMax"] = [](NodeContext &nc) { return reduce<ReduceMaxOp>(nc, 18); };
  t["ReduceMin"] = [](NodeContext &nc) { return reduce<ReduceMinOp>(nc, 18); };
  t["ReduceProd"] = [](NodeContext &nc) { return reduce<ReduceProdOp>(nc, 18); };
  t["ReduceL1"] = [](NodeContext &nc) { return reduce<ReduceL1Op>(nc, 18); };
  t["ReduceL2"] = [](NodeContext &nc) { return reduce<ReduceL2Op>(nc, 18); };
  t["ReduceSumSquare"] = [](NodeContext &nc) {
    return reduce<ReduceSumSquareOp>(nc, 18);
  };
  t["ReduceLogSum"] = [](NodeContext &nc) {
    return reduce<ReduceLogSumOp>(nc, 18);
  };
  t["ReduceLogSumExp"] = [](NodeContext &nc) {
    return reduce<ReduceLogSumExpOp>(nc, 18);
  };
  t["ArgMax"] = argReduce<ArgMaxOp>;
  t["ArgMin"] = argReduce<ArgMinOp>;
  t["Softmax"] = softmaxLike<SoftmaxOp>;
  t["LogSoftmax"] = softmaxLike<LogSoftmaxOp>;
  t["Hardmax"] = softmaxLike<HardmaxOp>;
  t["CumSum"] = convertCumSum;
  t["BatchNormalization"] = convertBatchNorm;
  t["LayerNormalization"] = convertLayerNorm;
  t["InstanceNormalization"] = convertInstanceNorm;
  t["GlobalAveragePool"] = [](NodeContext &nc) {
    return convertGlobalPool(nc, false);
  };
  t["GlobalMaxPool"] = [](NodeContext &nc) {
    return convertGlobalPool(nc, true);
  };
}

/// Matrix products, convolutions, pooling and einsum.
void addLinearAlgebraConverters(llvm::StringMap<Converter> &t) {
  // Linear algebra, convolution, pooling.
  t["MatMul"] = [](NodeContext &nc) -> Values {
    return {matmul(nc, nc.input(0), nc.input(1))};
  };
  t["Gemm"] = convertGemm;
  t["Conv"] = convertConv;
  t["ConvTranspose"] = convertConvTranspose;
  t["MaxPool"] = [](NodeContext &nc) { return convertPool(nc, true); };
  t["AveragePool"] = [](NodeContext &nc) { return convertPool(nc, false); };
  t["Einsum"] = convertEinsum;
}

/// Data movement and quantization.
void addMovementConverters(llvm::StringMap<Converter> &t) {
  // Data movement.
  t["Reshape"] = convertReshape;
  t["Flatten"] = convertFlatten;
  t["Squeeze"] = convertSqueeze;
  t["Unsqueeze"] = convertUnsqueeze;
  t["Transpose"] = convertTranspose;
  t["Concat"] = convertConcat;
  t["Split"] = convertSplit;
  t["Slice"] = convertSlice;
  t["Gather"] = [](NodeContext &nc) {
    return gatherLike<GatherOp>(nc, "axis");
  };
  t["GatherElements"] = [](NodeContext &nc) {
    return gatherLike<GatherElementsOp>(nc, "axis");
  };
  t["GatherND"] = convertGatherND;
  t["ScatterND"] = convertScatterND;
  t["ScatterElements"] = convertScatterElements;
  t["Scatter"] = convertScatterElements;
  t["Expand"] = convertExpand;
  t["Tile"] = convertTile;
  t["Pad"] = convertPad;
  t["TopK"] = convertTopK;
  t["Trilu"] = convertTrilu;
  t["Resize"] = convertResize;
  t["Upsample"] = convertResize;
  t["DepthToSpace"] = convertDepthToSpace;
  t["SpaceToDepth"] = convertSpaceToDepth;
  t["OneHot"] = convertOneHot;
  t["QuantizeLinear"] = convertQuantize;
  t["DequantizeLinear"] = convertDequantize;
}

/// Ops folded to constants at import.
void addFoldedConverters(llvm::StringMap<Converter> &t) {
  // Folded at import.
  t["Shape"] = convertShape;
  t["Size"] = convertSize;
  t["ConstantOfShape"] = convertConstantOfShape;
  t["Constant"] = convertConstant;
  t["Range"] = convertRange;
  t["EyeLike"] = convertEyeLike;
}

const llvm::StringMap<Converter> &registry() {
  static const llvm::StringMap<Converter> table = [] {
    llvm::StringMap<Converter> t;
    addComposedConverters(t);
    addRecurrentConverters(t);
    addControlFlowConverters(t);
    addValueDependentConverters(t);
    addUnaryConverters(t);
    addBinaryConverters(t);
    addReductionConverters(t);
    addLinearAlgebraConverters(t);
    addMovementConverters(t);
    addFoldedConverters(t);
    return t;
  }();
  return table;
}

} // namespace

const Converter *lookupConverter(const std::string &opType) {
  auto it = registry().find(opType);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> converterNames() {
  std::vector<std::string> names;
  for (const auto &e : registry())
    names.push_back(e.getKey().str());
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace loom::onnx_import
