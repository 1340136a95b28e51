//===- Importer.cpp - ONNX model -> graph dialect -------------------------===//
//
// Reads an ONNX model with libonnx, resolves external data, binds dynamic
// dimensions, runs ONNX shape inference, and builds the graph dialect node by
// node. Constant subgraphs (the Shape/Gather/Concat chains exporters emit)
// fold as they are built, so shape arguments become static attributes.
// libonnx reports errors with C++ exceptions; they are caught here and turned
// into one line of text.
//
// It is long (over 1,000 lines) because it holds every model-level step
// above (external data, --dim binding, inference, the node walk, folding)
// around the one boundary where libonnx's exceptions are caught.
//
//===----------------------------------------------------------------------===//
#include "loom/Frontend/ONNX/Importer.h"

#include "ImporterImpl.h"
#include "loom/Reference/Evaluator.h"
#include "loom/Runtime/TensorIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

using namespace mlir;
namespace fs = std::filesystem;

namespace loom::onnx_import {

//===----------------------------------------------------------------------===//
// Shape inference guards
//===----------------------------------------------------------------------===//

namespace {

/// The rank of input `i`, or -1 if its shape is unknown.
int64_t inputRank(onnx::InferenceContext &ctx, size_t i) {
  return onnx::hasInputShape(ctx, i) ? onnx::getInputShape(ctx, i).dim_size()
                                     : -1;
}

/// A check run before an op's own inference function, for what that function
/// takes for granted (libonnx 1.12 reads out of bounds otherwise).
using InferenceGuard = void (*)(onnx::InferenceContext &);

/// Fails unless the node's `axis` attribute, if any, lies in [-r, r + extra)
/// for input 0 of rank r (some inference functions index the shape with it
/// unchecked, LayerNormalization's in libonnx 1.12).
void checkAxis(onnx::InferenceContext &ctx, int64_t extra) {
  const onnx::AttributeProto *axis = ctx.getAttribute("axis");
  int64_t rank = inputRank(ctx, 0);
  if (axis && rank >= 0 && (axis->i() < -rank || axis->i() >= rank + extra))
    fail_shape_inference("axis ", axis->i(), " is out of range for rank ",
                         rank);
}

InferenceGuard guardFor(const std::string &opType) {
  static const llvm::StringSet<> axisBelowRank = {
      "ArgMax",     "ArgMin",          "Concat",
      "Gather",     "GatherElements",  "Hardmax",
      "LogSoftmax", "Softmax",         "LayerNormalization",
      "Split",      "ScatterElements", "TopK",
  };
  if (axisBelowRank.contains(opType))
    return [](onnx::InferenceContext &ctx) { checkAxis(ctx, 0); };
  if (opType == "Flatten")
    return [](onnx::InferenceContext &ctx) { checkAxis(ctx, 1); };
  if (opType == "Conv" || opType == "ConvTranspose")
    // The kernel's spatial rank is taken from W and used to index X's shape
    // and the attribute vectors sized from X.
    return [](onnx::InferenceContext &ctx) {
      int64_t x = inputRank(ctx, 0), w = inputRank(ctx, 1);
      if (x >= 0 && w >= 0 && (x < 2 || w != x))
        fail_shape_inference("X has rank ", x, " and W has rank ", w,
                             "; they must be equal and at least 2");
    };
  return nullptr;
}

/// The schemas shape inference sees: ONNX's, except that ops with a guard get
/// a copy whose inference function runs the guard first.
class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
public:
  static const GuardedSchemaRegistry &instance() {
    static const GuardedSchemaRegistry registry;
    return registry;
  }

  const onnx::OpSchema *GetSchema(const std::string &key,
                                  const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain);
    InferenceGuard guard =
        domain.empty() || domain == "ai.onnx" ? guardFor(key) : nullptr;
    if (!schema || !guard)
      return schema;
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<onnx::OpSchema> &copy = guarded_[schema];
    if (!copy) {
      copy = std::make_unique<onnx::OpSchema>(*schema);
      copy->TypeAndShapeInferenceFunction(
          [guard, original = schema->GetTypeAndShapeInferenceFunction()](
              onnx::InferenceContext &ctx) {
            guard(ctx);
            original(ctx);
          });
    }
    return copy.get();
  }

private:
  mutable std::mutex mutex_;
  mutable std::map<const onnx::OpSchema *, std::unique_ptr<onnx::OpSchema>>
      guarded_;
};

} // namespace

std::string domainOf(const onnx::NodeProto &node) {
  return node.domain() == "ai.onnx" ? "" : node.domain();
}

std::string nodeLabel(const onnx::NodeProto &node) {
  std::string name = node.name().empty() ? "<unnamed>" : node.name();
  return "node '" + name + "' (" + node.op_type() + ")";
}

Type elementTypeFromOnnx(MLIRContext &ctx, int onnxType,
                         const std::string &what) {
  auto dt = rt::dtypeFromOnnx(onnxType);
  if (!dt) {
    std::string name = onnx::TensorProto_DataType_IsValid(onnxType)
                           ? onnx::TensorProto_DataType_Name(
                                 static_cast<onnx::TensorProto_DataType>(onnxType))
                           : std::to_string(onnxType);
    throw ImportError(what + ": unsupported element type " + name);
  }
  return typeFromDType(*dt, &ctx);
}

//===----------------------------------------------------------------------===//
// GraphBuilder
//===----------------------------------------------------------------------===//

Value GraphBuilder::materializeInitializer(onnx::TensorProto &proto) {
  std::string what = "initializer '" + proto.name() + "'";
  Type elt = elementTypeFromOnnx(ctx, proto.data_type(), what);
  SmallVector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    if (d < 0)
      throw ImportError(what + ": negative dimension " + std::to_string(d));
  auto type = RankedTensorType::get(shape, elt);
  rt::DType dt = *dtypeFromType(elt);
  int64_t count = rt::numElementsOf(rt::Shape(shape.begin(), shape.end()));
  size_t bytes = static_cast<size_t>(count) * rt::dtypeSize(dt);
  size_t align = rt::dtypeSize(dt);
  Location loc = NameLoc::get(StringAttr::get(&ctx, proto.name()));
  ElementsAttr attr;
  if (proto.has_raw_data() && dt != rt::DType::Bool) {
    if (proto.raw_data().size() != bytes)
      throw ImportError(what + ": holds " +
                        std::to_string(proto.raw_data().size()) +
                        " bytes but its shape " +
                        rt::shapeToString(rt::Shape(shape.begin(), shape.end())) +
                        " of " + rt::dtypeName(dt) + " needs " +
                        std::to_string(bytes));
    // Take the bytes out of the protobuf without copying: the blob owns the
    // string from now on.
    std::string *owned = proto.release_raw_data();
    if (reinterpret_cast<uintptr_t>(owned->data()) % align == 0) {
      AsmResourceBlob blob(
          ArrayRef<char>(owned->data(), owned->size()), align,
          [owned](void *, size_t, size_t) { delete owned; },
          /*dataIsMutable=*/false);
      attr = DenseResourceElementsAttr::get(type, proto.name(), std::move(blob));
    } else {
      auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
          ArrayRef<char>(owned->data(), owned->size()), align);
      delete owned;
      attr = DenseResourceElementsAttr::get(type, proto.name(), std::move(blob));
    }
  } else {
    rt::Tensor t = rt::tensorFromProto(proto, what);
    if (count <= 16 || dt == rt::DType::Bool) {
      attr = attrFromTensor(t, type);
    } else {
      auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
          ArrayRef<char>(static_cast<const char *>(t.raw()), t.byteSize()),
          align);
      attr = DenseResourceElementsAttr::get(type, proto.name(), std::move(blob));
    }
  }
  return graph::ConstantOp::create(b, loc, type, attr);
}

