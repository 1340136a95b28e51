//===- Evaluator.cpp - Golden reference evaluator of the graph dialect ----===//
#include "loom/Reference/Evaluator.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Runtime/OpExecutor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
namespace rt = loom::rt;

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
                      "' has no data (text printed with its weights elided; "
                      "`loom compile --emit=... --keep-weights` keeps them)");
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

rt::AttrMap attrsOf(Operation *op) {
  rt::AttrMap map;
  for (NamedAttribute named : op->getAttrs()) {
    if (named.getName() == "operandSegmentSizes")
      continue;
    rt::AttrValue v;
    Attribute a = named.getValue();
    if (auto b = dyn_cast<BoolAttr>(a)) {
      v.kind = rt::AttrValue::Kind::Bool;
      v.ints = {b.getValue() ? 1 : 0};
    } else if (auto i = dyn_cast<IntegerAttr>(a)) {
      v.kind = rt::AttrValue::Kind::Int;
      v.ints = {i.getValue().getSExtValue()};
    } else if (auto f = dyn_cast<FloatAttr>(a)) {
      v.kind = rt::AttrValue::Kind::Float;
      v.floats = {f.getValueAsDouble()};
    } else if (auto ints = dyn_cast<DenseI64ArrayAttr>(a)) {
      v.kind = rt::AttrValue::Kind::Ints;
      v.ints.assign(ints.asArrayRef().begin(), ints.asArrayRef().end());
    } else if (auto ints32 = dyn_cast<DenseI32ArrayAttr>(a)) {
      v.kind = rt::AttrValue::Kind::Ints;
      v.ints.assign(ints32.asArrayRef().begin(), ints32.asArrayRef().end());
    } else if (auto floats = dyn_cast<DenseF64ArrayAttr>(a)) {
      v.kind = rt::AttrValue::Kind::Floats;
      v.floats.assign(floats.asArrayRef().begin(), floats.asArrayRef().end());
    } else if (auto floats32 = dyn_cast<DenseF32ArrayAttr>(a)) {
      v.kind = rt::AttrValue::Kind::Floats;
      v.floats.assign(floats32.asArrayRef().begin(),
                      floats32.asArrayRef().end());
    } else if (auto str = dyn_cast<StringAttr>(a)) {
      v.kind = rt::AttrValue::Kind::String;
      v.str = str.str();
    } else {
      continue; // Not an op parameter (a constant's value, say).
    }
    map[named.getName().str()] = std::move(v);
  }
  return map;
}

std::vector<rt::ResultType> resultTypesOf(Operation *op) {
  std::vector<rt::ResultType> types;
  for (Type t : op->getResultTypes()) {
    auto rt = cast<RankedTensorType>(t);
    auto dt = dtypeFromType(rt.getElementType());
    if (!dt)
      throw rt::Error("unsupported element type in a result of '" +
                      op->getName().getStringRef().str() + "'");
    types.push_back({rt::Shape(rt.getShape().begin(), rt.getShape().end()), *dt});
  }
  return types;
}

/// Evaluates the ops of `block` on its argument values; returns the values
/// its terminator yields. Throws rt::Error (with the failing op's location
/// recorded in `failedOp`).
static std::vector<rt::Tensor> evaluateBlock(Block &block,
                                             const std::vector<rt::Tensor> &args,
                                             const EvalObserver &observer,
                                             Operation *&failedOp);

static std::vector<rt::Tensor> evaluateOne(Operation *op,
                                           const std::vector<rt::Tensor> &in,
                                           const EvalObserver &observer,
                                           Operation *&failedOp) {
  if (auto c = dyn_cast<graph::ConstantOp>(op))
    return {tensorFromAttr(c.getValue())};
  if (auto kernel = dyn_cast<graph::KernelOp>(op))
    return evaluateBlock(kernel.getBody().front(), in, observer, failedOp);
  std::string name = op->getName().stripDialect().str();
  if (op->getDialect() == nullptr ||
      !isa<graph::GraphDialect>(op->getDialect()))
    throw rt::Error("the reference evaluator does not support '" +
                    op->getName().getStringRef().str() + "'");
  return rt::executeOp(name, attrsOf(op), in, resultTypesOf(op),
                       rt::ExecMode::Reference);
}

static std::vector<rt::Tensor> evaluateBlock(Block &block,
                                             const std::vector<rt::Tensor> &args,
                                             const EvalObserver &observer,
                                             Operation *&failedOp) {
  llvm::DenseMap<Value, rt::Tensor> values;
  for (auto [arg, t] : llvm::zip(block.getArguments(), args))
    values[arg] = t;
  // Release each value after its last use so peak memory stays near the
  // live set, not the whole graph.
  llvm::DenseMap<Operation *, SmallVector<Value>> lastUses;
  {
    llvm::DenseMap<Value, Operation *> last;
    for (Operation &op : block)
      for (Value v : op.getOperands())
        last[v] = &op;
    for (auto &[v, op] : last)
      lastUses[op].push_back(v);
  }
  for (Operation &op : block) {
    std::vector<rt::Tensor> operands;
    operands.reserve(op.getNumOperands());
    for (Value v : op.getOperands())
      operands.push_back(values.lookup(v));
    if (op.hasTrait<OpTrait::IsTerminator>())
      return operands;
    std::vector<rt::Tensor> results;
    try {
      results = evaluateOne(&op, operands, observer, failedOp);
      if (results.size() != op.getNumResults())
        throw rt::Error("produced the wrong number of results");
    } catch (const rt::Error &) {
      if (!failedOp)
        failedOp = &op;
      throw;
    }
    if (observer)
      observer(&op, results);
    for (auto [v, t] : llvm::zip(op.getResults(), results))
      values[v] = std::move(t);
    auto it = lastUses.find(&op);
    if (it != lastUses.end())
      for (Value v : it->second)
        values.erase(v);
  }
  throw rt::Error("block has no terminator");
}

OpEvalResult evaluateOp(Operation *op,
                        const std::vector<rt::Tensor> &operands) {
  OpEvalResult result;
  Operation *failedOp = nullptr;
  try {
    result.results = evaluateOne(op, operands, nullptr, failedOp);
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
  Operation *failedOp = nullptr;
  try {
    return evaluateBlock(body, inputs, observer, failedOp);
  } catch (const std::exception &e) {
    (failedOp ? failedOp : func.getOperation())->emitError() << e.what();
  }
  return std::nullopt;
}

} // namespace loom
