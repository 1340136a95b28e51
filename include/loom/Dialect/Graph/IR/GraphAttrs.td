//===- GraphAttrs.td - A kernel's kind, precision and bound -*- tablegen -*-===//
//
// The attributes graph.kernel and spatial.kernel state their kind,
// precision and cost bound in. Each holds the runtime's C++ enum
// (loom/Runtime/KernelEnums.h, TargetDesc.h), the one definition the cost
// model, the program file and the runtime share, and prints its spelling:
// `#graph.kind<matmul>`, `#graph.precision<bf16>`, `#graph.bound<compute>`.
// The parser refuses a spelling that names no value, with the list of those
// that do. The generated accessors (getKind(), getPrecision(), getBound())
// return the enum itself.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_GRAPH_ATTRS
#define LOOM_GRAPH_ATTRS

include "loom/Dialect/Graph/IR/GraphBase.td"
include "mlir/IR/AttrTypeBase.td"

// An attribute of `dialect` holding one value of a C++ enum `cppEnum`,
// returned as that enum by an op's accessor and built from it by its
// builders. The spatial dialect's collective attributes (SpatialAttrs.td)
// are of this class too.
class Loom_EnumValueAttr<Dialect dialect, string name, string attrMnemonic,
                         string cppEnum>
    : AttrDef<dialect, name> {
  let mnemonic = attrMnemonic;
  let parameters = (ins cppEnum:$value);
  let hasCustomAssemblyFormat = 1;
  let returnType = cppEnum;
  let convertFromStorage = "::llvm::cast<" # cppType # ">($_self).getValue()";
  let constBuilderCall = cppType # "::get($_builder.getContext(), $0)";
}

// One of the graph dialect's: a runtime enum (loom/Runtime/KernelEnums.h,
// TargetDesc.h).
class Graph_EnumValueAttr<string name, string attrMnemonic, string cppEnum>
    : Loom_EnumValueAttr<Graph_Dialect, name, attrMnemonic, cppEnum>;

def Graph_KernelKindAttr
    : Graph_EnumValueAttr<"KernelKind", "kind", "::loom::rt::KernelKind"> {
  // The summary is what a failed constraint quotes (an old `kind =
  // "matmul"` string, say): it names the spelling.
  let summary = "a kernel kind: #graph.kind<matmul|conv|elementwise|"
                "reduction|softmax|normalization|data_movement>";
  let description = [{
    matmul, conv, elementwise, reduction, softmax, normalization or
    data_movement (`loom::rt::KernelKind`; collective names the cost class
    of a collective, never a kernel's, and is refused).

    Example: `kind = #graph.kind<matmul>`
  }];
  let genVerifyDecl = 1;
}

def Graph_PrecisionAttr
    : Graph_EnumValueAttr<"Precision", "precision",
                          "::loom::rt::NumericFormat"> {
  let summary = "a numeric format: #graph.precision<fp32|bf16|fp16|fp8|int8>";
  let description = [{
    fp32, bf16 (bf16 inputs, fp32 accumulation), fp16, fp8 (E4M3) or int8
    (symmetric, per tensor): the numeric formats `rt::kernelPrecisionFormat`
    accepts; the other numeric formats (tf32, fp4) are refused.

    Example: `precision = #graph.precision<bf16>`
  }];
  let genVerifyDecl = 1;
}

def Graph_CostBoundAttr
    : Graph_EnumValueAttr<"CostBound", "bound", "::loom::rt::CostBound"> {
  let summary = "a cost bound: #graph.bound<compute|sram|mesh|link|offchip|"
                "fill_drain>";
  let description = [{
    compute, sram, mesh, link, offchip or fill_drain (`loom::rt::CostBound`),
    as the cost model found it.

    Example: `bound = #graph.bound<compute>`
  }];
}

#endif // LOOM_GRAPH_ATTRS