Value GraphBuilder::lookup(const std::string &name,
                           const onnx::NodeProto &node) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto init = initializers.find(name);
  if (init != initializers.end()) {
    // Constants go at the top of the function so they dominate every use.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.getInsertionBlock());
    Value v = materializeInitializer(*init->second);
    values[name] = v;
    return v;
  }
  throw ImportError(nodeLabel(node) + ": input '" + name +
                    "' is not defined by any node, graph input or initializer");
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

static Location nodeLocation(MLIRContext &ctx, const onnx::NodeProto &node) {
  std::string name = node.name().empty()
                         ? node.op_type() + ":" +
                               (node.output_size() ? node.output(0) : "")
                         : node.name();
  return NameLoc::get(StringAttr::get(&ctx, name));
}

NodeContext::NodeContext(GraphBuilder &gb, const onnx::NodeProto &node,
                         int64_t opset)
    : node(node), opset(opset), b(gb.b), loc(nodeLocation(gb.ctx, node)),
      gb(gb) {}

size_t NodeContext::numInputs() const {
  size_t n = node.input_size();
  while (n > 0 && node.input(n - 1).empty())
    --n;
  return n;
}
bool NodeContext::hasInput(size_t i) const {
  return i < static_cast<size_t>(node.input_size()) && !node.input(i).empty();
}
Value NodeContext::input(size_t i) {
  if (!hasInput(i))
    fail("missing input " + std::to_string(i));
  return gb.lookup(node.input(i), node);
}
RankedTensorType NodeContext::inputType(size_t i) {
  return cast<RankedTensorType>(input(i).getType());
}

std::optional<rt::Tensor> NodeContext::constantInput(size_t i) {
  if (!hasInput(i))
    return std::nullopt;
  auto c = input(i).getDefiningOp<graph::ConstantOp>();
  if (!c)
    return std::nullopt;
  return tensorFromAttr(c.getValue());
}

rt::Tensor NodeContext::requireConstant(size_t i, const std::string &what,
                                        const std::string &why) {
  if (!hasInput(i))
    fail("missing input " + std::to_string(i) + " (" + what + ")");
  if (auto t = constantInput(i))
    return *t;
  throw NeedsConstantError(nodeLabel(node) + ": unsupported: " + what +
                               " must be a compile-time constant" +
                               (why.empty() ? "" : " (" + why + ")"),
                           node.input(i));
}

std::vector<int64_t> NodeContext::constantInts(size_t i, const char *what) {
  return requireConstant(i, what, "dynamic shapes are not supported").toInts();
}

size_t NodeContext::numOutputs() const { return node.output_size(); }
bool NodeContext::hasOutput(size_t i) const {
  return i < static_cast<size_t>(node.output_size()) && !node.output(i).empty();
}

static int onnxTypeFromDType(rt::DType dt) {
  switch (dt) {
  case rt::DType::F32: return onnx::TensorProto::FLOAT;
  case rt::DType::F64: return onnx::TensorProto::DOUBLE;
  case rt::DType::F16: return onnx::TensorProto::FLOAT16;
  case rt::DType::BF16: return onnx::TensorProto::BFLOAT16;
  case rt::DType::I8: return onnx::TensorProto::INT8;
  case rt::DType::I16: return onnx::TensorProto::INT16;
  case rt::DType::I32: return onnx::TensorProto::INT32;
  case rt::DType::I64: return onnx::TensorProto::INT64;
  case rt::DType::U8: return onnx::TensorProto::UINT8;
  case rt::DType::U16: return onnx::TensorProto::UINT16;
  case rt::DType::U32: return onnx::TensorProto::UINT32;
  case rt::DType::U64: return onnx::TensorProto::UINT64;
  case rt::DType::Bool: return onnx::TensorProto::BOOL;
  }
  return onnx::TensorProto::UNDEFINED;
}

/// Runs ONNX shape inference on this node alone, with the types the importer
/// already knows and the values of small constant inputs, for outputs that
/// whole-model inference left without a static shape.
void NodeContext::inferLocally() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto *opsetImport = model.add_opset_import();
  opsetImport->set_domain("");
  opsetImport->set_version(opset);
  onnx::GraphProto *g = model.mutable_graph();
  *g->add_node() = node;
  llvm::StringSet<> seen;
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string &name = node.input(i);
    if (name.empty() || !seen.insert(name).second)
      continue;
    Value v = input(i);
    auto type = cast<RankedTensorType>(v.getType());
    rt::DType dt = *dtypeFromType(type.getElementType());
    auto *vi = g->add_input();
    vi->set_name(name);
    auto *tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnxTypeFromDType(dt));
    auto *shape = tt->mutable_shape();
    for (int64_t d : type.getShape())
      shape->add_dim()->set_dim_value(d);
    if (type.getNumElements() > gb.foldLimit)
      continue;
    if (auto c = constantInput(i)) {
      auto *init = g->add_initializer();
      init->set_name(name);
      init->set_data_type(onnxTypeFromDType(dt));
      for (int64_t d : type.getShape())
        init->add_dims(d);
      init->set_raw_data(c->raw(), c->byteSize());
    }
  }
  for (const auto &out : node.output())
    if (!out.empty())
      g->add_output()->set_name(out);
  try {
    onnx::ShapeInferenceOptions options(false, 1, true);
    onnx::shape_inference::InferShapes(
        model, &GuardedSchemaRegistry::instance(), options);
  } catch (const std::exception &e) {
    std::string msg = e.what();
    fail("shape inference failed: " + msg.substr(0, msg.find('\n')));
  }
  for (const auto &out : g->output()) {
    if (!out.type().has_tensor_type())
      continue;
    const auto &tt = out.type().tensor_type();
    if (!tt.has_shape())
      continue;
    SmallVector<int64_t> shape;
    bool ok = true;
    for (const auto &d : tt.shape().dim()) {
      ok &= d.has_dim_value();
      shape.push_back(d.dim_value());
    }
    if (ok)
      gb.inferredTypes[out.name()] = RankedTensorType::get(
          shape, elementTypeFromOnnx(gb.ctx, tt.elem_type(), out.name()));
  }
}

RankedTensorType NodeContext::outputType(size_t i) {
  if (i >= numOutputs())
    fail("has " + std::to_string(numOutputs()) + " outputs; output " +
         std::to_string(i) + " is needed");
  auto it = gb.inferredTypes.find(node.output(i));
  if (it == gb.inferredTypes.end()) {
    inferLocally();
    it = gb.inferredTypes.find(node.output(i));
  }
  if (it == gb.inferredTypes.end())
    fail("cannot infer a static shape for output '" + node.output(i) + "'");
  return it->second;
}

