// Tests graph-partition's choice among near-balanced cuts: at the best
// stage time, h1 h2 | add h3 cuts where h1 and h2 both cross; within 5% of
// it, h1 h2 add | h3 moves only the sum, so the add goes to the first stage.
// RUN: %loom-opt --graph-partition="target=tiny chips=2 tp=1 pp=2" %s | FileCheck %s

// CHECK-LABEL: func.func @cut(
// CHECK: graph.matmul {{.*}}graph.chip = 0
// CHECK: graph.matmul {{.*}}graph.chip = 0
// CHECK: graph.add {{.*}}graph.chip = 0
// CHECK: graph.matmul {{.*}}graph.chip = 1
func.func @cut(%x: tensor<16x512xf32> {graph.name = "x"}) -> (tensor<16x512xf32> {graph.name = "y"}) {
  %w1 = graph.constant {value = dense<0.01> : tensor<512x512xf32>} : () -> tensor<512x512xf32>
  %w2 = graph.constant {value = dense<0.01> : tensor<512x512xf32>} : () -> tensor<512x512xf32>
  %w3 = graph.constant {value = dense<0.01> : tensor<512x512xf32>} : () -> tensor<512x512xf32>
  %h1 = graph.matmul %x, %w1 : (tensor<16x512xf32>, tensor<512x512xf32>) -> tensor<16x512xf32>
  %h2 = graph.matmul %h1, %w2 : (tensor<16x512xf32>, tensor<512x512xf32>) -> tensor<16x512xf32>
  %s = graph.add %h2, %h1 : (tensor<16x512xf32>, tensor<16x512xf32>) -> tensor<16x512xf32>
  %h3 = graph.matmul %s, %w3 : (tensor<16x512xf32>, tensor<512x512xf32>) -> tensor<16x512xf32>
  return %h3 : tensor<16x512xf32>
}
