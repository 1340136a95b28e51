// Tests that graph-partition keeps a split through every op ODS marks
// elementwise (Graph_Elementwise), the list graph-form-kernels fuses by.
// Its own hand list lacked tan, the comparisons and select (among
// others): a column-parallel projection's result was gathered before
// them. Now each chip applies them to its own columns and the result
// leaves as per-chip parts, with no collective.
// RUN: %loom-opt --graph-partition="target=tiny chips=2 tp=2 pp=1" %s | FileCheck %s

// CHECK-LABEL: func.func @tan_select(
// CHECK-SAME: -> (tensor<1x8xf32> {graph.name = "y", graph.part = array<i64: 1, 0, 2>}, tensor<1x8xf32> {graph.name = "y", graph.part = array<i64: 1, 1, 2>})
// CHECK-NOT: graph.all_gather
// CHECK: graph.tan %{{.*}} {graph.chip = 0 : i64} : (tensor<1x8xf32>) -> tensor<1x8xf32>
// CHECK: graph.tan %{{.*}} {graph.chip = 1 : i64} : (tensor<1x8xf32>) -> tensor<1x8xf32>
// CHECK: graph.greater %{{.*}} {graph.chip = 0 : i64} : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xi1>
// CHECK: graph.select %{{.*}} {graph.chip = 0 : i64} : (tensor<1x8xi1>, tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
// CHECK-NOT: graph.all_gather
// CHECK: return
func.func @tan_select(%x: tensor<1x16xf32> {graph.name = "x", graph.whole}) -> (tensor<1x16xf32> {graph.name = "y"}) {
  %w = graph.constant {value = dense<0.5> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %zero = graph.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %h = graph.matmul %x, %w : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %t = graph.tan %h : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %c = graph.greater %t, %zero : (tensor<1x16xf32>, tensor<f32>) -> tensor<1x16xi1>
  %y = graph.select %c, %t, %zero : (tensor<1x16xi1>, tensor<1x16xf32>, tensor<f32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}