RankedTensorType NodeContext::tensorType(ArrayRef<int64_t> shape,
                                         Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

std::vector<Value> NodeContext::subgraph(const onnx::GraphProto &body,
                                         ArrayRef<Value> inputs) {
  return convertSubgraph(gb, node, body, inputs, opset);
}

/// The one line refusing an unrolling that takes the model past
/// kMaxUnrolledNodes (checked ahead by Loop and Scan, and as bodies are
/// converted).
static ImportError unrollingTooLarge(const onnx::NodeProto &owner) {
  return ImportError(nodeLabel(owner) + ": unsupported: unrolling its body "
                     "takes the model past " +
                     std::to_string(kMaxUnrolledNodes) + " nodes");
}

void NodeContext::checkUnrolling(int64_t iterations, int64_t nodes) const {
  int64_t total = 0;
  if (__builtin_mul_overflow(iterations, nodes, &total) ||
      __builtin_add_overflow(total, gb.unrolledNodes, &total) ||
      total > kMaxUnrolledNodes)
    throw unrollingTooLarge(node);
}

const onnx::AttributeProto *NodeContext::attr(const char *name) const {
  read.insert(name);
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}
bool NodeContext::hasAttr(const char *name) const { return attr(name); }
int64_t NodeContext::intAttr(const char *name, int64_t dflt) const {
  auto *a = attr(name);
  return a ? a->i() : dflt;
}
double NodeContext::floatAttr(const char *name, double dflt) const {
  auto *a = attr(name);
  return a ? a->f() : dflt;
}
std::string NodeContext::stringAttr(const char *name,
                                    const std::string &dflt) const {
  auto *a = attr(name);
  return a ? a->s() : dflt;
}
std::vector<int64_t> NodeContext::intsAttr(const char *name) const {
  auto *a = attr(name);
  if (!a)
    return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}
std::vector<double> NodeContext::floatsAttr(const char *name) const {
  auto *a = attr(name);
  if (!a)
    return {};
  return std::vector<double>(a->floats().begin(), a->floats().end());
}

int64_t NodeContext::axis(int64_t a, int64_t rank) const {
  if (a < -rank || a >= rank)
    fail("axis " + std::to_string(a) + " is out of range for rank " +
         std::to_string(rank));
  return a < 0 ? a + rank : a;
}

Value NodeContext::constant(const rt::Tensor &t) {
  auto type = RankedTensorType::get(
      t.shape(), typeFromDType(t.dtype(), b.getContext()));
  return graph::ConstantOp::create(b, loc, type, attrFromTensor(t, type));
}

Value NodeContext::scalarLike(Value like, double v) {
  auto elt = cast<RankedTensorType>(like.getType()).getElementType();
  rt::Tensor t(*dtypeFromType(elt), {});
  t.setDouble(0, v);
  return constant(t);
}

Value NodeContext::reshape(Value v, ArrayRef<int64_t> shape) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getShape() == shape)
    return v;
  return create<graph::ReshapeOp>(tensorType(shape, t.getElementType()), v);
}

void NodeContext::fail(const std::string &msg) const {
  throw ImportError(nodeLabel(node) + ": " + msg);
}
void NodeContext::unsupported(const std::string &msg) const {
  throw ImportError(nodeLabel(node) + ": unsupported: " + msg);
}
void NodeContext::refuse(const Refusal &refusal,
                         const std::string &detail) const {
  unsupported(refusal.what + (detail.empty() ? "" : ": " + detail));
}

SmallVector<Value> NodeContext::foldResults(Operation *op) {
  if (failed(mlir::verify(op, /*verifyRecursively=*/false)))
    fail(gb.lastDiagnostic.empty() ? "the converted op does not verify"
                                   : gb.lastDiagnostic);
  SmallVector<Value> results(op->getResults());
  // An 8-bit integer constant widened (a DequantizeLinear's or a quantized
  // matmul's weight) stays a cast: graph-fold-quantized reads the 8-bit
  // weight through it, and graph-fold-constants folds what is left.
  if (auto widen = dyn_cast<graph::CastOp>(op))
    if (auto it = dyn_cast<IntegerType>(
            cast<RankedTensorType>(widen.getInput().getType()).getElementType());
        it && it.getWidth() == 8)
      return results;
  std::vector<rt::Tensor> operands;
  for (Value v : op->getOperands()) {
    auto c = v.getDefiningOp<graph::ConstantOp>();
    if (!c)
      return results;
    operands.push_back(tensorFromAttr(c.getValue()));
  }
  for (Value r : results)
    if (cast<RankedTensorType>(r.getType()).getNumElements() > gb.foldLimit)
      return results;
  OpEvalResult r = evaluateOp(op, operands);
  if (!r.ok())
    fail(r.error);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  for (auto [value, t] : llvm::zip(results, r.results)) {
    auto type = cast<RankedTensorType>(value.getType());
    Value folded =
        graph::ConstantOp::create(b, loc, type, attrFromTensor(t, type));
    value.replaceAllUsesWith(folded);
    value = folded;
  }
  op->erase();
  return results;
}

} // namespace loom::onnx_import

//===----------------------------------------------------------------------===//
// Model loading
//===----------------------------------------------------------------------===//

namespace loom::onnx_import {
namespace {

void checkParsedModel(const onnx::ModelProto &model, bool parsed) {
  if (!parsed)
    throw ImportError("not a valid ONNX model (protobuf parse failed; the "
                      "file is truncated or not ONNX)");
  if (!model.has_graph() || model.ir_version() <= 0)
    throw ImportError("not a valid ONNX model (no graph or IR version)");
}

/// Parses the model without first reading the file into memory, so the peak
/// is one copy of the weights.
void parseModel(const std::string &path, onnx::ModelProto &model) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw ImportError("is a directory, not an ONNX model");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ImportError("cannot open file");
  google::protobuf::io::IstreamInputStream raw(&in);
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  checkParsedModel(model, model.ParseFromCodedStream(&coded) &&
                              coded.ConsumedEntireMessage());
}

/// Parses a model held in memory (the fuzzer's entry point).
void parseModelBytes(const void *data, size_t size, onnx::ModelProto &model) {
  if (size > static_cast<size_t>(INT_MAX))
    throw ImportError("not a valid ONNX model (larger than 2 GiB)");
  google::protobuf::io::CodedInputStream coded(
      static_cast<const uint8_t *>(data), static_cast<int>(size));
  coded.SetTotalBytesLimit(INT_MAX);
  checkParsedModel(model, model.ParseFromCodedStream(&coded) &&
                              coded.ConsumedEntireMessage());
}

/// Refuses initializers stored as external data: a model read from memory
/// has no folder for them to live in.
void refuseExternalData(const onnx::ModelProto &model) {
  for (const auto &init : model.graph().initializer())
    if (init.data_location() == onnx::TensorProto::EXTERNAL)
      throw ImportError("initializer '" + init.name() +
                        "': external data is not allowed in a model read "
                        "from memory");
}

/// Loads every initializer stored as external data, refusing paths that
/// leave the model's folder.
void loadExternalData(onnx::ModelProto &model, const fs::path &modelDir) {
  std::error_code ec;
  fs::path root = fs::weakly_canonical(modelDir, ec);
  for (auto &init : *model.mutable_graph()->mutable_initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    std::string what = "initializer '" + init.name() + "'";
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &kv : init.external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = std::stoll(kv.value());
      else if (kv.key() == "length")
        length = std::stoll(kv.value());
    }
    if (location.empty())
      throw ImportError(what + ": external data has no location");
    fs::path rel(location);
    fs::path file = fs::weakly_canonical(root / rel, ec);
    auto [rootEnd, fileIt] =
        std::mismatch(root.begin(), root.end(), file.begin(), file.end());
    if (rel.is_absolute() || rootEnd != root.end())
      throw ImportError(what + ": external data path '" + location +
                        "' escapes the model's folder");
    std::ifstream in(file, std::ios::binary);
    if (!in)
      throw ImportError(what + ": external data file '" + location +
                        "' is missing");
    in.seekg(0, std::ios::end);
    int64_t size = in.tellg();
    if (offset < 0 || offset > size || (length >= 0 && offset + length > size))
      throw ImportError(what + ": external data range [" +
                        std::to_string(offset) + ", +" +
                        std::to_string(length) + ") exceeds '" + location +
                        "' (" + std::to_string(size) + " bytes)");
    if (length < 0)
      length = size - offset;
    std::string *data = init.mutable_raw_data();
    data->resize(static_cast<size_t>(length));
    in.seekg(offset);
    in.read(data->data(), length);
    init.clear_external_data();
    init.set_data_location(onnx::TensorProto::DEFAULT);
  }
}

