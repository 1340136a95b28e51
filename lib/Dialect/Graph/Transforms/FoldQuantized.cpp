//===- FoldQuantized.cpp - Quantized patterns into int8 matrix anchors ----===//
//
// The importer writes ONNX's quantized ops in plain graph ops:
// DequantizeLinear is cast(q) - zero_point, times scale; QuantizeLinear is
// round(x / scale) + zero_point, saturated, cast; MatMulInteger and
// QLinearMatMul centre their 8-bit operands in int32, QLinearConv and
// ConvInteger in f64. This pass finds a matmul or conv each of whose two
// operands is such an 8-bit value (centred, and for QDQ dequantized with
// a constant scale, possibly through a transpose) and rewrites it as the
// int8 kernel's anchor: the same graph.matmul or graph.conv, reading the
// 8-bit tensors themselves, with the zero points as attributes
// (lhs_zero_point / rhs_zero_point, input_zero_point / weight_zero_point)
// and an int32 result, the exact integer sum. What follows it, the
// cast back, the product of the two scales (per tensor, or per output
// channel), a float bias, and the next QuantizeLinear's rounding and
// saturation, stays as elementwise ops, which graph-form-kernels puts in
// the anchor's kernel as its epilogue; graph-precision-policy marks the
// kernel int8.
//
// A QDQ conv's int32 bias (DequantizeLinear of an int32 tensor at the
// scale x_scale * w_scale, as ONNX's QDQ format writes it) and
// QLinearConv's bias join the integer sum, as ONNX Runtime adds them.
//
// Not folded (the pattern stays as fp32 or integer graph ops, which
// compute the same values): per-axis zero points that differ, a scale that
// varies along the contracted axis or is not a constant, an activation
// scale that is not per tensor, operands of rank < 2.
//
//===----------------------------------------------------------------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Reference/Evaluator.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <cmath>
#include <optional>

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHFOLDQUANTIZED
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

