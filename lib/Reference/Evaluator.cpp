//===- Evaluator.cpp - Golden reference evaluator of the graph dialect ----===//
#include "loom/Reference/Evaluator.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Runtime/Reference.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
namespace rt = loom::rt;
namespace ref = loom::rt::ref;

namespace loom {

std::optional<rt::DType> dtypeFromType(Type t) {
  if (t.isF32()) return rt::DType::F32;
  if (t.isF64()) return rt::DType::F64;
  if (t.isF16()) return rt::DType::F16;
  if (t.isBF16()) return rt::DType::BF16;
  auto it = dyn_cast<IntegerType>(t);
  if (!it)
    return std::nullopt;
  if (it.getWidth() == 1) return rt::DType::Bool;
  bool u = it.isUnsigned();
  switch (it.getWidth()) {
  case 8: return u ? rt::DType::U8 : rt::DType::I8;
  case 16: return u ? rt::DType::U16 : rt::DType::I16;
  case 32: return u ? rt::DType::U32 : rt::DType::I32;
  case 64: return u ? rt::DType::U64 : rt::DType::I64;
  default: return std::nullopt;
  }
}

Type typeFromDType(rt::DType dt, MLIRContext *ctx) {
  Builder b(ctx);
  auto uint = [&](unsigned w) {
    return IntegerType::get(ctx, w, IntegerType::Unsigned);
  };
  switch (dt) {
  case rt::DType::F32: return b.getF32Type();
  case rt::DType::F64: return b.getF64Type();
  case rt::DType::F16: return b.getF16Type();
  case rt::DType::BF16: return b.getBF16Type();
  case rt::DType::I8: return b.getIntegerType(8);
  case rt::DType::I16: return b.getIntegerType(16);
  case rt::DType::I32: return b.getIntegerType(32);
  case rt::DType::I64: return b.getIntegerType(64);
  case rt::DType::U8: return uint(8);
  case rt::DType::U16: return uint(16);
  case rt::DType::U32: return uint(32);
  case rt::DType::U64: return uint(64);
  case rt::DType::Bool: return b.getI1Type();
  }
  return {};
}

rt::Tensor tensorFromAttr(ElementsAttr attr) {
  auto type = cast<RankedTensorType>(attr.getType());
  rt::DType dt = *dtypeFromType(type.getElementType());
  rt::Shape shape(type.getShape().begin(), type.getShape().end());
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      throw rt::Error("constant blob '" + res.getRawHandle().getKey().str() +
                      "' has no data");
    ArrayRef<char> data = blob->getData();
    rt::Tensor t = rt::Tensor::view(dt, shape, data.data(), nullptr);
    if (data.size() != t.byteSize())
      throw rt::Error("constant blob '" + res.getRawHandle().getKey().str() +
                      "' holds " + std::to_string(data.size()) +
                      " bytes, its type needs " + std::to_string(t.byteSize()));
    return t;
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    throw rt::Error("unsupported constant attribute kind");
  rt::Tensor t(dt, shape);
  if (dt == rt::DType::Bool) {
    int64_t i = 0;
    for (bool v : dense.getValues<bool>())
      t.mutableData<bool>()[i++] = v;
    return t;
  }
  ArrayRef<char> raw = dense.getRawData();
  size_t elt = rt::dtypeSize(dt);
  if (dense.isSplat()) {
    for (int64_t i = 0; i < t.numElements(); ++i)
      std::memcpy(static_cast<char *>(t.mutableRaw()) + i * elt, raw.data(),
                  elt);
  } else if (t.byteSize()) {
    std::memcpy(t.mutableRaw(), raw.data(), t.byteSize());
  }
  return t;
}

std::optional<rt::Tensor> tryTensorFromAttr(ElementsAttr attr,
                                            std::string &error) {
  try {
    return tensorFromAttr(attr);
  } catch (const std::exception &e) {
    error = e.what();
    return std::nullopt;
  }
}

ElementsAttr attrFromTensor(const rt::Tensor &t, RankedTensorType type) {
  if (t.dtype() == rt::DType::Bool) {
    SmallVector<bool> bits(t.data<bool>(), t.data<bool>() + t.numElements());
    return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(static_cast<const char *>(t.raw()), t.byteSize()));
}

//===----------------------------------------------------------------------===//
// Per-op evaluation
//===----------------------------------------------------------------------===//

namespace {

/// Evaluates one op; throws rt::Error on failure.
class OpEvaluator {
public:
  OpEvaluator(Operation *op, const std::vector<rt::Tensor> &in)
      : op(op), in(in) {}

