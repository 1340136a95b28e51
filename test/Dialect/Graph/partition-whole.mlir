// Tests graph-partition's graph.whole arguments: a model input the host
// scatters is free to split, so a column-split projection added to it keeps
// the stream split; an input marked graph.whole (a body-only graph's layer
// input, which every chip holds whole) is not, so the projection's columns
// are gathered instead and the residual stays whole.
// RUN: %loom-opt --split-input-file --graph-partition="target=tiny chips=2 tp=2 pp=1" %s | FileCheck %s

// CHECK-LABEL: func.func @scattered(
// CHECK-SAME: graph.part = array<i64: 1, 0, 2>
// CHECK-NOT: graph.all_gather
// CHECK: return
func.func @scattered(%x: tensor<1x8xf32> {graph.name = "x"}) -> (tensor<1x8xf32> {graph.name = "y"}) {
  %w = graph.constant {value = dense<0.5> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %m = graph.matmul %x, %w : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %y = graph.add %m, %x : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

// -----

// CHECK-LABEL: func.func @whole(
// CHECK-SAME: graph.part = array<i64: -1, 0, 2>
// CHECK: graph.all_gather
// CHECK: graph.add
// CHECK-SAME: graph.chip = 0
func.func @whole(%x: tensor<1x8xf32> {graph.name = "x", graph.whole}) -> (tensor<1x8xf32> {graph.name = "y"}) {
  %w = graph.constant {value = dense<0.5> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %m = graph.matmul %x, %w : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %y = graph.add %m, %x : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
