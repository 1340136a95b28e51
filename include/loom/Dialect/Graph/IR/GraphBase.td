//===- GraphBase.td - The graph dialect --------------------*- tablegen -*-===//
#ifndef LOOM_GRAPH_BASE
#define LOOM_GRAPH_BASE

include "mlir/IR/OpBase.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::loom::graph";
  let summary = "Tensor graphs close to ONNX, normalised for compilation";
  let description = [{
    The `graph` dialect holds an inference graph with value semantics. Its ops
    are ONNX operators normalised so that later passes see one form of each
    idea: one convolution, one matmul, elementwise ops with numpy
    broadcasting, reductions with explicit axes, data movement with static
    attributes. All shapes are static; axes are non-negative; padding is
    explicit. Weights are `dense_resource` blobs. Every op's location carries
    the ONNX node name it came from.

    The importer normalises as it goes: Sub/Div stay binary ops, Gemm becomes
    transpose + matmul + mul + add, Flatten/Squeeze/Unsqueeze become reshape,
    Split becomes slices, Identity and inference Dropout disappear, Shape,
    Size, Range and other shape computations fold to constants.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
}

// The elementwise ops: each result element depends only on the operands'
// elements at the same (numpy-broadcast) position. graph::isElementwise
// (OpClasses.h) reads it; graph-form-kernels fuses such ops into a kernel,
// graph-partition keeps a split through them, the tile decomposition splits
// them freely. A new op is classified here, on its .td line or its class.
def Graph_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::loom::graph::traits";
}

// The kind of kernel an op's graph-form-kernels kernel takes, its cost
// class (loom::KernelKind, Target/KernelKind.h); graph::kernelKindOf
// (OpClasses.h) reads it. Every op that compiles has one (elementwise ops
// take theirs from Graph_Elementwise); graph-form-kernels refuses an op
// without. A new op states it on its .td line or its class.
class Graph_KernelKind<string kind>
    : ParamNativeOpTrait<"KernelKindIs", "::loom::KernelKind::" # kind> {
  let cppNamespace = "::loom::graph::traits";
}
def Graph_MatMulKind : Graph_KernelKind<"MatMul">;
def Graph_ConvKind : Graph_KernelKind<"Conv">;
def Graph_ReductionKind : Graph_KernelKind<"Reduction">;
def Graph_SoftmaxKind : Graph_KernelKind<"Softmax">;
def Graph_NormalizationKind : Graph_KernelKind<"Normalization">;
def Graph_DataMovementKind : Graph_KernelKind<"DataMovement">;

// The reduce_* ops (axes and keepdims attributes): graph::isReduction.
def Graph_Reduce : NativeOpTrait<"Reduce"> {
  let cppNamespace = "::loom::graph::traits";
}

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

#endif // LOOM_GRAPH_BASE