/// Replaces named dynamic dimensions of the graph inputs by their bound
/// values; an unbound one is an error that names it.
void bindDynamicDims(onnx::GraphProto &graph,
                     const std::map<std::string, int64_t> &dims,
                     const llvm::StringSet<> &initializerNames) {
  for (auto &input : *graph.mutable_input()) {
    if (initializerNames.contains(input.name()))
      continue;
    if (!input.type().has_tensor_type())
      throw ImportError("graph input '" + input.name() +
                        "': unsupported type (only tensors are supported, "
                        "not sequences, maps or optionals)");
    auto *tt = input.mutable_type()->mutable_tensor_type();
    if (!tt->has_shape())
      throw ImportError("graph input '" + input.name() +
                        "': its rank is unknown; static shapes are required");
    for (int i = 0; i < tt->shape().dim_size(); ++i) {
      auto *dim = tt->mutable_shape()->mutable_dim(i);
      if (dim->has_dim_value()) {
        if (dim->dim_value() < 0)
          throw ImportError("graph input '" + input.name() +
                            "': negative dimension " +
                            std::to_string(dim->dim_value()));
        continue;
      }
      std::string param = dim->has_dim_param() ? dim->dim_param() : "";
      auto it = dims.find(param);
      if (param.empty() || it == dims.end())
        throw ImportError(
            "graph input '" + input.name() + "': dimension " +
            std::to_string(i) +
            (param.empty() ? " is dynamic and unnamed"
                           : " ('" + param + "') is dynamic; bind it with --dim " +
                                 param + "=N"));
      dim->set_dim_value(it->second);
    }
  }
}

/// The static type of a value_info, or null if not fully static.
RankedTensorType staticType(MLIRContext &ctx, const onnx::ValueInfoProto &vi) {
  if (!vi.type().has_tensor_type())
    return {};
  const auto &tt = vi.type().tensor_type();
  if (!tt.has_shape() || !rt::dtypeFromOnnx(tt.elem_type()))
    return {};
  SmallVector<int64_t> shape;
  for (const auto &d : tt.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0)
      return {};
    shape.push_back(d.dim_value());
  }
  return RankedTensorType::get(
      shape, elementTypeFromOnnx(ctx, tt.elem_type(), vi.name()));
}

/// The values a subgraph reads from its enclosing graphs: the inputs of its
/// nodes (and of theirs, nested) that nothing inside it defines.
std::vector<std::string> outerNamesOf(const onnx::GraphProto &body) {
  llvm::StringSet<> defined;
  std::vector<std::string> used;
  std::vector<const onnx::GraphProto *> work = {&body};
  while (!work.empty()) {
    const onnx::GraphProto *g = work.back();
    work.pop_back();
    for (const auto &in : g->input())
      defined.insert(in.name());
    for (const auto &init : g->initializer())
      defined.insert(init.name());
    for (const auto &node : g->node()) {
      for (const auto &out : node.output())
        defined.insert(out);
      for (const auto &in : node.input())
        used.push_back(in);
      for (const auto &a : node.attribute())
        if (a.has_g())
          work.push_back(&a.g());
    }
  }
  std::vector<std::string> outer;
  for (std::string &name : used)
    if (!name.empty() && !defined.contains(name))
      outer.push_back(std::move(name));
  return outer;
}

/// The newest opset of the default domain libonnx has schemas for.
int64_t libonnxNewestOpset() {
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance()
      .Map()
      .at("")
      .second;
}

/// Refuses an operator of the default domain that ONNX does not define at
/// the model's opset though a later one does (GatherND at opset 8: it
/// first appears at 11). Its converter would read it against no schema:
/// the attribute, input and output checks need one. Past libonnx's newest
/// opset the converters read the newer ops themselves (NewerOpsets.cpp),
/// so only opsets libonnx knows are checked.
void checkOpAtOpset(const onnx::NodeProto &node, int64_t opset) {
  if (!domainOf(node).empty())
    return;
  const int64_t newest = libonnxNewestOpset();
  if (opset > newest ||
      onnx::OpSchemaRegistry::Schema(node.op_type(), opset, ""))
    return;
  // (An op libonnx does not know at all is one of the newer opsets'; its
  // converter says from which opset it reads it.)
  for (int64_t v = opset + 1; v <= newest; ++v)
    if (onnx::OpSchemaRegistry::Schema(node.op_type(), v, ""))
      throw ImportError(nodeLabel(node) + ": operator '" + node.op_type() +
                        "' is not defined at opset " + std::to_string(opset) +
                        " (it first appears at opset " + std::to_string(v) +
                        ")");
}

/// Refuses subgraphs nested deeper than convertSubgraph converts, before
/// shape inference walks them (a graph whose If takes one nested body as
/// both branches doubles its work at every level).
void checkSubgraphDepth(const onnx::GraphProto &graph) {
  std::vector<std::pair<const onnx::GraphProto *, int64_t>> work = {
      {&graph, 0}};
  while (!work.empty()) {
    auto [g, depth] = work.back();
    work.pop_back();
    for (const auto &node : g->node())
      for (const auto &a : node.attribute()) {
        if (!a.has_g() && a.graphs_size() == 0)
          continue;
        if (depth + 1 > kMaxSubgraphDepth)
          throw ImportError(nodeLabel(node) + ": unsupported: subgraphs "
                            "nested more than " +
                            std::to_string(kMaxSubgraphDepth) + " deep");
        if (a.has_g())
          work.push_back({&a.g(), depth + 1});
        for (const auto &sub : a.graphs())
          work.push_back({&sub, depth + 1});
      }
  }
}

/// Orders nodes so each comes after the producers of its inputs; reports a
/// cycle by naming a node on it.
std::vector<const onnx::NodeProto *>
topologicalOrder(const onnx::GraphProto &graph,
                 const llvm::StringSet<> &available) {
  llvm::StringMap<size_t> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto &out : graph.node(i).output())
      if (!out.empty())
        producer[out] = i;
  // A node's inputs, and for If, Loop and Scan the outer values their
  // bodies read.
  std::vector<std::vector<std::string>> inputsOf(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    inputsOf[i].assign(node.input().begin(), node.input().end());
    for (const auto &a : node.attribute())
      if (a.has_g())
        for (std::string &name : outerNamesOf(a.g()))
          inputsOf[i].push_back(std::move(name));
  }
  std::vector<int> state(graph.node_size(), 0); // 0 new, 1 active, 2 done.
  std::vector<const onnx::NodeProto *> order;
  // Iterative depth-first search, so long chains cannot overflow the stack.
  for (int root = 0; root < graph.node_size(); ++root) {
    if (state[root])
      continue;
    std::vector<std::pair<int, int>> stack{{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto &[n, next] = stack.back();
      if (next < static_cast<int>(inputsOf[n].size())) {
        const std::string &in = inputsOf[n][next++];
        if (in.empty() || available.contains(in))
          continue;
        auto it = producer.find(in);
        if (it == producer.end())
          continue; // Reported as undefined when the node is built.
        int p = static_cast<int>(it->second);
        if (state[p] == 1)
          throw ImportError(nodeLabel(graph.node(p)) +
                            ": the graph has a cycle through input '" + in + "'");
        if (state[p] == 0) {
          state[p] = 1;
          stack.push_back({p, 0});
        }
        continue;
      }
      state[n] = 2;
      order.push_back(&graph.node(n));
      stack.pop_back();
    }
  }
  return order;
}

