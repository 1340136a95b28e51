// expected-error @+1 {{graph-to-spatial: no pipelined mapping across 2 chips with one pipeline stage (pp 1): every chip works on every input}}
func.func @pipelined(%x: tensor<4xf32>) -> tensor<4xf32> attributes {graph.chips = 2 : i64, graph.pp = 1 : i64, graph.tp = 2 : i64} {
  %r = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    %q = graph.relu %p : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %q : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
