// Tests graph-to-spatial's errors across chips: one diagnostic each.
// RUN: %loom-opt --split-input-file --verify-diagnostics --graph-to-spatial=target=tiny %s
// RUN: %loom-opt --split-input-file --verify-diagnostics --graph-to-spatial="target=tiny mapping=hybrid" %S/Inputs/chips-hybrid.mlir
// RUN: %loom-opt --split-input-file --verify-diagnostics --graph-to-spatial="target=tiny mapping=pipelined" %S/Inputs/chips-pipelined.mlir
// RUN: %loom-opt --split-input-file --verify-diagnostics --graph-to-spatial=target=lp30 %S/Inputs/chips-no-links.mlir

// Tests that a collective naming a chip outside the function's chips is
// rejected.
func.func @chip_outside(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> attributes {graph.chips = 2 : i64} {
  // expected-error @+1 {{graph-to-spatial: chip 2 is outside the 2 chips of the function (graph.chips)}}
  %r:2 = graph.all_reduce %a, %b {chips = array<i64: 0, 2>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0 : tensor<4xf32>
}