/// The schema of an op the importer has no converter for, if ONNX defines
/// it as a function of other ops (NegativeLogLikelihoodLoss, Celu, ...).
const onnx::OpSchema *functionSchema(const onnx::NodeProto &node,
                                     int64_t opset) {
  const onnx::OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), opset, node.domain());
  if (schema &&
      (schema->HasFunction() || schema->HasContextDependentFunction()))
    return schema;
  return nullptr;
}

/// Replaces every node the importer cannot convert but ONNX defines as a
/// function by the function's body, with fresh names for its internal
/// values. Returns true if anything was expanded. Needs the value types
/// (from shape inference) because some bodies depend on them.
bool expandFunctions(onnx::GraphProto &graph, int64_t opset, int &counter) {
  std::map<std::string, onnx::TypeProto> types;
  for (const auto &vi : graph.input())
    types[vi.name()] = vi.type();
  for (const auto &vi : graph.value_info())
    types[vi.name()] = vi.type();
  for (const auto &init : graph.initializer()) {
    onnx::TypeProto t;
    t.mutable_tensor_type()->set_elem_type(init.data_type());
    for (int64_t d : init.dims())
      t.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    types[init.name()] = t;
  }
  bool expanded = false;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (const auto &node : graph.node()) {
    const onnx::OpSchema *schema =
        lookupConverter(node.op_type()) ? nullptr : functionSchema(node, opset);
    if (!schema) {
      *nodes.Add() = node;
      continue;
    }
    onnx::FunctionProto body;
    if (schema->HasContextDependentFunction()) {
      std::vector<onnx::TypeProto> inputTypes;
      for (const auto &in : node.input())
        inputTypes.push_back(types.count(in) ? types[in] : onnx::TypeProto());
      onnx::FunctionBodyBuildContextImpl ctx(node, inputTypes);
      if (!schema->BuildContextDependentFunction(ctx, body))
        throw ImportError(nodeLabel(node) +
                          ": unsupported: could not expand its function body");
    } else {
      body = *schema->GetFunction();
    }
    // Formal parameter -> actual value name; everything else gets a prefix.
    std::map<std::string, std::string> rename;
    for (int i = 0; i < body.input_size(); ++i)
      rename[body.input(i)] = i < node.input_size() ? node.input(i) : "";
    for (int i = 0; i < body.output_size(); ++i)
      rename[body.output(i)] = i < node.output_size() ? node.output(i) : "";
    std::string prefix = "__fn" + std::to_string(counter++) + "_";
    auto mapName = [&](const std::string &n) {
      if (n.empty())
        return n;
      auto it = rename.find(n);
      return it != rename.end() ? it->second : prefix + n;
    };
    std::map<std::string, const onnx::AttributeProto *> actualAttrs;
    for (const auto &a : node.attribute())
      actualAttrs[a.name()] = &a;
    for (const auto &inner : body.node()) {
      onnx::NodeProto *n = nodes.Add();
      *n = inner;
      n->set_name(node.name() + "/" + inner.op_type() + "_" +
                  std::to_string(nodes.size()));
      for (auto &in : *n->mutable_input())
        in = mapName(in);
      for (auto &out : *n->mutable_output())
        out = mapName(out);
      // Attributes that refer to the caller's attributes take their values.
      google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
      for (const auto &a : inner.attribute()) {
        if (a.ref_attr_name().empty()) {
          *attrs.Add() = a;
          continue;
        }
        // The caller's value, else the schema's default, else omitted.
        const onnx::AttributeProto *value = nullptr;
        auto it = actualAttrs.find(a.ref_attr_name());
        if (it != actualAttrs.end()) {
          value = it->second;
        } else {
          auto def = schema->attributes().find(a.ref_attr_name());
          if (def != schema->attributes().end() &&
              def->second.default_value.type() !=
                  onnx::AttributeProto::UNDEFINED)
            value = &def->second.default_value;
        }
        if (!value)
          continue;
        onnx::AttributeProto *copy = attrs.Add();
        *copy = *value;
        copy->set_name(a.name());
      }
      *n->mutable_attribute() = attrs;
    }
    expanded = true;
  }
  *graph.mutable_node() = nodes;
  return expanded;
}

/// Turns the graph inputs named in `frozen` into initializers holding the
/// given values, so shape arguments passed as inputs become constants.
void freezeInputs(onnx::GraphProto &graph,
                  const std::map<std::string, rt::Tensor> &frozen) {
  if (frozen.empty())
    return;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const auto &in : graph.input()) {
    auto it = frozen.find(in.name());
    if (it == frozen.end()) {
      *kept.Add() = in;
      continue;
    }
    rt::Tensor t = it->second;
    // NumPy has no bfloat16: uint16 data for a bfloat16 input holds its
    // bit patterns (as ONNX's test data stores them).
    if (in.type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16 &&
        t.dtype() == rt::DType::U16)
      t = t.bitcast(rt::DType::BF16);
    // The bytes are taken as the declared type: a value of another type or
    // shape would be read as garbage.
    const auto &declared = in.type().tensor_type();
    auto dt = rt::dtypeFromOnnx(declared.elem_type());
    bool sameShape = !declared.has_shape() ||
                     declared.shape().dim_size() ==
                         static_cast<int>(t.shape().size());
    for (int d = 0; sameShape && d < declared.shape().dim_size(); ++d)
      sameShape = !declared.shape().dim(d).has_dim_value() ||
                  declared.shape().dim(d).dim_value() == t.shape()[d];
    if (!dt || *dt != t.dtype() || !sameShape)
      throw ImportError("graph input '" + in.name() + "': the value given "
                        "is " + rt::dtypeName(t.dtype()) +
                        rt::shapeToString(t.shape()) +
                        ", not of the type the model declares");
    onnx::TensorProto *init = graph.add_initializer();
    init->set_name(in.name());
    init->set_data_type(in.type().tensor_type().elem_type());
    for (int64_t d : t.shape())
      init->add_dims(d);
    init->set_raw_data(t.raw(), t.byteSize());
  }
  for (const auto &[name, t] : frozen) {
    bool found = false;
    for (const auto &in : graph.input())
      found |= in.name() == name;
    if (!found)
      throw ImportError("cannot freeze '" + name +
                        "': the model has no such input");
  }
  *graph.mutable_input() = kept;
}