  std::vector<rt::Tensor> run();

private:
  rt::Tensor unary(ref::UnaryKind kind, ref::UnaryParams p = {}) {
    return ref::unary(kind, in[0], p);
  }
  rt::Tensor binary(ref::BinaryKind kind) {
    return ref::binary(kind, in[0], in[1]);
  }
  template <typename ReduceOpT>
  rt::Tensor reduce(ReduceOpT r, ref::ReduceKind kind) {
    std::vector<int64_t> axes(r.getAxes().begin(), r.getAxes().end());
    return ref::reduce(kind, in[0], axes, r.getKeepdims());
  }
  rt::Shape resultShape(unsigned i = 0) {
    auto t = cast<RankedTensorType>(op->getResult(i).getType());
    return rt::Shape(t.getShape().begin(), t.getShape().end());
  }
  rt::DType resultDType(unsigned i = 0) {
    auto t = cast<RankedTensorType>(op->getResult(i).getType());
    return *dtypeFromType(t.getElementType());
  }
  /// The operand at `i`, or an empty tensor if the optional operand is absent.
  rt::Tensor optional(Value v) {
    if (!v)
      return rt::Tensor();
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      if (op->getOperand(i) == v)
        return in[i];
    return rt::Tensor();
  }
  static std::vector<int64_t> vec(ArrayRef<int64_t> a) {
    return std::vector<int64_t>(a.begin(), a.end());
  }
  static ref::ScatterReduction reduction(StringRef s) {
    if (s == "add") return ref::ScatterReduction::Add;
    if (s == "mul") return ref::ScatterReduction::Mul;
    if (s == "max") return ref::ScatterReduction::Max;
    if (s == "min") return ref::ScatterReduction::Min;
    return ref::ScatterReduction::None;
  }

