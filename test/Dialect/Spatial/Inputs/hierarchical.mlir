// Hierarchical all-reduce over chips 0, 1 (node 0) and 8, 9 (node 1) of an
// LPX rack: a direct reduce-scatter inside each node (2 transfers a node),
// a direct all-reduce of each chunk between the chips of equal rank in the
// two nodes (global links, 4 transfers), a direct all-gather inside each
// node (4 transfers).
// HIER-LABEL: func.func @hier(
// HIER: spatial.transfer {{.*}}from_chip = 1 : i64, {{.*}}hops = 1 : i64
// HIER: spatial.transfer {{.*}}hops = 1 : i64, {{.*}}to_chip = 1 : i64
// HIER: spatial.transfer {{.*}}from_chip = 9 : i64, {{.*}}hops = 1 : i64, {{.*}}to_chip = 8 : i64
// HIER-COUNT-9: spatial.transfer {{.*}}hops = 1 : i64
// HIER-NOT: hops = 2
// HIER-NOT: spatial.collective
func.func @hier(%a: tensor<1x8xf32>, %b: tensor<1x8xf32>, %c: tensor<1x8xf32>, %d: tensor<1x8xf32>) -> tensor<1x8xf32> attributes {spatial.chips = 16 : i64} {
  %r:4 = spatial.collective %a, %b, %c, %d {algorithm = #spatial.collective_algorithm<hierarchical>, axis = -1 : i64, bytes = 32 : i64, chips = array<i64: 0, 1, 8, 9>, kind = #spatial.collective_kind<all_reduce>} : (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>)
  return %r#3 : tensor<1x8xf32>
}