/// The graph inputs `value` is computed from, found by walking its
/// producers back through `graph`. The walk stops at Shape and Size, whose
/// outputs depend on their input's type alone.
std::vector<std::string> inputsFeeding(const onnx::GraphProto &graph,
                                       const std::string &value) {
  llvm::StringMap<const onnx::NodeProto *> producer;
  for (const auto &node : graph.node())
    for (const auto &out : node.output())
      if (!out.empty())
        producer[out] = &node;
  llvm::StringSet<> inputs, seen;
  for (const auto &in : graph.input())
    inputs.insert(in.name());
  std::vector<std::string> found, work = {value};
  while (!work.empty()) {
    std::string v = work.back();
    work.pop_back();
    if (v.empty() || !seen.insert(v).second)
      continue;
    if (inputs.contains(v))
      found.push_back(v);
    auto it = producer.find(v);
    if (it == producer.end())
      continue;
    const onnx::NodeProto &node = *it->second;
    if (node.op_type() == "Shape" || node.op_type() == "Size")
      continue;
    for (const auto &in : node.input())
      work.push_back(in);
  }
  std::sort(found.begin(), found.end());
  return found;
}

/// The byte size of `shape` in elements of `elementBytes` bytes, or
/// std::nullopt if it (or the element count) does not fit in an int64.
std::optional<int64_t> byteSizeOf(llvm::ArrayRef<int64_t> shape,
                                  int64_t elementBytes) {
  int64_t bytes = elementBytes;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes))
      return std::nullopt;
  return bytes;
}

/// Refuses a type whose element count or byte size overflows 64 bits, so
/// that nothing downstream (MLIR's getNumElements, the cost model, the
/// allocator) computes with an overflowed size.
void checkTypeSize(RankedTensorType type, const std::string &what) {
  auto dt = dtypeFromType(type.getElementType());
  int64_t elementBytes = dt ? static_cast<int64_t>(rt::dtypeSize(*dt)) : 1;
  if (!byteSizeOf(type.getShape(), elementBytes))
    throw ImportError(what + ": shape " +
                      rt::shapeToString(rt::Shape(type.getShape().begin(),
                                                  type.getShape().end())) +
                      " overflows 64 bits in bytes");
}

/// Checks initializers' shapes before shape inference sees them: negative
/// dimensions, sizes that overflow, raw data of the wrong size.
void checkInitializers(const onnx::GraphProto &graph) {
  for (const auto &init : graph.initializer()) {
    std::string what = "initializer '" + init.name() + "'";
    rt::Shape shape(init.dims().begin(), init.dims().end());
    for (int64_t d : shape)
      if (d < 0)
        throw ImportError(what + ": negative dimension " + std::to_string(d));
    auto dt = rt::dtypeFromOnnx(init.data_type());
    if (!dt)
      continue; // Reported if a node uses it.
    auto bytes = byteSizeOf(shape, static_cast<int64_t>(rt::dtypeSize(*dt)));
    if (!bytes)
      throw ImportError(what + ": shape " + rt::shapeToString(shape) +
                        " overflows 64 bits in bytes");
    if (init.has_raw_data() &&
        static_cast<int64_t>(init.raw_data().size()) != *bytes)
      throw ImportError(what + ": holds " +
                        std::to_string(init.raw_data().size()) +
                        " bytes but its shape " + rt::shapeToString(shape) +
                        " of " + rt::dtypeName(*dt) + " needs " +
                        std::to_string(*bytes));
  }
}

/// Checks the graph's structure before shape inference, which crashes on
/// some malformed graphs (a Gather of the Shape of an undefined value, in
/// libonnx 1.12): every node input is a graph input, an initializer or some
/// node's output, and no value is produced twice.
void checkGraphStructure(const onnx::GraphProto &graph) {
  llvm::StringSet<> defined, initializers;
  // A name listed twice would be bound once and the second silently lost
  // (an input then "is not given" however it is given).
  for (const auto &in : graph.input())
    if (!defined.insert(in.name()).second)
      throw ImportError("graph input '" + in.name() + "' is listed twice");
  for (const auto &init : graph.initializer()) {
    if (!initializers.insert(init.name()).second)
      throw ImportError("initializer '" + init.name() + "' is listed twice");
    defined.insert(init.name());
  }
  llvm::StringMap<const onnx::NodeProto *> producer;
  for (const auto &node : graph.node())
    for (const auto &out : node.output()) {
      if (out.empty())
        continue;
      auto [it, inserted] = producer.try_emplace(out, &node);
      if (!inserted)
        throw ImportError(nodeLabel(node) + ": output '" + out +
                          "' is already produced by " +
                          nodeLabel(*it->second));
      if (defined.contains(out))
        throw ImportError(nodeLabel(node) + ": output '" + out +
                          "' is already a graph input or initializer");
    }
  for (const auto &entry : producer)
    defined.insert(entry.getKey());
  for (const auto &node : graph.node())
    for (const auto &in : node.input())
      if (!in.empty() && !defined.contains(in))
        throw ImportError(nodeLabel(node) + ": input '" + in +
                          "' is not defined by any node, graph input or "
                          "initializer");
}

void runShapeInference(onnx::ModelProto &model) {
  // Type checking is off: old opsets' schemas reject types (int64
  // Constants, say) that exporters emitted anyway and runtimes accept.
  onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/1,
                                      /*data_prop=*/true);
  try {
    onnx::shape_inference::InferShapes(
        model, &GuardedSchemaRegistry::instance(), options);
  } catch (const std::exception &e) {
    std::string msg = e.what();
    size_t nl = msg.find('\n');
    if (nl != std::string::npos)
      msg = msg.substr(0, nl);
    throw ImportError("shape inference failed: " + msg);
  }
}

/// Attributes a converter may leave unread: they do not change what
/// inference computes (an in-place hint, training-only figures, the
/// precision of LayerNormalization's statistics, which are at least fp32
/// here), or ONNX shape inference reads them and a disagreeing value makes
/// its type differ from the converted op's (Conv's kernel_shape).
bool unreadIsHarmless(const std::string &name) {
  static const llvm::StringSet<> harmless = {
      "consumed_inputs", "momentum", "ratio", "seed", "stash_type",
      "kernel_shape"};
  return harmless.contains(name);
}

/// Fails if the converter never looked at an attribute the node gives with
/// a value other than the schema's default: that value would be ignored,
/// and the model computed as if it were not there.
void checkAttributesRead(const NodeContext &nc, int64_t opset) {
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      nc.node.op_type(), opset, domainOf(nc.node));
  for (const auto &a : nc.node.attribute()) {
    if (nc.attributesRead().contains(a.name()) || unreadIsHarmless(a.name()) ||
        a.name().rfind("__", 0) == 0)
      continue;
    if (schema) {
      auto it = schema->attributes().find(a.name());
      if (it != schema->attributes().end() &&
          it->second.default_value.type() != onnx::AttributeProto::UNDEFINED &&
          it->second.default_value.SerializeAsString() ==
              [&] {
                onnx::AttributeProto copy = a;
                copy.clear_doc_string();
                return copy.SerializeAsString();
              }())
        continue;
    }
    nc.unsupported("attribute '" + a.name() +
                   "' (the converter does not read it; its value would be "
                   "ignored)");
  }
}

