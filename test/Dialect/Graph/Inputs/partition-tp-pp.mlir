// expected-error @+1 {{graph-partition: tp 2 x pp 3 is 6 chips, not the 4 asked for}}
func.func @f(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = graph.relu %x : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
