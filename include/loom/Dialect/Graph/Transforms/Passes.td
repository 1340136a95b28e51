//===- Passes.td - graph dialect passes --------------------*- tablegen -*-===//
#ifndef LOOM_GRAPH_PASSES
#define LOOM_GRAPH_PASSES

include "mlir/Pass/PassBase.td"

def GraphVerifyShapes : Pass<"graph-verify-shapes", "mlir::func::FuncOp"> {
  let summary = "Check that every tensor has a static shape and every op's "
                "result shape is what its operands imply";
  let description = [{
    Later passes (mapping, scheduling, allocation) need static shapes. This
    pass rejects dynamic dimensions and unranked tensors with a diagnostic at
    the op (whose location names the ONNX node), and re-runs each op's
    verifier so a graph built by hand is held to the importer's standard.
  }];
}

def GraphFoldConstants : Pass<"graph-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate ops whose operands are all constants";
  let description = [{
    Uses the golden reference evaluator to replace an op whose operands are
    all `graph.constant` with the constant it computes, when the result has at
    most `max-elements` elements (so weights are not duplicated).
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 20",
           "Largest result (in elements) that is folded">
  ];
}

#endif // LOOM_GRAPH_PASSES