/// Converts one node with its op's converter and binds its outputs'
/// names to the values built (GraphBuilder::values).
void convertNode(GraphBuilder &gb, const onnx::NodeProto &node,
                 int64_t opset) {
  NodeContext nc(gb, node, opset);
  // Shape inference may give types whose sizes overflow; nothing is
  // built from them.
  for (const auto &out : node.output()) {
    auto it = gb.inferredTypes.find(out);
    if (it != gb.inferredTypes.end())
      checkTypeSize(it->second, nodeLabel(node) + ": output '" + out + "'");
  }
  std::vector<Value> outs;
  try {
    outs = (*lookupConverter(node.op_type()))(nc);
    checkAttributesRead(nc, opset);
  } catch (const ImportError &) {
    throw;
  } catch (const std::exception &e) {
    // Runtime errors (a kernel folding a constant, a tensor too large to
    // allocate) are reported at the node.
    nc.fail(e.what());
  }
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &name = node.output(i);
    if (name.empty())
      continue;
    if (i >= static_cast<int>(outs.size()) || !outs[i])
      continue;
    if (auto type = dyn_cast<RankedTensorType>(outs[i].getType()))
      checkTypeSize(type, nodeLabel(node) + ": output '" + name + "'");
    auto expected = gb.inferredTypes.find(name);
    if (expected != gb.inferredTypes.end() &&
        expected->second != outs[i].getType())
      nc.fail("output '" + name + "' has type " +
              [&] {
                std::string s;
                llvm::raw_string_ostream os(s);
                os << outs[i].getType() << " but ONNX inferred "
                   << expected->second;
                return s;
              }());
    gb.values[name] = outs[i];
  }
}

/// Checks the nodes' domains and ops before shape inference, which would
/// give a less direct message; true when some op ONNX defines as a function
/// needs expanding.
bool checkNodeOps(const onnx::GraphProto &graph,
                  std::map<std::string, int64_t> &opsets) {
  bool needsExpansion = false;
  for (const auto &node : graph.node()) {
    std::string domain = domainOf(node);
    if (isTrainingOp(node.op_type()) != (domain == kTrainingDomain))
      throw ImportError(
          nodeLabel(node) +
          (domain == kTrainingDomain
               ? ": unsupported operator '" + node.op_type() + "' of domain '" +
                     domain +
                     "' (its optimizers Adagrad, Adam and Momentum only)"
           : domain.empty()
               ? ": unknown operator '" + node.op_type() + "'"
               : ": unknown operator domain '" + node.domain() + "'"));
    if (!domain.empty()) {
      if (domain != kTrainingDomain)
        throw ImportError(nodeLabel(node) + ": unknown operator domain '" +
                          node.domain() + "'");
      if (!opsets.count(domain))
        throw ImportError(nodeLabel(node) + ": operator domain '" + domain +
                          "' is not in the model's opset_import");
      continue;
    }
    if (lookupConverter(node.op_type())) {
      checkOpAtOpset(node, opsets[""]);
      continue;
    }
    if (functionSchema(node, opsets[""])) {
      needsExpansion = true;
      continue;
    }
    bool known = onnx::OpSchemaRegistry::Schema(node.op_type(), opsets[""],
                                                "") != nullptr;
    throw ImportError(nodeLabel(node) +
                      (known ? ": unsupported operator '" + node.op_type() + "'"
                             : ": unknown operator '" + node.op_type() + "'"));
  }
  return needsExpansion;
}

OwningOpRef<ModuleOp> importModel(MLIRContext &ctx, onnx::ModelProto &model,
                                  const ImportOptions &options,
                                  std::string &lastDiagnostic) {
  onnx::GraphProto &graph = *model.mutable_graph();
  std::map<std::string, int64_t> opsets;
  for (const auto &o : model.opset_import())
    opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  if (!opsets.count(""))
    opsets[""] = 1;
  // Newer opsets change ops' meaning; converting them with older schemas
  // would give wrong answers, so they are refused.
  // Opsets past libonnx's own are read in its forms where they mean the
  // same (NewerOpsets.cpp).
  auto [minOpset, schemaOpset] =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("");
  int64_t maxOpset = std::max<int64_t>(schemaOpset, kMaxOpset);
  if (opsets[""] < minOpset || opsets[""] > maxOpset)
    throw ImportError("opset_import: version " + std::to_string(opsets[""]) +
                      " of the default ONNX domain is not supported (" +
                      std::to_string(minOpset) + " to " +
                      std::to_string(maxOpset) + ")");

  freezeInputs(graph, options.frozenInputs);
  downgradeNewerOpsets(graph, opsets[""], schemaOpset);
  llvm::StringSet<> initializerNames;
  for (const auto &init : graph.initializer())
    initializerNames.insert(init.name());
  bindDynamicDims(graph, options.dims, initializerNames);

  // Check node domains and ops before shape inference, which would give a
  // less direct message. Ops ONNX defines as functions are expanded.
  bool needsExpansion = checkNodeOps(graph, opsets);
  checkSubgraphDepth(graph);
  // Attributes before shape inference, whose functions read them unchecked.
  for (auto &node : *graph.mutable_node())
    checkNodeAttributes(node, opsets[domainOf(node)]);
  checkGraphStructure(graph);
  checkInitializers(graph);
  runShapeInference(model);
  // Function bodies may use further function ops; expand to a fixed point.
  for (int counter = 0, round = 0; needsExpansion && round < 8; ++round) {
    needsExpansion = expandFunctions(graph, opsets[""], counter);
    if (needsExpansion)
      runShapeInference(model);
  }
  for (const auto &node : graph.node())
    if (!lookupConverter(node.op_type()))
      throw ImportError(nodeLabel(node) + ": unsupported operator '" +
                        node.op_type() + "'");

  OpBuilder b(&ctx);
  // Owned from the start, so an error thrown below does not leak it.
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  GraphBuilder gb(ctx, b, options.foldLimit);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      gb.lastDiagnostic = d.str();
    return success();
  });
  for (auto &init : *graph.mutable_initializer())
    gb.initializers[init.name()] = &init;

  // Function signature: graph inputs that are not initializers.
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const auto &in : graph.input()) {
    if (initializerNames.contains(in.name()))
      continue;
    auto t = staticType(ctx, in);
    if (!t)
      throw ImportError("graph input '" + in.name() +
                        "': unsupported type (static tensors of numeric or "
                        "bool elements only)");
    checkTypeSize(t, "graph input '" + in.name() + "'");
    argTypes.push_back(t);
    argNames.push_back(in.name());
  }
  auto collect = [&](const onnx::ValueInfoProto &vi) {
    if (auto t = staticType(ctx, vi))
      gb.inferredTypes[vi.name()] = t;
  };
  for (const auto &vi : graph.value_info())
    collect(vi);
  for (const auto &vi : graph.output())
    collect(vi);

  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, b.getUnknownLoc(), "main",
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    gb.values[name] = entry->getArgument(i);
    func.setArgAttr(i, "graph.name", b.getStringAttr(name));
  }
  b.setInsertionPointToEnd(entry);

  llvm::StringSet<> available(initializerNames);
  for (const auto &name : argNames)
    available.insert(name);
  for (const onnx::NodeProto *node : topologicalOrder(graph, available))
    convertNode(gb, *node, opsets[domainOf(*node)]);

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  onnx::NodeProto outputNode;
  outputNode.set_name("graph outputs");
  for (const auto &out : graph.output()) {
    auto it = gb.values.find(out.name());
    Value v;
    if (it != gb.values.end())
      v = it->second;
    else if (gb.initializers.count(out.name()))
      v = gb.lookup(out.name(), outputNode);
    else
      throw ImportError("graph output '" + out.name() +
                        "' is not produced by any node");
    results.push_back(v);
    resultTypes.push_back(v.getType());
  }
  func::ReturnOp::create(b, b.getUnknownLoc(), results);
  func.setType(b.getFunctionType(argTypes, resultTypes));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "graph.name", b.getStringAttr(out.name()));
  lastDiagnostic = gb.lastDiagnostic;
  return module;
}

} // namespace

