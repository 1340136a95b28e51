// Tests graph-partition's elementwise rule for a small computed value that
// meets a split: a gate per head (or per expert), [1, 2, 1, 1], multiplying
// activations split over the (head, column) dims [1, 2, 2, 4] on 4 chips.
// The gate has the outer dim of the split and broadcasts along the inner
// one, so each chip slices its gate from its own copy (chips 0 and 1 take
// gate 0, chips 2 and 3 gate 1) and the activations stay split: no
// all_gather, and the down projection's partial sums meet in one
// all_reduce. Before, a whole computed operand made the split be gathered.
// The second function runs an op of two results (topk's values and
// indices) replicated across the chips: both results are given. In the
// third the small operand is an input marked whole, which the host does not
// scatter: each chip gets it whole (part axis -1) and the split is gathered.
// RUN: %loom-opt --split-input-file --graph-partition="target=tiny chips=4 tp=4 pp=1" %s | FileCheck %s

// CHECK-LABEL: func.func @gate(
// CHECK-NOT: graph.all_gather
// CHECK: graph.slice %{{.*}} {axes = array<i64: 1>, ends = array<i64: 1>, graph.chip = 0 : i64, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<1x2x1x1xf32>) -> tensor<1x1x1x1xf32>
// CHECK: graph.slice %{{.*}} {axes = array<i64: 1>, ends = array<i64: 1>, graph.chip = 1 : i64, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<1x2x1x1xf32>) -> tensor<1x1x1x1xf32>
// CHECK: graph.slice %{{.*}} {axes = array<i64: 1>, ends = array<i64: 2>, graph.chip = 2 : i64, starts = array<i64: 1>, steps = array<i64: 1>} : (tensor<1x2x1x1xf32>) -> tensor<1x1x1x1xf32>
// CHECK: graph.slice %{{.*}} {axes = array<i64: 1>, ends = array<i64: 2>, graph.chip = 3 : i64, starts = array<i64: 1>, steps = array<i64: 1>} : (tensor<1x2x1x1xf32>) -> tensor<1x1x1x1xf32>
// CHECK: graph.mul {{.*}} {graph.chip = 3 : i64} : (tensor<1x1x1x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x4xf32>
// CHECK-NOT: graph.all_gather
// CHECK: graph.all_reduce
// CHECK-NOT: graph.all_gather
// CHECK: return
func.func @gate(%x: tensor<1x16xf32> {graph.name = "x", graph.whole}, %g: tensor<1x2xf32> {graph.name = "g"}) -> (tensor<1x16xf32> {graph.name = "y"}) {
  %w = graph.constant {value = dense<0.5> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %wo = graph.constant {value = dense<0.25> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %h0 = graph.matmul %x, %w : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %h = graph.reshape %h0 : (tensor<1x16xf32>) -> tensor<1x2x2x4xf32>
  %e = graph.exp %g : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %s = graph.reshape %e : (tensor<1x2xf32>) -> tensor<1x2x1x1xf32>
  %z = graph.mul %h, %s : (tensor<1x2x2x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x2x4xf32>
  %m = graph.reshape %z : (tensor<1x2x2x4xf32>) -> tensor<1x16xf32>
  %y = graph.matmul %m, %wo : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}

// -----

// CHECK-LABEL: func.func @topk(
// CHECK: graph.all_gather
// CHECK: %[[V:.*]], %[[I:.*]] = graph.topk %{{.*}} {axis = 1 : i64, graph.chip = 0 : i64
// CHECK: return %[[V]], %[[I]] : tensor<1x2xf32>, tensor<1x2xi64>
func.func @topk(%x: tensor<1x16xf32> {graph.name = "x", graph.whole}) -> (tensor<1x2xf32> {graph.name = "values"}, tensor<1x2xi64> {graph.name = "indices"}) {
  %w = graph.constant {value = dense<0.5> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %h = graph.matmul %x, %w : (tensor<1x16xf32>, tensor<16x8xf32>) -> tensor<1x8xf32>
  %v, %i = graph.topk %h {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<1x8xf32>) -> (tensor<1x2xf32>, tensor<1x2xi64>)
  return %v, %i : tensor<1x2xf32>, tensor<1x2xi64>
}

// -----

// CHECK-LABEL: func.func @whole_gate(
// CHECK-SAME: graph.name = "x", graph.part = array<i64: -1, 0, 4>, graph.whole
// CHECK-SAME: graph.name = "x", graph.part = array<i64: -1, 3, 4>, graph.whole
// CHECK: graph.all_gather
func.func @whole_gate(%a: tensor<4x8xf32> {graph.name = "a"}, %x: tensor<1x8xf32> {graph.name = "x", graph.whole}) -> (tensor<4x8xf32> {graph.name = "y"}) {
  %w = graph.constant {value = dense<0.5> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %m = graph.matmul %a, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y = graph.mul %m, %x : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
