// expected-error @+1 {{graph-to-spatial: lp30 has no chip-to-chip links (system.links), so it cannot run a program across 2 chips}}
func.func @no_links(%x: tensor<4xf32>) -> tensor<4xf32> attributes {graph.chips = 2 : i64} {
  return %x : tensor<4xf32>
}