namespace {
using mlir::Value;

mlir::RankedTensorType typeOf(Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

bool isEightBit(Value v) {
  auto t = llvm::dyn_cast<mlir::IntegerType>(typeOf(v).getElementType());
  return t && t.getWidth() == 8;
}

/// The value of `v` when it is computed from constants only (through
/// reshapes, casts and the like, evaluated by the golden reference), up to
/// `depth` ops deep; nullopt otherwise.
std::optional<rt::Tensor> constantOf(Value v, int depth = 6) {
  mlir::Operation *def = v.getDefiningOp();
  if (!def || depth < 0)
    return std::nullopt;
  if (auto c = llvm::dyn_cast<ConstantOp>(def)) {
    std::string error;
    return tryTensorFromAttr(c.getValue(), error);
  }
  if (!llvm::isa_and_nonnull<GraphDialect>(def->getDialect()) ||
      def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      typeOf(v).getNumElements() > 4096)
    return std::nullopt;
  std::vector<rt::Tensor> operands;
  for (Value o : def->getOperands()) {
    std::optional<rt::Tensor> t = constantOf(o, depth - 1);
    if (!t)
      return std::nullopt;
    operands.push_back(std::move(*t));
  }
  OpEvalResult r = evaluateOp(def, operands);
  if (!r.ok() || r.results.size() != 1)
    return std::nullopt;
  return std::move(r.results[0]);
}

/// The one value every element of `t` has, if they are all equal and
/// whole; nullopt otherwise.
std::optional<int64_t> uniformInteger(const rt::Tensor &t) {
  std::optional<int64_t> v;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double d = t.getDouble(i);
    if (d != std::floor(d) || (v && *v != static_cast<int64_t>(d)))
      return std::nullopt;
    v = static_cast<int64_t>(d);
  }
  return v ? v : std::optional<int64_t>(0);
}

/// One operand of a matrix op, traced back to an 8-bit tensor.
struct Quantized {
  Value q;               ///< the int8 or uint8 tensor
  int64_t zero = 0;      ///< its zero point (one for the whole tensor)
  Value scale;           ///< the dequantizing scale (broadcast), or null
  llvm::SmallVector<int64_t> perm; ///< a transpose between, when there is one
  /// The shape of a reshape between (a Flatten's), when there is one: the
  /// scale is then per tensor.
  std::optional<llvm::SmallVector<int64_t>> reshape;
};

/// Why an operand did not trace, for the warning (empty: not quantized).
struct Trace {
  std::optional<Quantized> q;
  std::string why;
};

bool allOnes(Value v) {
  return llvm::all_of(typeOf(v).getShape(), [](int64_t d) { return d == 1; });
}

/// Traces `v`: [transpose or reshape] ( [mul by a constant scale] ([sub a
/// constant zero point] (cast of an 8-bit tensor)) ).
Trace trace(Value v, bool allowTranspose) {
  Trace t;
  Quantized q;
  if (auto tr = v.getDefiningOp<TransposeOp>(); tr && allowTranspose) {
    q.perm.assign(tr.getPerm().begin(), tr.getPerm().end());
    v = tr.getInput();
  } else if (auto r = v.getDefiningOp<ReshapeOp>()) {
    q.reshape.emplace(typeOf(v).getShape());
    v = r.getInput();
  }
  if (auto mul = v.getDefiningOp<MulOp>();
      mul && llvm::isa<mlir::FloatType>(typeOf(v).getElementType())) {
    for (int side = 0; side < 2; ++side) {
      Value s = mul->getOperand(side), x = mul->getOperand(1 - side);
      if (typeOf(x) != typeOf(v) || !constantOf(s))
        continue;
      q.scale = s;
      v = x;
      break;
    }
  }
  std::optional<rt::Tensor> zero;
  if (auto sub = v.getDefiningOp<SubOp>()) {
    zero = constantOf(sub.getRhs());
    if (!zero || typeOf(sub.getLhs()) != typeOf(v))
      return t;
    v = sub.getLhs();
  }
  auto cast = v.getDefiningOp<CastOp>();
  if (!cast || !isEightBit(cast.getInput()))
    return t;
  q.q = cast.getInput();
  if (q.reshape && q.scale && !allOnes(q.scale)) {
    t.why = "a per-axis scale through a reshape";
    return t;
  }
  if (zero) {
    std::optional<int64_t> z = uniformInteger(*zero);
    if (!z) {
      t.why = "per-axis zero points that differ";
      return t;
    }
    q.zero = *z;
  }
  t.q = q;
  return t;
}

/// The shape of `v` with dimension `axis` (counted from the end of a rank
/// `rank` tensor it broadcasts to) read as 1 when `v` has no such dim.
int64_t dimFromEnd(Value v, int64_t fromEnd) {
  auto s = typeOf(v).getShape();
  int64_t i = static_cast<int64_t>(s.size()) - fromEnd;
  return i < 0 ? 1 : s[i];
}

struct GraphFoldQuantizedPass
    : impl::GraphFoldQuantizedBase<GraphFoldQuantizedPass> {
  using Base::Base;

  mlir::RankedTensorType withElt(Value v, mlir::Type elt) {
    return mlir::RankedTensorType::get(typeOf(v).getShape(), elt);
  }

  /// `q` as the operand of the new anchor: the 8-bit tensor, transposed
  /// when the old operand was.
  Value operandOf(mlir::OpBuilder &b, mlir::Location loc, const Quantized &q) {
    if (q.reshape)
      return ReshapeOp::create(
          b, loc,
          mlir::RankedTensorType::get(*q.reshape, typeOf(q.q).getElementType()),
          q.q);
    if (q.perm.empty())
      return q.q;
    auto in = typeOf(q.q).getShape();
    llvm::SmallVector<int64_t> shape;
    for (int64_t p : q.perm)
      shape.push_back(in[p]);
    return TransposeOp::create(
        b, loc, mlir::RankedTensorType::get(shape, typeOf(q.q).getElementType()),
        q.q, b.getDenseI64ArrayAttr(q.perm));
  }

  /// A scale as it applies after `q.perm` (transposed with it).
  Value scaleOf(mlir::OpBuilder &b, mlir::Location loc, const Quantized &q) {
    if (q.reshape && q.scale)
      return ReshapeOp::create(
          b, loc,
          mlir::RankedTensorType::get({}, typeOf(q.scale).getElementType()),
          q.scale);
    if (!q.scale || q.perm.empty() ||
        typeOf(q.scale).getRank() != static_cast<int64_t>(q.perm.size()))
      return q.scale;
    auto in = typeOf(q.scale).getShape();
    llvm::SmallVector<int64_t> shape;
    for (int64_t p : q.perm)
      shape.push_back(in[p]);
    return TransposeOp::create(
        b, loc,
        mlir::RankedTensorType::get(shape, typeOf(q.scale).getElementType()),
        q.scale, b.getDenseI64ArrayAttr(q.perm));
  }

  /// a * b with numpy broadcasting (either may be null).
  Value mulOf(mlir::OpBuilder &b, mlir::Location loc, Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    llvm::SmallVector<int64_t> shape;
    auto xs = typeOf(x).getShape(), ys = typeOf(y).getShape();
    size_t rank = std::max(xs.size(), ys.size());
    for (size_t i = 0; i < rank; ++i) {
      int64_t dx = i + xs.size() >= rank ? xs[i + xs.size() - rank] : 1;
      int64_t dy = i + ys.size() >= rank ? ys[i + ys.size() - rank] : 1;
      shape.push_back(dx == 1 ? dy : dx);
    }
    return MulOp::create(
        b, loc, mlir::RankedTensorType::get(shape, typeOf(x).getElementType()),
        x, y);
  }

  /// cast(acc) to `old`'s element type, times `scale`, plus `bias`: what
  /// replaces the old anchor's result.
  Value epilogue(mlir::OpBuilder &b, mlir::Location loc, Value acc, Value old,
                 Value scale, Value bias) {
    Value y = acc;
    mlir::Type elt = typeOf(old).getElementType();
    if (typeOf(acc).getElementType() != elt)
      y = CastOp::create(b, loc, withElt(acc, elt), acc);
    if (scale) {
      if (typeOf(scale).getElementType() != elt)
        scale = CastOp::create(b, loc, withElt(scale, elt), scale);
      y = MulOp::create(b, loc, typeOf(y), y, scale);
    }
    if (bias)
      y = AddOp::create(b, loc, typeOf(y), y, bias);
    return y;
  }

  void warn(mlir::Operation *op, const std::string &why) {
    op->emitWarning() << "graph-fold-quantized: not run as int8 (" << why
                      << "); it computes in " << typeOf(op->getResult(0)).getElementType();
  }

  void foldMatMul(MatMulOp mm) {
    Trace ta = trace(mm.getLhs(), true), tb = trace(mm.getRhs(), true);
    if (!ta.q || !tb.q) {
      if ((ta.q || !ta.why.empty()) && (tb.q || !tb.why.empty()))
        warn(mm, ta.why.empty() ? tb.why : ta.why);
      return;
    }
    const Quantized &a = *ta.q, &b8 = *tb.q;
    int64_t ra = typeOf(mm.getLhs()).getRank(),
            rb = typeOf(mm.getRhs()).getRank();
    if (ra < 2 || rb < 2)
      return warn(mm, "an operand of rank 1");
    mlir::OpBuilder b(mm);
    mlir::Location loc = mm.getLoc();
    Value sa = scaleOf(b, loc, a), sb = scaleOf(b, loc, b8);
    // A scale must not vary along the contracted axis: lhs's last, rhs's
    // second last.
    if ((sa && dimFromEnd(sa, 1) != 1) || (sb && dimFromEnd(sb, 2) != 1))
      return warn(mm, "a scale that varies along the contracted axis");
    Value lhs = operandOf(b, loc, a), rhs = operandOf(b, loc, b8);
    auto acc = MatMulOp::create(b, loc, withElt(mm.getOutput(), b.getI32Type()),
                                lhs, rhs);
    acc->setAttr("lhs_zero_point", b.getI64IntegerAttr(a.zero));
    acc->setAttr("rhs_zero_point", b.getI64IntegerAttr(b8.zero));
    for (auto attr : mm->getDiscardableAttrs())
      acc->setAttr(attr.getName(), attr.getValue());
    Value y = epilogue(b, loc, acc, mm.getOutput(), mulOf(b, loc, sa, sb),
                       Value());
    mm.getOutput().replaceAllUsesWith(y);
    mm->erase();
    ++folded;
  }

  /// The int32 tensor of a bias dequantized at `scale` (its scale equal
  /// to `scale` element for element), or the cast's input of an f64 bias
  /// of QLinearConv; null when it is neither.
  Value integerBias(Value bias, const std::optional<rt::Tensor> &scale) {
    Value v = bias;
    std::optional<rt::Tensor> s;
    if (auto mul = v.getDefiningOp<MulOp>()) {
      s = constantOf(mul.getRhs());
      v = mul.getLhs();
    }
    auto cast = v.getDefiningOp<CastOp>();
    if (!cast)
      return Value();
    auto it = llvm::dyn_cast<mlir::IntegerType>(
        typeOf(cast.getInput()).getElementType());
    if (!it || it.getWidth() != 32)
      return Value();
    if (s.has_value() != scale.has_value())
      return Value();
    if (s) {
      int64_t n = std::max(s->numElements(), scale->numElements());
      if ((s->numElements() != 1 && s->numElements() != n) ||
          (scale->numElements() != 1 && scale->numElements() != n))
        return Value();
      for (int64_t i = 0; i < n; ++i) {
        double x = s->getDouble(s->numElements() == 1 ? 0 : i),
               y = scale->getDouble(scale->numElements() == 1 ? 0 : i);
        if (std::abs(x - y) > 1e-6 * std::abs(y))
          return Value();
      }
    }
    return cast.getInput();
  }

  void foldConv(ConvOp conv) {
    Trace tx = trace(conv.getInput(), false), tw = trace(conv.getWeight(), false);
    if (!tx.q || !tw.q) {
      if ((tx.q || !tx.why.empty()) && (tw.q || !tw.why.empty()))
        warn(conv, tx.why.empty() ? tw.why : tx.why);
      return;
    }
    const Quantized &x = *tx.q, &w = *tw.q;
    // x's scale per tensor; w's per output channel (axis 0) at most.
    if (x.scale && !allOnes(x.scale))
      return warn(conv, "an input scale that is not per tensor");
    int64_t rank = typeOf(conv.getWeight()).getRank();
    Value sw = w.scale;
    if (sw) {
      auto s = typeOf(sw).getShape();
      bool perChannel = static_cast<int64_t>(s.size()) == rank &&
                        llvm::all_of(s.drop_front(), [](int64_t d) { return d == 1; });
      if (!allOnes(sw) && !perChannel)
        return warn(conv, "a weight scale along an axis other than 0");
    }
    mlir::OpBuilder b(conv);
    mlir::Location loc = conv.getLoc();
    // The result's scale: x's times w's, w's per channel moved to axis 1
    // of the result ([M, 1, ...] of rank - 1).
    Value scale = x.scale;
    std::optional<rt::Tensor> scaleValues;
    if (sw) {
      Value swr = sw;
      if (!allOnes(sw)) {
        llvm::SmallVector<int64_t> shape(rank - 1, 1);
        shape[0] = typeOf(sw).getDimSize(0);
        swr = ReshapeOp::create(
            b, loc, mlir::RankedTensorType::get(shape, typeOf(sw).getElementType()),
            sw);
      }
      scale = mulOf(b, loc, scale, swr);
    }
    if (scale) {
      std::optional<rt::Tensor> xs = constantOf(x.scale ? x.scale : scale),
                                ws = constantOf(sw ? sw : scale);
      if (xs && ws) {
        rt::Tensor t(rt::DType::F64, {std::max(xs->numElements(), ws->numElements())});
        for (int64_t i = 0; i < t.numElements(); ++i)
          t.setDouble(i, (x.scale ? xs->getDouble(xs->numElements() == 1 ? 0 : i) : 1.0) *
                             (sw ? ws->getDouble(ws->numElements() == 1 ? 0 : i) : 1.0));
        scaleValues = std::move(t);
      }
    }
    Value bias = conv.getBias(), intBias, floatBias;
    if (bias) {
      intBias = integerBias(bias, scaleValues);
      if (!intBias) {
        // A float bias after the scale: [M] as [M, 1, ...].
        llvm::SmallVector<int64_t> shape(rank - 1, 1);
        shape[0] = typeOf(bias).getDimSize(0);
        floatBias = ReshapeOp::create(
            b, loc,
            mlir::RankedTensorType::get(shape, typeOf(bias).getElementType()),
            bias);
      }
    }
    auto acc = ConvOp::create(
        b, loc, withElt(conv.getOutput(), b.getI32Type()), x.q, w.q, intBias,
        conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPadsAttr(),
        conv.getGroupAttr());
    acc->setAttr("input_zero_point", b.getI64IntegerAttr(x.zero));
    acc->setAttr("weight_zero_point", b.getI64IntegerAttr(w.zero));
    for (auto attr : conv->getDiscardableAttrs())
      acc->setAttr(attr.getName(), attr.getValue());
    Value y = epilogue(b, loc, acc, conv.getOutput(), scale, floatBias);
    conv.getOutput().replaceAllUsesWith(y);
    conv->erase();
    ++folded;
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::Operation *> anchors;
    getOperation().walk([&](mlir::Operation *op) {
      if (llvm::isa<MatMulOp, ConvOp>(op) &&
          !op->getParentOfType<KernelOp>() &&
          !isEightBit(op->getOperand(0)))
        anchors.push_back(op);
    });
    for (mlir::Operation *op : anchors) {
      if (auto mm = llvm::dyn_cast<MatMulOp>(op))
        foldMatMul(mm);
      else
        foldConv(llvm::cast<ConvOp>(op));
    }
  }
};
} // namespace
} // namespace loom::graph
