// Tests graph-to-spatial's balance across chips with program outputs.
// RUN: %loom-opt --graph-to-spatial=target=tiny %s | FileCheck %s

// Program outputs stay on their tiles until the input ends (a decode step's
// updated KV cache; a copy per input in flight when pipelined), so across
// chips they count with the weights in the load that placement balances:
// %c's output holds tiles 0 and 1 of chip 1, and %d, which reads the same
// input, goes beside it on tiles 2 and 3 rather than onto the same tiles.
// CHECK-LABEL: func.func @outputs_spread
// CHECK: spatial.kernel %{{.*}}chip = 1 : i64{{.*}}kernel_name = "c"{{.*}}region = array<i64: 0, 0, 1, 2>
// CHECK: spatial.kernel %{{.*}}chip = 1 : i64{{.*}}kernel_name = "d"{{.*}}region = array<i64: 0, 2, 1, 2>
func.func @outputs_spread(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) attributes {graph.chips = 2 : i64, graph.pp = 2 : i64, graph.tp = 1 : i64} {
  %a = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 0 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%p: tensor<4x64xf32>):
    %q = graph.relu %p : (tensor<4x64xf32>) -> tensor<4x64xf32>
    graph.yield %q : tensor<4x64xf32>
  } loc("a")
  %c = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 1 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%p: tensor<4x64xf32>):
    %q = graph.exp %p : (tensor<4x64xf32>) -> tensor<4x64xf32>
    graph.yield %q : tensor<4x64xf32>
  } loc("c")
  %d = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 1 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%p: tensor<4x64xf32>):
    %q = graph.neg %p : (tensor<4x64xf32>) -> tensor<4x64xf32>
    graph.yield %q : tensor<4x64xf32>
  } loc("d")
  return %c, %d : tensor<4x64xf32>, tensor<4x64xf32>
}
