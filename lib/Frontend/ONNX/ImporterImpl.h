//===- ImporterImpl.h - Internals shared by the ONNX importer ---*- C++ -*-===//
#ifndef LOOM_LIB_FRONTEND_ONNX_IMPORTERIMPL_H
#define LOOM_LIB_FRONTEND_ONNX_IMPORTERIMPL_H

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Runtime/Tensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loom::onnx_import {

/// A user-facing import error; carries one line of text.
struct ImportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An import error because a node needs the value of `valueName` at compile
/// time (a shape argument) and it is not a constant. The importer catches it
/// when the caller knows the values of graph inputs (ImportOptions::
/// knownInputs): it freezes the inputs the value is computed from and
/// imports again.
struct NeedsConstantError : ImportError {
  NeedsConstantError(const std::string &message, std::string valueName)
      : ImportError(message), valueName(std::move(valueName)) {}
  std::string valueName;
};

class GraphBuilder;

/// Something the importer refuses of an operator it reads (a mode, an
/// attribute value, a type): declared once, where the converter or the
/// opset rewrite that refuses it is, with declareRefusal. The converter
/// throws it (NodeContext::refuse) and `loom ops` lists it
/// (onnxOpSupport), so the list cannot drift from what is refused.
struct Refusal {
  /// The operator types it applies to, comma-separated ("RNN,GRU,LSTM").
  std::string ops;
  /// What is refused, as the error says it after "unsupported: ".
  std::string what;
  /// The first opset it applies at (0: every opset the op is read at); the
  /// opset rewrites of NewerOpsets.cpp refuse from the version they read.
  int64_t sinceOpset = 0;
};
/// Registers a refusal; call it at namespace scope
/// (`const Refusal &kX = declareRefusal(...)`) so that every refusal is
/// known before main runs.
const Refusal &declareRefusal(std::string ops, std::string what,
                              int64_t sinceOpset = 0);
/// Every refusal declared, in declaration order.
std::vector<const Refusal *> declaredRefusals();

/// What a converter sees of one ONNX node.
class NodeContext {
public:
  NodeContext(GraphBuilder &gb, const onnx::NodeProto &node, int64_t opset);

  const onnx::NodeProto &node;
  int64_t opset;
  mlir::OpBuilder &b;
  mlir::Location loc;

  /// Number of inputs actually given (trailing empty names dropped).
  size_t numInputs() const;
  bool hasInput(size_t i) const;
  mlir::Value input(size_t i);
  mlir::RankedTensorType inputType(size_t i);
  /// The value of input `i` if it is a compile-time constant.
  std::optional<rt::Tensor> constantInput(size_t i);
  /// The value of input `i`, which must be a compile-time constant (a shape
  /// argument); throws NeedsConstantError naming the node, `what` and
  /// `why` (if given) otherwise.
  rt::Tensor requireConstant(size_t i, const std::string &what,
                             const std::string &why = "");
  /// Input `i` as constant integers; throws naming the node if not constant.
  std::vector<int64_t> constantInts(size_t i, const char *what);

  size_t numOutputs() const;
  bool hasOutput(size_t i) const;
  /// The type ONNX shape inference gave output `i` (must be static).
  mlir::RankedTensorType outputType(size_t i);
  /// Output type with a given shape and the inferred (or given) element type.
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    mlir::Type elementType);

  // Attributes.
  bool hasAttr(const char *name) const;
  int64_t intAttr(const char *name, int64_t dflt) const;
  double floatAttr(const char *name, double dflt) const;
  std::string stringAttr(const char *name, const std::string &dflt) const;
  std::vector<int64_t> intsAttr(const char *name) const;
  std::vector<double> floatsAttr(const char *name) const;
  const onnx::AttributeProto *attr(const char *name) const;

  /// Normalises a possibly negative axis against `rank`; throws if out of range.
  int64_t axis(int64_t axis, int64_t rank) const;

  /// Creates an op and folds it to a constant when all its operands are
  /// constant and the result is small.
  template <typename OpT, typename... Args> mlir::Value create(Args &&...args) {
    auto op = OpT::create(b, loc, std::forward<Args>(args)...);
    return foldResults(op.getOperation())[0];
  }
  /// Like create, for ops with several results.
  template <typename OpT, typename... Args>
  llvm::SmallVector<mlir::Value> createMulti(Args &&...args) {
    auto op = OpT::create(b, loc, std::forward<Args>(args)...);
    return foldResults(op.getOperation());
  }
  mlir::Value constant(const rt::Tensor &t);
  mlir::Value scalarLike(mlir::Value like, double v);
  /// Reshape `v` to `shape` (no-op when equal).
  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);

  [[noreturn]] void fail(const std::string &msg) const;
  [[noreturn]] void unsupported(const std::string &msg) const;
  /// Throws `refusal` ("unsupported: WHAT"), with `detail` after it when
  /// given ("unsupported: WHAT: DETAIL").
  [[noreturn]] void refuse(const Refusal &refusal,
                           const std::string &detail = "") const;

  /// Converts `body` (one of this node's graph attributes) with `inputs`
  /// bound to its inputs; returns its outputs' values (convertSubgraph).
  std::vector<mlir::Value> subgraph(const onnx::GraphProto &body,
                                    llvm::ArrayRef<mlir::Value> inputs);
  /// Refuses, before anything is built, unrolling `iterations` copies of
  /// a body of `nodes` nodes when that takes the model past
  /// kMaxUnrolledNodes (convertSubgraph counts them as they are built).
  void checkUnrolling(int64_t iterations, int64_t nodes) const;

  /// The attributes a converter looked at (attr() and the typed readers).
  const llvm::StringSet<> &attributesRead() const { return read; }

