// expected-error @+1 {{graph-partition: tp 3 does not divide 2 chips}}
func.func @f(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = graph.relu %x : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
