// expected-error @+1 {{graph-to-spatial: no hybrid mapping across 2 chips: each chip's kernels are placed one at a time on its tiles}}
func.func @hybrid(%x: tensor<4xf32>) -> tensor<4xf32> attributes {graph.chips = 2 : i64, graph.pp = 2 : i64, graph.tp = 1 : i64} {
  %r = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    %q = graph.relu %p : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %q : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