private:
  mutable llvm::StringSet<> read;
  void inferLocally();
  llvm::SmallVector<mlir::Value> foldResults(mlir::Operation *op);
  GraphBuilder &gb;
};

/// Converts one ONNX node; returns one value per ONNX output (a null Value
/// for an output that is not produced because it is unused).
using Converter = std::function<std::vector<mlir::Value>(NodeContext &)>;
const Converter *lookupConverter(const std::string &opType);
std::vector<std::string> converterNames();
/// Converters of ops written with other graph ops (ComposedConverters.cpp):
/// the training optimizers, LRN, ReverseSequence, ...
void addComposedConverters(llvm::StringMap<Converter> &table);
/// RNN, GRU and LSTM, unrolled over the sequence (RecurrentConverters.cpp).
void addRecurrentConverters(llvm::StringMap<Converter> &table);
/// Converters of ops whose output shape depends on input values
/// (ValueDependentConverters.cpp): computed at import from constants.
void addValueDependentConverters(llvm::StringMap<Converter> &table);

/// Builder state shared by converters.
class GraphBuilder {
public:
  GraphBuilder(mlir::MLIRContext &ctx, mlir::OpBuilder &b, int64_t foldLimit)
      : ctx(ctx), b(b), foldLimit(foldLimit) {}
  mlir::MLIRContext &ctx;
  mlir::OpBuilder &b;
  int64_t foldLimit;
  llvm::StringMap<mlir::Value> values;
  llvm::StringMap<mlir::RankedTensorType> inferredTypes;
  /// Initializers not yet materialised, by name.
  llvm::StringMap<onnx::TensorProto *> initializers;
  /// The last error diagnostic MLIR emitted (verifier messages).
  std::string lastDiagnostic;
  /// The nodes of subgraph bodies converted so far (unrolled iterations
  /// count each time), bounded by kMaxUnrolledNodes (convertSubgraph).
  int64_t unrolledNodes = 0;
  mlir::Value lookup(const std::string &name, const onnx::NodeProto &node);
  mlir::Value materializeInitializer(onnx::TensorProto &proto);
};

/// Static control flow (ControlFlowConverters.cpp): If with a constant
/// condition, Loop with a constant trip count and Scan, unrolled.
void addControlFlowConverters(llvm::StringMap<Converter> &table);

/// The most deeply nested subgraph a model may hold (checked before shape
/// inference), and the most body nodes unrolled in one model.
inline constexpr int64_t kMaxSubgraphDepth = 16;
inline constexpr int64_t kMaxUnrolledNodes = 200000;

/// Converts `body`, a graph attribute of `owner`, with `inputs` bound to
/// its inputs in order, and returns the values of its outputs. The body
/// reads the enclosing graphs' values by name; its own names shadow them
/// only while it is converted. Throws naming `owner` if its unrolling
/// grows the model past kMaxUnrolledNodes.
std::vector<mlir::Value> convertSubgraph(GraphBuilder &gb,
                                         const onnx::NodeProto &owner,
                                         const onnx::GraphProto &body,
                                         llvm::ArrayRef<mlir::Value> inputs,
                                         int64_t opset);

/// Element type for an ONNX TensorProto data type; throws if unsupported.
mlir::Type elementTypeFromOnnx(mlir::MLIRContext &ctx, int onnxType,
                               const std::string &what);
std::string nodeLabel(const onnx::NodeProto &node);
/// The node's operator domain, "" for the default one ("ai.onnx" too).
std::string domainOf(const onnx::NodeProto &node);
/// The domain of ONNX's training operators; the importer converts its
/// optimizers (Adagrad, Adam, Momentum).
inline constexpr const char *kTrainingDomain = "ai.onnx.preview.training";
inline bool isTrainingOp(const std::string &opType) {
  return opType == "Adagrad" || opType == "Adam" || opType == "Momentum";
}

/// The newest opset of the default domain the importer reads: opsets
/// beyond libonnx's own (17) are rewritten into its forms
/// (downgradeNewerOpsets).
inline constexpr int64_t kMaxOpset = 21;

/// Rewrites each node of a model of `opset` (above `schemaOpset`, the
/// newest libonnx knows) whose operator changed after `schemaOpset` into
/// the older form that means the same, or throws naming the node
/// (NewerOpsets.cpp).
void downgradeNewerOpsets(onnx::GraphProto &graph, int64_t opset,
                          int64_t schemaOpset);

/// How the importer reads one version of an operator that changed after
/// libonnx's opset 17.
enum class NewerForm {
  /// As its opset-17 form (only the element types widened).
  Same,
  /// Rewritten into its opset-17 form, or read by a converter of its own.
  Rewritten,
  /// Refused.
  Refused,
};
/// The versions after opset 17 at which `op` changed, each with how the
/// importer reads it (the table downgradeNewerOpsets works from).
std::vector<std::pair<int64_t, NewerForm>>
newerVersionForms(const std::string &op);

/// Checks a node's attributes against its op's schema at `opset` (names,
/// types, required ones) and the values ONNX shape inference relies on;
/// throws naming the node and attribute. Gives untyped attributes (IR
/// version 1) the type of the value they hold.
void checkNodeAttributes(onnx::NodeProto &node, int64_t opset);

} // namespace loom::onnx_import

#endif // LOOM_LIB_FRONTEND_ONNX_IMPORTERIMPL_H
