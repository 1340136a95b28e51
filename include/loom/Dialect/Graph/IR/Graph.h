//===- Graph.h - The graph dialect and its ops ------------------*- C++ -*-===//
#ifndef LOOM_DIALECT_GRAPH_IR_GRAPH_H
#define LOOM_DIALECT_GRAPH_IR_GRAPH_H

#include "loom/Runtime/KernelEnums.h"
#include "loom/Runtime/TargetDesc.h"
#include "loom/Target/KernelKind.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "loom/Dialect/Graph/IR/GraphDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Graph/IR/GraphAttrs.h.inc"

namespace loom::graph::traits {
/// ODS's Graph_Elementwise (GraphBase.td): the op is elementwise, each
/// result element depending only on the operands' elements at the same
/// (broadcast) position. Read through graph::isElementwise (OpClasses.h).
template <typename ConcreteType>
class Elementwise
    : public mlir::OpTrait::TraitBase<ConcreteType, Elementwise> {};
/// ODS's Graph_Reduce: a reduce_* op (axes and keepdims attributes).
template <typename ConcreteType>
class Reduce : public mlir::OpTrait::TraitBase<ConcreteType, Reduce> {};
/// ODS's Graph_KernelKind<kind>: the kind of kernel the op's
/// graph-form-kernels kernel takes. Read through graph::kernelKindOf.
template <loom::KernelKind Kind> struct KernelKindIs {
  template <typename ConcreteType>
  class Impl : public mlir::OpTrait::TraitBase<ConcreteType, Impl> {};
};
} // namespace loom::graph::traits

#define GET_OP_CLASSES
#include "loom/Dialect/Graph/IR/GraphOps.h.inc"

namespace loom::graph {
/// Discardable attributes set by `graph-partition` (see Passes.td):
/// the chip an op (or graph.kernel) runs on,
inline constexpr const char *kChipAttr = "graph.chip";
/// on the function: chips, tensor- and pipeline-parallel degrees and the
/// partition report,
inline constexpr const char *kChipsAttr = "graph.chips";
inline constexpr const char *kTensorParallelAttr = "graph.tp";
inline constexpr const char *kPipelineParallelAttr = "graph.pp";
inline constexpr const char *kPartitionReportAttr = "graph.partition_report";
/// the inputs a pipelined split's estimate has in flight at once (its
/// latency over its interval, rounded up; only when pp > 1): placement
/// leaves room on each tile for that many copies of a stage's streaming
/// state (see graph-to-spatial),
inline constexpr const char *kInFlightAttr = "graph.in_flight";
/// the system the chips are part of, when bigger (see ChipNetwork),
inline constexpr const char *kSystemChipsAttr = "graph.system_chips";
/// and on an argument or result that is one part of a model input or
/// output: array<i64: axis, index, count> (axis -1: a replica on each chip),
/// beside its `graph.name`.
inline constexpr const char *kPartAttr = "graph.part";
/// On a function argument: it stands for an activation every chip already
/// holds whole (a layer's input in a body-only graph), so graph-partition
/// does not treat splitting it as free the way it treats a model input the
/// host scatters.
inline constexpr const char *kWholeAttr = "graph.whole";

/// On a function argument or result: the format the model input or output
/// is stored in ("bf16", "fp16" or "fp8"; see rt::storageFormat) when
/// narrower than its type, as for an LLM's KV cache (`--kv-precision`). The
/// host writes an input's values rounded to it and reads an output's so.
inline constexpr const char *kStorageAttr = "graph.storage";

/// Verifies a kernel's optional `storage` attribute: a narrow storage
/// format (fp32 is spelled by leaving it out; int8 is a precision, no
/// storage format).
inline mlir::LogicalResult
verifyStorage(mlir::Operation *op, std::optional<rt::NumericFormat> storage) {
  if (!storage)
    return mlir::success();
  const char *name = rt::numericFormatName(*storage);
  if (!rt::isNarrowStorageFormat(*storage))
    return op->emitOpError("storage must be bf16, fp16 or fp8, got '")
           << name << "'";
  for (mlir::Type t : op->getResultTypes())
    if (!mlir::cast<mlir::ShapedType>(t).getElementType().isF32())
      return op->emitOpError("storage ")
             << name << " is for f32 results, got " << t;
  return mlir::success();
}

/// Parses the `<name>` of an enum attribute (Loom_EnumValueAttr in
/// GraphAttrs.td) into the value `parse` gives for it; refuses a name that
/// names none with "<what> must be <valid>, got '<name>'".
template <typename Enum, typename Parse>
std::optional<Enum> parseEnumValue(mlir::AsmParser &parser, Parse parse,
                                   llvm::StringRef what,
                                   llvm::StringRef valid) {
  std::string name;
  if (parser.parseLess())
    return std::nullopt;
  llvm::SMLoc at = parser.getCurrentLocation();
  if (parser.parseKeywordOrString(&name))
    return std::nullopt;
  std::optional<Enum> value = parse(name);
  if (!value) {
    parser.emitError(at) << what << " must be " << valid << ", got '" << name
                         << "'";
    return std::nullopt;
  }
  if (parser.parseGreater())
    return std::nullopt;
  return value;
}

/// The `graph.storage` declared for `v`: a function argument's, or that of
/// a result `v` is returned as (the first with one); std::nullopt when none
/// names a narrow format.
std::optional<rt::NumericFormat> declaredStorage(mlir::Value v);

/// True if `op` is a transpose of the last two dimensions whose one use is
/// operand 0 or 1 of a graph.matmul: the matmul's kernel reads the operand
/// in place (graph-form-kernels), so the transpose is no copy and no work.
bool isMatmulOperandTranspose(mlir::Operation *op);

/// The chip `graph-partition` put an op on (0 when not partitioned).
inline int64_t chipOf(mlir::Operation *op) {
  if (auto a = op->getAttrOfType<mlir::IntegerAttr>(kChipAttr))
    return a.getInt();
  return 0;
}
} // namespace loom::graph

#endif // LOOM_DIALECT_GRAPH_IR_GRAPH_H