  Operation *op;
  const std::vector<rt::Tensor> &in;
};

} // namespace

std::vector<rt::Tensor> OpEvaluator::run() {
  using U = ref::UnaryKind;
  using B = ref::BinaryKind;
  using R = ref::ReduceKind;
  using namespace loom::graph;
  using Results = std::vector<rt::Tensor>;
  auto one = [](rt::Tensor t) { return Results{std::move(t)}; };
  return llvm::TypeSwitch<Operation *, Results>(op)
      .Case([&](ConstantOp c) { return one(tensorFromAttr(c.getValue())); })
      // Unary.
      .Case([&](NegOp) { return one(unary(U::Neg)); })
      .Case([&](AbsOp) { return one(unary(U::Abs)); })
      .Case([&](SqrtOp) { return one(unary(U::Sqrt)); })
      .Case([&](ReciprocalOp) { return one(unary(U::Reciprocal)); })
      .Case([&](ExpOp) { return one(unary(U::Exp)); })
      .Case([&](LogOp) { return one(unary(U::Log)); })
      .Case([&](ErfOp) { return one(unary(U::Erf)); })
      .Case([&](TanhOp) { return one(unary(U::Tanh)); })
      .Case([&](SigmoidOp) { return one(unary(U::Sigmoid)); })
      .Case([&](ReluOp) { return one(unary(U::Relu)); })
      .Case([&](SinOp) { return one(unary(U::Sin)); })
      .Case([&](CosOp) { return one(unary(U::Cos)); })
      .Case([&](TanOp) { return one(unary(U::Tan)); })
      .Case([&](AsinOp) { return one(unary(U::Asin)); })
      .Case([&](AcosOp) { return one(unary(U::Acos)); })
      .Case([&](AtanOp) { return one(unary(U::Atan)); })
      .Case([&](SinhOp) { return one(unary(U::Sinh)); })
      .Case([&](CoshOp) { return one(unary(U::Cosh)); })
      .Case([&](AsinhOp) { return one(unary(U::Asinh)); })
      .Case([&](AcoshOp) { return one(unary(U::Acosh)); })
      .Case([&](AtanhOp) { return one(unary(U::Atanh)); })
      .Case([&](FloorOp) { return one(unary(U::Floor)); })
      .Case([&](CeilOp) { return one(unary(U::Ceil)); })
      .Case([&](RoundOp) { return one(unary(U::Round)); })
      .Case([&](SignOp) { return one(unary(U::Sign)); })
      .Case([&](SoftsignOp) { return one(unary(U::Softsign)); })
      .Case([&](SoftplusOp) { return one(unary(U::Softplus)); })
      .Case([&](NotOp) { return one(unary(U::Not)); })
      .Case([&](HardSwishOp) { return one(unary(U::HardSwish)); })
      .Case([&](IsNaNOp) { return one(unary(U::IsNaN)); })
      .Case([&](IsInfOp o) {
        bool pos = o.getDetectPositive(), neg = o.getDetectNegative();
        U kind = pos && neg ? U::IsInf : pos ? U::IsInfPos : U::IsInfNeg;
        if (!pos && !neg)
          return one(rt::Tensor(rt::DType::Bool, in[0].shape()));
        return one(unary(kind));
      })
      .Case([&](LeakyReluOp o) {
        return one(unary(U::LeakyRelu, {o.getAlpha().convertToDouble()}));
      })
      .Case([&](EluOp o) {
        return one(unary(U::Elu, {o.getAlpha().convertToDouble()}));
      })
      .Case([&](CeluOp o) {
        return one(unary(U::Celu, {o.getAlpha().convertToDouble()}));
      })
      .Case([&](SeluOp o) {
        return one(unary(U::Selu, {o.getAlpha().convertToDouble(), 0,
                                   o.getGamma().convertToDouble()}));
      })
      .Case([&](HardSigmoidOp o) {
        return one(unary(U::HardSigmoid, {o.getAlpha().convertToDouble(),
                                          o.getBeta().convertToDouble()}));
      })
      .Case([&](ThresholdedReluOp o) {
        return one(unary(U::ThresholdedRelu, {o.getAlpha().convertToDouble()}));
      })
      .Case([&](ShrinkOp o) {
        return one(unary(U::Shrink, {o.getLambd().convertToDouble(),
                                     o.getBias().convertToDouble()}));
      })
      .Case([&](CastOp) { return one(ref::cast(in[0], resultDType())); })
      // Binary.
      .Case([&](AddOp) { return one(binary(B::Add)); })
      .Case([&](SubOp) { return one(binary(B::Sub)); })
      .Case([&](MulOp) { return one(binary(B::Mul)); })
      .Case([&](DivOp) { return one(binary(B::Div)); })
      .Case([&](PowOp) { return one(binary(B::Pow)); })
      .Case([&](MinOp) { return one(binary(B::Min)); })
      .Case([&](MaxOp) { return one(binary(B::Max)); })
      .Case([&](ModOp o) { return one(binary(o.getFmod() ? B::FMod : B::Mod)); })
      .Case([&](AndOp) { return one(binary(B::And)); })
      .Case([&](OrOp) { return one(binary(B::Or)); })
      .Case([&](XorOp) { return one(binary(B::Xor)); })
      .Case([&](EqualOp) { return one(binary(B::Equal)); })
      .Case([&](LessOp) { return one(binary(B::Less)); })
      .Case([&](GreaterOp) { return one(binary(B::Greater)); })
      .Case([&](LessEqualOp) { return one(binary(B::LessEqual)); })
      .Case([&](GreaterEqualOp) { return one(binary(B::GreaterEqual)); })
      .Case([&](PReluOp) { return one(binary(B::PRelu)); })
      .Case([&](BitShiftOp o) {
        return one(binary(o.getLeft() ? B::BitShiftLeft : B::BitShiftRight));
      })
      .Case([&](SelectOp) { return one(ref::select(in[0], in[1], in[2])); })
      // Reductions and normalisations.
      .Case([&](ReduceSumOp o) { return one(reduce(o, R::Sum)); })
      .Case([&](ReduceMeanOp o) { return one(reduce(o, R::Mean)); })
      .Case([&](ReduceMaxOp o) { return one(reduce(o, R::Max)); })
      .Case([&](ReduceMinOp o) { return one(reduce(o, R::Min)); })
      .Case([&](ReduceProdOp o) { return one(reduce(o, R::Prod)); })
      .Case([&](ReduceL1Op o) { return one(reduce(o, R::L1)); })
      .Case([&](ReduceL2Op o) { return one(reduce(o, R::L2)); })
      .Case([&](ReduceSumSquareOp o) { return one(reduce(o, R::SumSquare)); })
      .Case([&](ReduceLogSumOp o) { return one(reduce(o, R::LogSum)); })
      .Case([&](ReduceLogSumExpOp o) { return one(reduce(o, R::LogSumExp)); })
      .Case([&](ArgMaxOp o) {
        return one(ref::argMax(in[0], o.getAxis(), o.getKeepdims(),
                               o.getSelectLastIndex()));
      })
      .Case([&](ArgMinOp o) {
        return one(ref::argMin(in[0], o.getAxis(), o.getKeepdims(),
                               o.getSelectLastIndex()));
      })
      .Case([&](SoftmaxOp o) { return one(ref::softmax(in[0], o.getAxis())); })
      .Case([&](LogSoftmaxOp o) {
        return one(ref::logSoftmax(in[0], o.getAxis()));
      })
      .Case([&](HardmaxOp o) { return one(ref::hardmax(in[0], o.getAxis())); })
      .Case([&](CumSumOp o) {
        return one(ref::cumSum(in[0], o.getAxis(), o.getExclusive(),
                               o.getReverse()));
      })
      .Case([&](BatchNormOp o) {
        return one(ref::batchNorm(in[0], in[1], in[2], in[3], in[4],
                                  o.getEpsilon().convertToDouble()));
      })
      .Case([&](LayerNormOp o) {
        return one(ref::layerNorm(in[0], in[1], optional(o.getBias()),
                                  o.getAxis(),
                                  o.getEpsilon().convertToDouble()));
      })
      .Case([&](InstanceNormOp o) {
        return one(ref::instanceNorm(in[0], in[1], in[2],
                                     o.getEpsilon().convertToDouble()));
      })
      // Linear algebra.
      .Case([&](MatMulOp) { return one(ref::matmul(in[0], in[1])); })
      .Case([&](ConvOp o) {
        ref::ConvParams p{vec(o.getStrides()), vec(o.getDilations()),
                          vec(o.getPads()), static_cast<int64_t>(o.getGroup()), {}};
        return one(ref::conv(in[0], in[1], optional(o.getBias()), p));
      })
      .Case([&](ConvTransposeOp o) {
        ref::ConvParams p{vec(o.getStrides()), vec(o.getDilations()),
                          vec(o.getPads()), static_cast<int64_t>(o.getGroup()),
                          vec(o.getOutputPadding())};
        return one(ref::convTranspose(in[0], in[1], optional(o.getBias()), p,
                                      resultShape()));
      })
      .Case([&](MaxPoolOp o) {
        ref::PoolParams p{vec(o.getKernelShape()), vec(o.getStrides()),
                          vec(o.getDilations()), vec(o.getPads()), false};
        if (!o.getIndices())
          return one(ref::maxPool(in[0], p, resultShape()));
        rt::Tensor indices;
        rt::Tensor values = ref::maxPool(in[0], p, resultShape(), &indices);
        return Results{values, indices};
      })
      .Case([&](AvgPoolOp o) {
        ref::PoolParams p{vec(o.getKernelShape()), vec(o.getStrides()),
                          vec(o.getDilations()), vec(o.getPads()),
                          o.getCountIncludePad()};
        return one(ref::avgPool(in[0], p, resultShape()));
      })
      .Case([&](EinsumOp o) {
        return one(ref::einsum(o.getEquation().str(), in));
      })
      // Data movement.
      .Case([&](ReshapeOp) { return one(in[0].reshaped(resultShape())); })
      .Case([&](TransposeOp o) {
        return one(ref::transpose(in[0], vec(o.getPerm())));
      })
      .Case([&](BroadcastToOp) {
        return one(ref::broadcastTo(in[0], resultShape()));
      })
      .Case([&](ConcatOp o) { return one(ref::concat(in, o.getAxis())); })
      .Case([&](SliceOp o) {
        return one(ref::slice(in[0], vec(o.getStarts()), vec(o.getEnds()),
                              vec(o.getAxes()), vec(o.getSteps())));
      })
      .Case([&](GatherOp o) {
        return one(ref::gather(in[0], in[1], o.getAxis()));
      })
      .Case([&](GatherElementsOp o) {
        return one(ref::gatherElements(in[0], in[1], o.getAxis()));
      })
      .Case([&](GatherNDOp o) {
        return one(ref::gatherND(in[0], in[1], o.getBatchDims()));
      })
      .Case([&](ScatterNDOp o) {
        return one(ref::scatterND(in[0], in[1], in[2],
                                  reduction(o.getReduction())));
      })
      .Case([&](ScatterElementsOp o) {
        return one(ref::scatterElements(in[0], in[1], in[2], o.getAxis(),
                                        reduction(o.getReduction())));
      })
      .Case([&](TileOp o) { return one(ref::tile(in[0], vec(o.getRepeats()))); })
      .Case([&](PadOp o) {
        StringRef m = o.getMode();
        ref::PadMode mode = m == "reflect" ? ref::PadMode::Reflect
                            : m == "edge"  ? ref::PadMode::Edge
                            : m == "wrap"  ? ref::PadMode::Wrap
                                           : ref::PadMode::Constant;
        return one(ref::pad(in[0], vec(o.getPads()), mode,
                            o.getValue().convertToDouble()));
      })
      .Case([&](TopKOp o) {
        rt::Tensor values, indices;
        ref::topK(in[0], o.getK(), o.getAxis(), o.getLargest(), o.getSorted(),
                  values, indices);
        return Results{values, indices};
      })
      .Case([&](TriluOp o) {
        return one(ref::trilu(in[0], o.getK(), o.getUpper()));
      })
      .Case([&](ResizeOp o) {
        ref::ResizeParams p;
        p.mode = o.getMode().str();
        p.coordinateTransform = o.getCoordinateTransformationMode().str();
        p.nearestMode = o.getNearestMode().str();
        p.cubicCoeffA = o.getCubicCoeffA().convertToDouble();
        p.excludeOutside = o.getExcludeOutside();
        p.extrapolationValue = o.getExtrapolationValue().convertToDouble();
        p.scales.assign(o.getScales().begin(), o.getScales().end());
        p.roi.assign(o.getRoi().begin(), o.getRoi().end());
        return one(ref::resize(in[0], resultShape(), p));
      })
      .Case([&](DepthToSpaceOp o) {
        return one(ref::depthToSpace(in[0], o.getBlocksize(),
                                     o.getMode().str()));
      })
      .Case([&](SpaceToDepthOp o) {
        return one(ref::spaceToDepth(in[0], o.getBlocksize()));
      })
      .Case([&](OneHotOp o) {
        return one(ref::oneHot(in[0], o.getDepth(), in[1], o.getAxis()));
      })
      .Default([&](Operation *) -> Results {
        throw rt::Error("the reference evaluator does not support '" +
                        op->getName().getStringRef().str() + "'");
      });
}

OpEvalResult evaluateOp(Operation *op,
                        const std::vector<rt::Tensor> &operands) {
  OpEvalResult result;
  try {
    result.results = OpEvaluator(op, operands).run();
    for (auto [value, tensor] : llvm::zip(op->getResults(), result.results)) {
      auto type = cast<RankedTensorType>(value.getType());
      if (ArrayRef<int64_t>(tensor.shape()) != type.getShape())
        throw rt::Error("computed shape " + rt::shapeToString(tensor.shape()) +
                        " differs from the declared type");
      auto expected = dtypeFromType(type.getElementType());
      if (!expected || *expected != tensor.dtype())
        throw rt::Error(std::string("computed element type ") +
                        rt::dtypeName(tensor.dtype()) +
                        " differs from the declared type");
    }
  } catch (const std::exception &e) {
    result.results.clear();
    result.error = e.what();
  }
  return result;
}

std::optional<std::vector<rt::Tensor>>
evaluate(func::FuncOp func, const std::vector<rt::Tensor> &inputs,
         const EvalObserver &observer) {
  Block &body = func.getBody().front();
  if (inputs.size() != body.getNumArguments()) {
    func.emitError() << "expected " << body.getNumArguments()
                     << " inputs, got " << inputs.size();
    return std::nullopt;
  }
  llvm::DenseMap<Value, rt::Tensor> values;
  for (auto [arg, t] : llvm::zip(body.getArguments(), inputs))
    values[arg] = t;
  // Release each value after its last use so peak memory stays near the
  // live set, not the whole graph.
  llvm::DenseMap<Operation *, SmallVector<Value>> lastUses;
  {
    llvm::DenseMap<Value, Operation *> last;
    for (Operation &op : body)
      for (Value v : op.getOperands())
        last[v] = &op;
    for (auto &[v, op] : last)
      lastUses[op].push_back(v);
  }
  for (Operation &op : body) {
    std::vector<rt::Tensor> operands;
    operands.reserve(op.getNumOperands());
    for (Value v : op.getOperands())
      operands.push_back(values.lookup(v));
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      return operands;
    OpEvalResult r = evaluateOp(&op, operands);
    if (!r.ok()) {
      op.emitError() << r.error;
      return std::nullopt;
    }
    if (observer)
      observer(&op, r.results);
    for (auto [v, t] : llvm::zip(op.getResults(), r.results))
      values[v] = std::move(t);
    auto it = lastUses.find(&op);
    if (it != lastUses.end())
      for (Value v : it->second)
        values.erase(v);
  }
  func.emitError() << "function has no return";
  return std::nullopt;
}

} // namespace loom
