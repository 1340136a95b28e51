//===- ComposedConverters.cpp - ONNX ops written with other graph ops -----===//
//
// Converters of ONNX operators that need no graph op of their own: each is
// spelled out in existing graph ops (elementwise arithmetic, slices,
// concatenations, gathers), so every later pass and the compiled path
// handle them with no further code.
//
//===----------------------------------------------------------------------===//
#include "ConvertHelpers.h"

#include "loom/Dialect/Graph/IR/Graph.h"

#include <cmath>

using namespace mlir;
using namespace loom::graph;

namespace loom::onnx_import {
namespace {

/// Elementwise arithmetic on one node's values, with scalars of a value's
/// element type.
struct Arith {
  NodeContext &nc;
  Value add(Value a, Value b) { return binaryOp<AddOp>(nc, a, b); }
  Value sub(Value a, Value b) { return binaryOp<SubOp>(nc, a, b); }
  Value mul(Value a, Value b) { return binaryOp<MulOp>(nc, a, b); }
  Value div(Value a, Value b) { return binaryOp<DivOp>(nc, a, b); }
  Value sqrt(Value a) { return nc.create<SqrtOp>(a.getType(), a); }
  Value scalar(Value like, double v) { return nc.scalarLike(like, v); }
  Value scale(Value a, double v) { return mul(a, scalar(a, v)); }
};

//===----------------------------------------------------------------------===//
// Training optimizers (domain ai.onnx.preview.training)
//===----------------------------------------------------------------------===//

/// The learning rate R and update count T of an optimizer: scalars that
/// must be known when the model is imported (with `loom eval`, the values
/// given).
std::pair<double, int64_t> rateAndCount(NodeContext &nc) {
  rt::Tensor r = nc.requireConstant(0, "the learning rate R");
  rt::Tensor t = nc.requireConstant(1, "the update count T");
  if (r.numElements() != 1 || t.numElements() != 1)
    nc.fail("R and T must each hold one value");
  return {r.getDouble(0), t.getInt(0)};
}

/// The number of optimized tensors: (inputs - 2) / `perTensor`, with one
/// output per tensor and state.
int64_t optimizedTensors(NodeContext &nc, int64_t perTensor) {
  int64_t n = static_cast<int64_t>(nc.node.input_size()) - 2;
  if (n <= 0 || n % perTensor != 0 ||
      nc.node.output_size() != (n / perTensor) * (perTensor - 1))
    nc.fail("expects R, T and " + std::to_string(perTensor) +
            " inputs per optimized tensor, with " +
            std::to_string(perTensor - 1) + " outputs each");
  return n / perTensor;
}

// ONNX's pseudo code, for each tensor X with gradient G and accumulated
// squared gradient H:
//   r = R / (1 + T * decay_factor); G' = norm_coefficient * X + G
//   H_new = H + G' * G'; X_new = X - r * G' / (sqrt(H_new) + epsilon)
Values convertAdagrad(NodeContext &nc) {
  auto [rate, count] = rateAndCount(nc);
  int64_t n = optimizedTensors(nc, 3);
  double decay = nc.floatAttr("decay_factor", 0.0);
  double eps = nc.floatAttr("epsilon", 1e-6);
  double norm = nc.floatAttr("norm_coefficient", 0.0);
  double r = rate / (1 + static_cast<double>(count) * decay);
  Arith a{nc};
  Values xs, hs;
  for (int64_t i = 0; i < n; ++i) {
    Value x = nc.input(2 + i), g = nc.input(2 + n + i),
          h = nc.input(2 + 2 * n + i);
    Value gr = a.add(a.scale(x, norm), g);
    Value hNew = a.add(h, a.mul(gr, gr));
    Value adaptive = a.add(a.sqrt(hNew), a.scalar(hNew, eps));
    xs.push_back(a.sub(x, a.div(a.scale(gr, r), adaptive)));
    hs.push_back(hNew);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

// For each X with gradient G and momentum V:
//   G' = norm_coefficient * X + G; beta' = T > 0 ? beta : 1
//   V_new = alpha * V + beta' * G'
//   standard: X_new = X - R * V_new; nesterov: X - R * (G' + alpha * V_new)
Values convertMomentum(NodeContext &nc) {
  auto [rate, count] = rateAndCount(nc);
  int64_t n = optimizedTensors(nc, 3);
  double alpha = nc.floatAttr("alpha", 0), beta = nc.floatAttr("beta", 0);
  double norm = nc.floatAttr("norm_coefficient", 0);
  std::string mode = nc.stringAttr("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    nc.fail("mode must be 'standard' or 'nesterov', not '" + mode + "'");
  double betaAdjusted = count > 0 ? beta : 1.0;
  Arith a{nc};
  Values xs, vs;
  for (int64_t i = 0; i < n; ++i) {
    Value x = nc.input(2 + i), g = nc.input(2 + n + i),
          v = nc.input(2 + 2 * n + i);
    Value gr = a.add(a.scale(x, norm), g);
    Value vNew = a.add(a.scale(v, alpha), a.scale(gr, betaAdjusted));
    Value step = mode == "standard" ? vNew : a.add(gr, a.scale(vNew, alpha));
    xs.push_back(a.sub(x, a.scale(step, rate)));
    vs.push_back(vNew);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

// For each X with gradient G, averaged gradient V and squared gradient H:
//   G' = norm_coefficient * X + G
//   V_new = alpha * V + (1 - alpha) * G'
//   H_new = beta * H + (1 - beta) * G' * G'
//   R' = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
//   X_new = (1 - norm_coefficient_post) * (X - R' * V_new / (sqrt(H_new) +
//   epsilon))
Values convertAdam(NodeContext &nc) {
  auto [rate, count] = rateAndCount(nc);
  int64_t n = optimizedTensors(nc, 4);
  double alpha = nc.floatAttr("alpha", 0.9), beta = nc.floatAttr("beta", 0.999);
  double eps = nc.floatAttr("epsilon", 1e-6);
  double norm = nc.floatAttr("norm_coefficient", 0);
  double post = nc.floatAttr("norm_coefficient_post", 0);
  double t = static_cast<double>(count);
  double r = count > 0 ? rate * std::sqrt(1 - std::pow(beta, t)) /
                             (1 - std::pow(alpha, t))
                       : rate;
  Arith a{nc};
  Values xs, vs, hs;
  for (int64_t i = 0; i < n; ++i) {
    Value x = nc.input(2 + i), g = nc.input(2 + n + i),
          v = nc.input(2 + 2 * n + i), h = nc.input(2 + 3 * n + i);
    Value gr = a.add(a.scale(x, norm), g);
    Value vNew = a.add(a.scale(v, alpha), a.scale(gr, 1 - alpha));
    Value hNew = a.add(a.scale(h, beta), a.scale(a.mul(gr, gr), 1 - beta));
    Value denom = a.add(a.sqrt(hNew), a.scalar(hNew, eps));
    Value xNew = a.sub(x, a.div(a.scale(vNew, r), denom));
    xs.push_back(post != 0 ? a.scale(xNew, 1 - post) : xNew);
    vs.push_back(vNew);
    hs.push_back(hNew);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

//===----------------------------------------------------------------------===//
// Activations of opsets 18 and 20
//===----------------------------------------------------------------------===//

void requireOpset(NodeContext &nc, int64_t since) {
  if (nc.opset < since)
    nc.fail("'" + nc.node.op_type() + "' is an operator of opset " +
            std::to_string(since) + " and later; the model imports opset " +
            std::to_string(nc.opset));
}

// Mish (opset 18): x * tanh(softplus(x)).
Values convertMish(NodeContext &nc) {
  requireOpset(nc, 18);
  Value x = nc.input(0);
  Value sp = nc.create<SoftplusOp>(x.getType(), x);
  return {binaryOp<MulOp>(nc, x, nc.create<TanhOp>(x.getType(), sp))};
}

// Gelu (opset 20): 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh"
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
Values convertGelu(NodeContext &nc) {
  requireOpset(nc, 20);
  Value x = nc.input(0);
  Arith a{nc};
  std::string approximate = nc.stringAttr("approximate", "none");
  Value inner;
  if (approximate == "none") {
    inner = nc.create<ErfOp>(x.getType(), a.scale(x, 1 / std::sqrt(2.0)));
  } else if (approximate == "tanh") {
    Value cube = a.mul(a.mul(x, x), x);
    Value arg = a.scale(a.add(x, a.scale(cube, 0.044715)), std::sqrt(2 / M_PI));
    inner = nc.create<TanhOp>(x.getType(), arg);
  } else {
    nc.fail("approximate must be 'none' or 'tanh', not '" + approximate + "'");
  }
  Value one = a.add(inner, a.scalar(inner, 1.0));
  return {a.mul(a.scale(x, 0.5), one)};
}

// BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (opset 18): graph.and,
// or, xor and not, which are bitwise on integers.
void requireIntegers(NodeContext &nc) {
  for (size_t i = 0; i < nc.numInputs(); ++i)
    if (!isa<IntegerType>(typeOf(nc.input(i)).getElementType()) ||
        typeOf(nc.input(i)).getElementType().isInteger(1))
      nc.fail("input " + std::to_string(i) + " must hold integers");
}
template <typename OpT> Values convertBitwise(NodeContext &nc) {
  requireOpset(nc, 18);
  requireIntegers(nc);
  return {binaryOp<OpT>(nc, nc.input(0), nc.input(1))};
}
Values convertBitwiseNot(NodeContext &nc) {
  requireOpset(nc, 18);
  requireIntegers(nc);
  Value x = nc.input(0);
  return {nc.create<NotOp>(x.getType(), x)};
}

// CenterCropPad (opset 18): each axis in `axes` (all by default) cropped
// or zero-padded, centred, to the given size; when the difference is odd
// the extra element is cut or added at the end.
Values convertCenterCropPad(NodeContext &nc) {
  requireOpset(nc, 18);
  Value x = nc.input(0);
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  std::vector<int64_t> shape = nc.constantInts(1, "shape");
  std::vector<int64_t> axes = nc.intsAttr("axes");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  if (axes.size() != shape.size())
    nc.fail("shape has " + std::to_string(shape.size()) + " values for " +
            std::to_string(axes.size()) + " axes");
  SmallVector<int64_t> pads(2 * rank, 0), padded(type.getShape());
  bool anyPad = false;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = nc.axis(axes[i], rank), dim = type.getDimSize(a);
    if (shape[i] < 0 || shape[i] > (int64_t(1) << 40))
      nc.fail("shape values must be between 0 and 2^40");
    if (shape[i] < dim) {
      int64_t start = (dim - shape[i]) / 2;
      x = sliceAxis(nc, x, a, start, start + shape[i], 1);
    } else if (shape[i] > dim) {
      pads[a] = (shape[i] - dim) / 2;
      pads[rank + a] = shape[i] - dim - pads[a];
      padded[a] = shape[i];
      anyPad = true;
    }
  }
  if (!anyPad)
    return {x};
  for (int64_t d = 0; d < rank; ++d)
    if (pads[d] == 0 && pads[rank + d] == 0)
      padded[d] = typeOf(x).getDimSize(d);
  return {nc.create<PadOp>(nc.tensorType(padded, type.getElementType()), x,
                           nc.b.getDenseI64ArrayAttr(pads),
                           nc.b.getStringAttr("constant"),
                           nc.b.getF64FloatAttr(0))};
}

// GroupNormalization (opsets 18 and 21): the channels in num_groups groups,
// each normalised over its channels and the spatial axes; then scale and
// bias, per group in opset 18 and per channel from opset 21.
const Refusal &kGroupNormStash =
    declareRefusal("GroupNormalization", "stash_type other than float");

Values convertGroupNorm(NodeContext &nc) {
  requireOpset(nc, 18);
  Value x = nc.input(0);
  auto type = typeOf(x);
  if (type.getRank() < 3)
    nc.fail("X must be [N, C, D1, ...]");
  int64_t groups = nc.intAttr("num_groups", 0);
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  if (groups <= 0 || c % groups != 0)
    nc.fail("num_groups must be positive and divide the " + std::to_string(c) +
            " channels");
  double eps = nc.floatAttr("epsilon", 1e-5);
  if (nc.hasAttr("stash_type") && nc.intAttr("stash_type", 1) != 1)
    nc.refuse(kGroupNormStash);
  bool perChannel = nc.opset >= 21;
  int64_t params = perChannel ? c : groups;
  for (size_t i : {size_t(1), size_t(2)})
    if (typeOf(nc.input(i)).getShape() != ArrayRef<int64_t>{params})
      nc.fail(std::string(i == 1 ? "scale" : "bias") + " must be [" +
              std::to_string(params) +
              (perChannel ? "] (one per channel from opset 21)"
                          : "] (one per group in opset 18)"));
  Arith a{nc};
  int64_t rest = type.getNumElements() / (n * groups);
  Value g = nc.reshape(x, {n, groups, rest});
  Value mean = reduceOp<ReduceMeanOp>(nc, g, {2}, true);
  Value centered = a.sub(g, mean);
  Value var = reduceOp<ReduceMeanOp>(nc, a.mul(centered, centered), {2}, true);
  Value normed = a.div(centered, a.sqrt(a.add(var, a.scalar(var, eps))));
  if (!perChannel) {
    normed = a.add(a.mul(normed, nc.reshape(nc.input(1), {1, groups, 1})),
                   nc.reshape(nc.input(2), {1, groups, 1}));
    return {nc.reshape(normed, type.getShape())};
  }
  Value y = nc.reshape(normed, type.getShape());
  SmallVector<int64_t> along(type.getRank(), 1);
  along[1] = c;
  return {a.add(a.mul(y, nc.reshape(nc.input(1), along)),
                nc.reshape(nc.input(2), along))};
}

//===----------------------------------------------------------------------===//
// Normalisation and sequence ops
//===----------------------------------------------------------------------===//

// LRN: y = x / (bias + alpha / size * s)^beta, where s sums x^2 over the
// channels [c - floor((size-1)/2), c + ceil((size-1)/2)] (clipped to the
// tensor): the squares padded with zeros along the channel axis, then
// `size` shifted slices added.
Values convertLRN(NodeContext &nc) {
  Value x = nc.input(0);
  auto type = typeOf(x);
  if (type.getRank() < 3)
    nc.fail("LRN needs an input of rank 3 or more, [N, C, D1, ...]");
  int64_t size = nc.intAttr("size", 0);
  if (size <= 0 || size > (int64_t(1) << 20))
    nc.fail("size must be positive (and at most 2^20)");
  double alpha = nc.floatAttr("alpha", 1e-4), beta = nc.floatAttr("beta", 0.75),
         bias = nc.floatAttr("bias", 1.0);
  int64_t channels = type.getDimSize(1), rank = type.getRank();
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  Arith a{nc};
  Value squares = a.mul(x, x);
  SmallVector<int64_t> pads(2 * rank, 0), padded(type.getShape());
  pads[1] = before;
  pads[rank + 1] = after;
  padded[1] += before + after;
  Value p =
      nc.create<PadOp>(nc.tensorType(padded, type.getElementType()), squares,
                       nc.b.getDenseI64ArrayAttr(pads),
                       nc.b.getStringAttr("constant"), nc.b.getF64FloatAttr(0));
  Value sum;
  for (int64_t k = 0; k < size; ++k) {
    Value part = sliceAxis(nc, p, 1, k, k + channels, 1);
    sum = sum ? a.add(sum, part) : part;
  }
  Value base = a.add(a.scalar(sum, bias), a.scale(sum, alpha / size));
  Value denom = binaryOp<PowOp>(nc, base, a.scalar(base, beta));
  return {a.div(x, denom)};
}

// ReverseSequence: the first sequence_lens[b] steps of each batch entry b
// reversed along time_axis, the rest left in place: a gather of each
// element with constant indices (sequence_lens must be a constant; with
// `loom eval`, the value given).
Values convertReverseSequence(NodeContext &nc) {
  Value x = nc.input(0);
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  if (rank < 2)
    nc.fail("ReverseSequence needs an input of rank 2 or more");
  int64_t timeAxis = nc.intAttr("time_axis", 0);
  int64_t batchAxis = nc.intAttr("batch_axis", 1);
  if ((timeAxis != 0 && timeAxis != 1) || (batchAxis != 0 && batchAxis != 1) ||
      timeAxis == batchAxis)
    nc.fail("time_axis and batch_axis must be 0 and 1, one each");
  rt::Tensor lens = nc.requireConstant(1, "sequence_lens");
  int64_t steps = type.getDimSize(timeAxis), batch = type.getDimSize(batchAxis);
  if (lens.numElements() != batch)
    nc.fail("sequence_lens has " + std::to_string(lens.numElements()) +
            " values for a batch of " + std::to_string(batch));
  for (int64_t b = 0; b < batch; ++b)
    if (lens.getInt(b) < 0 || lens.getInt(b) > steps)
      nc.fail("sequence_lens[" + std::to_string(b) +
              "] = " + std::to_string(lens.getInt(b)) + " is outside [0, " +
              std::to_string(steps) + "]");
  rt::Shape shape(type.getShape().begin(), type.getShape().end());
  rt::Tensor index(rt::DType::I64, shape);
  int64_t inner = 1;
  for (int64_t d = 2; d < rank; ++d)
    inner *= shape[d];
  for (int64_t i = 0; i < index.numElements(); ++i) {
    int64_t outer = i / inner;
    int64_t first = outer / shape[1], second = outer % shape[1];
    int64_t t = timeAxis == 0 ? first : second;
    int64_t b = batchAxis == 0 ? first : second;
    int64_t len = lens.getInt(b);
    index.setInt(i, t < len ? len - 1 - t : t);
  }
  return {nc.create<GatherElementsOp>(type, x, nc.constant(index),
                                      nc.b.getI64IntegerAttr(timeAxis))};
}

//===----------------------------------------------------------------------===//
// Integer and quantized linear algebra
//===----------------------------------------------------------------------===//
//
// Written in the reference's exact arithmetic: the zero points subtracted
// in a wide type, the products accumulated exactly (int32 matmul; f64
// convolution, exact for 8-bit operands), and for the QLinear ops the
// accumulator scaled by a_scale * b_scale / y_scale, rounded half to even,
// offset by y's zero point and saturated. This is the golden reference's
// form; the compiled path runs it as the same graph ops (not yet as int8
// matrix kernels).

Value castTo(NodeContext &nc, Value v, Type elt) {
  auto t = typeOf(v);
  if (t.getElementType() == elt)
    return v;
  return nc.create<CastOp>(nc.tensorType(t.getShape(), elt), v);
}

const Refusal &kQuantParamRank =
    declareRefusal("QLinearMatMul,QLinearConv,MatMulInteger,ConvInteger",
                   "quantisation parameters of rank > 1");
const Refusal &kNotEightBit =
    declareRefusal("QLinearMatMul,QLinearConv,MatMulInteger,ConvInteger",
                   "operands of a type other than int8 or uint8");
const Refusal &kPerAxisOutputScale =
    declareRefusal("QLinearMatMul,QLinearConv", "a per-axis output scale");

/// A quantisation parameter (scale or zero point) of input `i`, reshaped
/// to broadcast along `axis` of a rank-`rank` tensor when it is 1-D with
/// more than one value.
Value quantParam(NodeContext &nc, size_t i, int64_t axis, int64_t rank) {
  Value p = nc.input(i);
  auto t = typeOf(p);
  if (t.getRank() > 1)
    nc.refuse(kQuantParamRank, "input " + std::to_string(i));
  if (t.getRank() == 0 || t.getDimSize(0) == 1)
    return t.getRank() == 0 ? p : nc.reshape(p, {});
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = t.getDimSize(0);
  return nc.reshape(p, shape);
}

/// Input `x` minus its zero point (input `zp`, if given), in type `wide`.
Value centered(NodeContext &nc, size_t x, size_t zp, Type wide, int64_t axis) {
  Value v = castTo(nc, nc.input(x), wide);
  if (!nc.hasInput(zp))
    return v;
  int64_t rank = typeOf(v).getRank();
  return binaryOp<SubOp>(nc, v,
                         castTo(nc, quantParam(nc, zp, axis, rank), wide));
}

void checkEightBit(NodeContext &nc, size_t i) {
  auto t = dyn_cast<IntegerType>(typeOf(nc.input(i)).getElementType());
  if (!t || t.getWidth() != 8)
    nc.refuse(kNotEightBit, "input " + std::to_string(i));
}

/// saturate(round_half_even(acc * scale) + zero_point) in `qt` (8 bits).
Value requantize(NodeContext &nc, Value acc, Value scale, Value zeroPoint,
                 Type qt) {
  Value q = nc.create<RoundOp>(acc.getType(), binaryOp<MulOp>(nc, acc, scale));
  if (zeroPoint)
    q = binaryOp<AddOp>(nc, q,
                        castTo(nc, zeroPoint, typeOf(q).getElementType()));
  bool isUnsigned = cast<IntegerType>(qt).isUnsigned();
  q = binaryOp<MaxOp>(nc, q, nc.scalarLike(q, isUnsigned ? 0 : -128));
  q = binaryOp<MinOp>(nc, q, nc.scalarLike(q, isUnsigned ? 255 : 127));
  return castTo(nc, q, qt);
}

/// A batched matrix product of operands of rank 2 or more.
Value matmulOf(NodeContext &nc, Value a, Value b) {
  auto as = typeOf(a).getShape(), bs = typeOf(b).getShape();
  if (as.size() < 2 || bs.size() < 2 || as.back() != bs[bs.size() - 2])
    nc.fail("operands of shapes that do not multiply (rank 2 or more, "
            "with the same inner dimension)");
  SmallVector<int64_t> shape =
      broadcastShape(nc, as.drop_back(2), bs.drop_back(2));
  shape.push_back(as[as.size() - 2]);
  shape.push_back(bs.back());
  return nc.create<MatMulOp>(nc.tensorType(shape, typeOf(a).getElementType()),
                             a, b);
}

int64_t rankOf(NodeContext &nc, size_t i) {
  return typeOf(nc.input(i)).getRank();
}

// MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) in int32; A's zero
// point may be per row, B's per column.
Values convertMatMulInteger(NodeContext &nc) {
  checkEightBit(nc, 0);
  checkEightBit(nc, 1);
  Type i32 = nc.b.getIntegerType(32);
  Value a = centered(nc, 0, 2, i32, rankOf(nc, 0) - 2),
        b = centered(nc, 1, 3, i32, rankOf(nc, 1) - 1);
  return {matmulOf(nc, a, b)};
}

// ConvInteger: conv(x - x_zero_point, w - w_zero_point) in int32; w's zero
// point may be per output channel.
Values convertConvInteger(NodeContext &nc) {
  checkEightBit(nc, 0);
  checkEightBit(nc, 1);
  Type f64 = nc.b.getF64Type();
  Value x = centered(nc, 0, 2, f64, 1), w = centered(nc, 1, 3, f64, 0);
  Value y = buildConv(nc, x, w, Value());
  return {castTo(nc, y, nc.b.getIntegerType(32))};
}

/// a_scale * b_scale / y_scale for inputs `as`, `bs`, `ys`, each along its
/// axis of a rank-`rank` result.
Value outputScale(NodeContext &nc, size_t as, int64_t aAxis, size_t bs,
                  int64_t bAxis, size_t ys, int64_t rank) {
  Type f64 = nc.b.getF64Type();
  Value sa = castTo(nc, quantParam(nc, as, aAxis, rank), f64);
  Value sb = castTo(nc, quantParam(nc, bs, bAxis, rank), f64);
  Value sy = castTo(nc, quantParam(nc, ys, 0, rank), f64);
  if (typeOf(sy).getRank() != 0)
    nc.refuse(kPerAxisOutputScale);
  return binaryOp<DivOp>(nc, binaryOp<MulOp>(nc, sa, sb), sy);
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
Values convertQLinearMatMul(NodeContext &nc) {
  checkEightBit(nc, 0);
  checkEightBit(nc, 3);
  Type i32 = nc.b.getIntegerType(32), f64 = nc.b.getF64Type();
  Value a = centered(nc, 0, 2, i32, rankOf(nc, 0) - 2),
        b = centered(nc, 3, 5, i32, rankOf(nc, 3) - 1);
  Value acc = castTo(nc, matmulOf(nc, a, b), f64);
  int64_t rank = typeOf(acc).getRank();
  Value scale = outputScale(nc, 1, rank - 2, 4, rank - 1, 6, rank);
  Type qt = typeOf(nc.input(7)).getElementType();
  return {requantize(nc, acc, scale, quantParam(nc, 7, 0, rank), qt)};
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B): B is
// int32, added to the accumulator; w's scale and zero point may be per
// output channel.
Values convertQLinearConv(NodeContext &nc) {
  checkEightBit(nc, 0);
  checkEightBit(nc, 3);
  Type f64 = nc.b.getF64Type();
  Value x = centered(nc, 0, 2, f64, 1), w = centered(nc, 3, 5, f64, 0);
  Value bias = nc.hasInput(8) ? castTo(nc, nc.input(8), f64) : Value();
  Value acc = buildConv(nc, x, w, bias);
  int64_t rank = typeOf(acc).getRank();
  Value scale = outputScale(nc, 1, 1, 4, 1, 6, rank);
  Type qt = typeOf(nc.input(7)).getElementType();
  return {requantize(nc, acc, scale, quantParam(nc, 7, 1, rank), qt)};
}

} // namespace

void addComposedConverters(llvm::StringMap<Converter> &t) {
  t["Mish"] = convertMish;
  t["BitwiseAnd"] = convertBitwise<AndOp>;
  t["BitwiseOr"] = convertBitwise<OrOp>;
  t["BitwiseXor"] = convertBitwise<XorOp>;
  t["BitwiseNot"] = convertBitwiseNot;
  t["CenterCropPad"] = convertCenterCropPad;
  t["GroupNormalization"] = convertGroupNorm;
  t["Gelu"] = convertGelu;
  t["MatMulInteger"] = convertMatMulInteger;
  t["ConvInteger"] = convertConvInteger;
  t["QLinearMatMul"] = convertQLinearMatMul;
  t["QLinearConv"] = convertQLinearConv;
  t["Adagrad"] = convertAdagrad;
  t["Momentum"] = convertMomentum;
  t["Adam"] = convertAdam;
  t["LRN"] = convertLRN;
  t["ReverseSequence"] = convertReverseSequence;
}

} // namespace loom::onnx_import
