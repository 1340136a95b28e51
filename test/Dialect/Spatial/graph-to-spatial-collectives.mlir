// Tests that graph-to-spatial turns graph.all_reduce and graph.all_gather
// into spatial.collective with the algorithm the chip network chooses for
// the group: on tiny's ring of 4 chips, ring for all four, direct for two
// neighbours, hierarchical for two chips with no link between them.
// RUN: %loom-opt --graph-to-spatial=target=tiny %s | FileCheck %s

// CHECK-LABEL: func.func @collectives
// CHECK: spatial.collective %arg0, %arg1, %arg2, %arg3 {algorithm = #spatial.collective_algorithm<ring>, axis = -1 : i64, bytes = 32 : i64, chips = array<i64: 0, 1, 2, 3>, kind = #spatial.collective_kind<all_reduce>}
// CHECK: spatial.collective %arg0, %arg1 {algorithm = #spatial.collective_algorithm<direct>, axis = 1 : i64, bytes = 32 : i64, chips = array<i64: 1, 0>, kind = #spatial.collective_kind<all_gather>}
// CHECK: spatial.collective %arg0, %arg2 {algorithm = #spatial.collective_algorithm<hierarchical>, axis = -1 : i64, bytes = 32 : i64, chips = array<i64: 0, 2>, kind = #spatial.collective_kind<all_reduce>}
func.func @collectives(%a: tensor<1x8xf32>, %b: tensor<1x8xf32>, %c: tensor<1x8xf32>, %d: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x16xf32>, tensor<1x8xf32>) attributes {graph.chips = 4 : i64, graph.pp = 1 : i64, graph.tp = 4 : i64} {
  %r:4 = graph.all_reduce %a, %b, %c, %d {chips = array<i64: 0, 1, 2, 3>} : (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>)
  %g:2 = graph.all_gather %a, %b {axis = 1 : i64, chips = array<i64: 1, 0>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>)
  %h:2 = graph.all_reduce %a, %c {chips = array<i64: 0, 2>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
  return %r#1, %g#0, %h#0 : tensor<1x8xf32>, tensor<1x16xf32>, tensor<1x8xf32>
}