std::vector<Value> convertSubgraph(GraphBuilder &gb,
                                   const onnx::NodeProto &owner,
                                   const onnx::GraphProto &body,
                                   ArrayRef<Value> inputs, int64_t opset) {
  // (Its nesting is bounded before shape inference: checkSubgraphDepth.)
  if (static_cast<size_t>(body.input_size()) != inputs.size())
    throw ImportError(nodeLabel(owner) + ": its body takes " +
                      std::to_string(body.input_size()) + " inputs, not " +
                      std::to_string(inputs.size()));
  gb.unrolledNodes += body.node_size();
  if (gb.unrolledNodes > kMaxUnrolledNodes)
    throw unrollingTooLarge(owner);
  // A copy: the body's forms of newer opsets are rewritten, and its
  // initializers' bytes are moved into constants as they are used.
  onnx::GraphProto g = body;
  downgradeNewerOpsets(g, opset, libonnxNewestOpset());
  for (auto &node : *g.mutable_node()) {
    if (!domainOf(node).empty())
      throw ImportError(nodeLabel(node) + " (in the body of " +
                        nodeLabel(owner) + "): unsupported operator domain '" +
                        node.domain() + "'");
    if (!lookupConverter(node.op_type()))
      throw ImportError(nodeLabel(node) + " (in the body of " +
                        nodeLabel(owner) + "): unsupported operator '" +
                        node.op_type() + "'");
    checkOpAtOpset(node, opset);
    checkNodeAttributes(node, opset);
  }
  // The body's names shadow the enclosing graph's while it is converted;
  // afterwards each is restored (or removed), so the next iteration and the
  // nodes after the owner see the enclosing graph as it was.
  llvm::StringMap<std::optional<Value>> saved;
  llvm::StringMap<std::optional<RankedTensorType>> savedTypes;
  auto shadow = [&](const std::string &name) {
    if (name.empty() || saved.count(name))
      return;
    auto v = gb.values.find(name);
    saved[name] = v == gb.values.end() ? std::nullopt
                                       : std::optional<Value>(v->second);
    auto t = gb.inferredTypes.find(name);
    savedTypes[name] = t == gb.inferredTypes.end()
                           ? std::nullopt
                           : std::optional<RankedTensorType>(t->second);
    gb.values.erase(name);
    gb.inferredTypes.erase(name);
  };
  llvm::StringMap<onnx::TensorProto *> savedInits;
  for (auto &init : *g.mutable_initializer()) {
    shadow(init.name());
    auto it = gb.initializers.find(init.name());
    if (it != gb.initializers.end() && !savedInits.count(init.name()))
      savedInits[init.name()] = it->second;
    gb.initializers[init.name()] = &init;
  }
  for (const auto &node : g.node())
    for (const auto &out : node.output())
      shadow(out);
  llvm::StringSet<> available;
  for (auto [i, in] : llvm::enumerate(g.input())) {
    shadow(in.name());
    gb.values[in.name()] = inputs[i];
    available.insert(in.name());
  }
  for (const auto &entry : gb.values)
    available.insert(entry.getKey());
  for (const auto &init : g.initializer())
    available.insert(init.name());

  std::vector<Value> outs;
  for (const onnx::NodeProto *node : topologicalOrder(g, available))
    convertNode(gb, *node, opset);
  onnx::NodeProto outputs;
  outputs.set_name(nodeLabel(owner) + "'s body outputs");
  for (const auto &out : g.output())
    outs.push_back(gb.lookup(out.name(), outputs));
  for (const auto &entry : saved) {
    if (entry.getValue())
      gb.values[entry.getKey()] = *entry.getValue();
    else
      gb.values.erase(entry.getKey());
  }
  for (const auto &entry : savedTypes) {
    if (entry.getValue())
      gb.inferredTypes[entry.getKey()] = *entry.getValue();
    else
      gb.inferredTypes.erase(entry.getKey());
  }
  for (const auto &init : g.initializer()) {
    auto it = savedInits.find(init.name());
    if (it != savedInits.end())
      gb.initializers[init.name()] = it->second;
    else
      gb.initializers.erase(init.name());
  }
  return outs;
}

} // namespace loom::onnx_import

namespace loom {

/// Keeps an error on one line whatever names the model holds: line breaks
/// become spaces, other control characters '?'.
static std::string oneLine(std::string text) {
  for (char &c : text)
    if (c == '\n' || c == '\r')
      c = ' ';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';
  return text;
}

/// The one boundary every import goes through: `load` fills the model (and
/// its external data); any exception becomes one line "name: problem".
static OwningOpRef<ModuleOp>
importWith(MLIRContext &ctx, const std::string &name,
           llvm::function_ref<void(onnx::ModelProto &)> load,
           const ImportOptions &options, std::string &error) {
  using namespace onnx_import;
  ctx.loadDialect<graph::GraphDialect, func::FuncDialect>();
  std::string lastDiagnostic;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      lastDiagnostic = d.str();
    return success();
  });
  try {
    onnx::ModelProto model;
    load(model);
    ImportOptions attempt = options;
    if (options.frozenKnownInputs)
      options.frozenKnownInputs->clear();
    // Each round freezes the known inputs a node needed as constants; it
    // ends when the import succeeds or needs a value nobody knows.
    for (;;) {
      // A failed round consumes the model (initializers are moved out), so
      // rounds that may be retried work on a copy.
      onnx::ModelProto copy;
      if (!options.knownInputs.empty())
        copy = model;
      onnx::ModelProto &round = options.knownInputs.empty() ? model : copy;
      OwningOpRef<ModuleOp> module;
      try {
        module = importModel(ctx, round, attempt, lastDiagnostic);
      } catch (const NeedsConstantError &e) {
        bool progress = false;
        for (const std::string &input :
             inputsFeeding(round.graph(), e.valueName)) {
          auto known = options.knownInputs.find(input);
          if (known == options.knownInputs.end() ||
              attempt.frozenInputs.count(input))
            continue;
          attempt.frozenInputs.emplace(input, known->second);
          if (options.frozenKnownInputs)
            options.frozenKnownInputs->push_back(input);
          progress = true;
        }
        if (!progress)
          throw;
        continue;
      }
      if (failed(mlir::verify(*module))) {
        error = oneLine(
            name + ": the imported graph does not verify: " + lastDiagnostic);
        return nullptr;
      }
      return module;
    }
  } catch (const std::exception &e) {
    error = oneLine(name + ": " + e.what());
  }
  return nullptr;
}

OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &ctx, const std::string &path,
                                     const ImportOptions &options,
                                     std::string &error) {
  return importWith(
      ctx, path,
      [&](onnx::ModelProto &model) {
        onnx_import::parseModel(path, model);
        onnx_import::loadExternalData(model, fs::path(path).parent_path());
      },
      options, error);
}

OwningOpRef<ModuleOp> importOnnxBytes(MLIRContext &ctx, const void *data,
                                      size_t size, const std::string &name,
                                      const ImportOptions &options,
                                      std::string &error) {
  return importWith(
      ctx, name,
      [&](onnx::ModelProto &model) {
        onnx_import::parseModelBytes(data, size, model);
        onnx_import::refuseExternalData(model);
      },
      options, error);
}

std::vector<std::string> supportedOnnxOps() {
  return onnx_import::converterNames();
}

} // namespace loom
