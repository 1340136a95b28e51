// Tests graph-verify-shapes: static shapes pass through untouched; dynamic
// dimensions and unranked or non-tensor values are reported where they occur.
// RUN: %loom-opt --graph-verify-shapes --split-input-file --verify-diagnostics %s | FileCheck %s

// Tests that a fully static graph is accepted and left unchanged.
// CHECK-LABEL: func.func @static(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3xf32>, %[[Y:[^:]*]]: tensor<3xf32>
// CHECK-NEXT: %[[A:.*]] = graph.add %[[X]], %[[Y]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V:.*]], %[[I:.*]] = graph.topk %[[A]] {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
// CHECK-NEXT: return %[[V]], %[[I]]
func.func @static(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>) {
  %0 = graph.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %v, %i = graph.topk %0 {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  return %v, %i : tensor<2x2xf32>, tensor<2x2xi64>
}

// -----

// Tests that a scalar (rank-0) tensor counts as static.
// CHECK-LABEL: func.func @scalar(
// CHECK: graph.neg
func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  %0 = graph.neg %x : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that a dynamic dimension on a function argument is rejected at the
// function, and the op consuming it is reported for its own dynamic result:
// every offender is named, not just the first.
// expected-error @+1 {{argument has a dynamic shape: 'tensor<?x3xf32>'}}
func.func @dynamic_argument(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{result #0 has a dynamic shape: 'tensor<?x3xf32>'}}
  %0 = graph.relu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Tests that a dynamic dimension in an op result is rejected at that op,
// naming which result.
func.func @dynamic_second_result(%x: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x?xi64>) {
  // expected-error @+1 {{result #1 has a dynamic shape: 'tensor<2x?xi64>'}}
  %v, %i = graph.topk %x {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x?xi64>)
  return %v, %i : tensor<2x2xf32>, tensor<2x?xi64>
}

// -----

// Tests that a reshape out of a dynamic shape gets past the op verifier
// (which cannot count the elements) and is reported by the pass.
// expected-error @+1 {{argument has a dynamic shape: 'tensor<?x3xf32>'}}
func.func @dynamic_reshape(%x: tensor<?x3xf32>) -> tensor<6xf32> {
  %0 = graph.reshape %x : (tensor<?x3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Tests that an unranked function argument is rejected.
// expected-error @+1 {{argument is not a ranked tensor: 'tensor<*xf32>'}}
func.func @unranked_argument(%x: tensor<*xf32>) -> tensor<*xf32> {
  return %x : tensor<*xf32>
}

// -----

// Tests that a non-tensor function argument is rejected.
// expected-error @+1 {{argument is not a ranked tensor: 'i32'}}
func.func @scalar_argument(%x: i32) -> i32 {
  return %x : i32
}
