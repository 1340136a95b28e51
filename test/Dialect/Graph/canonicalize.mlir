// Tests the graph dialect's folders under the canonicalizer.
// RUN: %loom-opt --canonicalize --split-input-file %s | FileCheck %s

// Tests that adding a splat -0.0 (the float identity of addition) of the
// result type folds to the other operand.
// CHECK-LABEL: func.func @add_zero(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3xf32>
// CHECK-NEXT: return %[[X]] : tensor<2x3xf32>
func.func @add_zero(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = graph.constant {value = dense<-0.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = graph.add %x, %zero : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a broadcast scalar -0.0 folds too when it does not change x's
// shape, and that integer zeros fold.
// CHECK-LABEL: func.func @add_zero_scalar_and_int(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3xf32>, %[[I:[^:]*]]: tensor<4xi32>
// CHECK-NEXT: return %[[X]], %[[I]] : tensor<2x3xf32>, tensor<4xi32>
func.func @add_zero_scalar_and_int(%x: tensor<2x3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>) {
  %zero = graph.constant {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = graph.add %x, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %izero = graph.constant {value = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %1 = graph.add %i, %izero : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<2x3xf32>, tensor<4xi32>
}

// -----

// Tests that x + 0 does not fold when the zero broadcasts x to a larger
// shape: the result type differs from x's, so x cannot replace it.
// CHECK-LABEL: func.func @add_zero_broadcasts(
// CHECK-SAME: %[[X:[^:]*]]: tensor<3xf32>
// CHECK-NEXT: %[[ZERO:.*]] = graph.constant {value = dense<0.000000e+00> : tensor<2x3xf32>}
// CHECK-NEXT: %[[SUM:.*]] = graph.add %[[X]], %[[ZERO]] : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[SUM]]
func.func @add_zero_broadcasts(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %zero = graph.constant {value = dense<0.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = graph.add %x, %zero : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that adding a constant that is not all zeros does not fold.
// CHECK-LABEL: func.func @add_nonzero(
// CHECK: graph.add
func.func @add_nonzero(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = graph.constant {value = dense<[0.0, 1.0, 0.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = graph.add %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that multiplying by a splat one folds to the other operand, for
// floats and integers.
// CHECK-LABEL: func.func @mul_one(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3xf32>, %[[I:[^:]*]]: tensor<4xi64>
// CHECK-NEXT: return %[[X]], %[[I]] : tensor<2x3xf32>, tensor<4xi64>
func.func @mul_one(%x: tensor<2x3xf32>, %i: tensor<4xi64>) -> (tensor<2x3xf32>, tensor<4xi64>) {
  %one = graph.constant {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = graph.mul %x, %one : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %ione = graph.constant {value = dense<1> : tensor<4xi64>} : () -> tensor<4xi64>
  %1 = graph.mul %i, %ione : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0, %1 : tensor<2x3xf32>, tensor<4xi64>
}

// -----

// Tests that x * 1 and x + -0.0 also fold when the constant is a dense_resource
// blob, as ONNX initializers are, and that a one-element blob holding another
// value is left alone (this used to abort: the folder asked the blob for an
// APFloat splat).
// CHECK-LABEL: func.func @resource_constants(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3xf32>, %[[I:[^:]*]]: tensor<4xi64>
// CHECK: %[[TWO:.*]] = graph.constant {value = dense_resource<two> : tensor<f32>}
// CHECK: %[[M:.*]] = graph.mul %[[X]], %[[TWO]] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[X]], %[[X]], %[[I]], %[[M]]
func.func @resource_constants(%x: tensor<2x3xf32>, %i: tensor<4xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>, tensor<2x3xf32>) {
  %one = graph.constant {value = dense_resource<one> : tensor<f32>} : () -> tensor<f32>
  %0 = graph.mul %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %zeros = graph.constant {value = dense_resource<zeros> : tensor<3xf32>} : () -> tensor<3xf32>
  %1 = graph.add %x, %zeros : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %izero = graph.constant {value = dense_resource<izero> : tensor<1xi64>} : () -> tensor<1xi64>
  %2 = graph.add %i, %izero : (tensor<4xi64>, tensor<1xi64>) -> tensor<4xi64>
  %two = graph.constant {value = dense_resource<two> : tensor<f32>} : () -> tensor<f32>
  %3 = graph.mul %x, %two : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>, tensor<2x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      one: "0x040000000000803F",
      zeros: "0x04000000000000800000008000000080",
      izero: "0x080000000000000000000000",
      two: "0x0400000000000040"
    }
  }
#-}

// -----

// Tests that multiplying by a value other than one, or by a one that
// broadcasts x, does not fold.
// CHECK-LABEL: func.func @mul_no_fold(
// CHECK-SAME: %[[X:[^:]*]]: tensor<3xf32>
// CHECK-DAG: %[[TWO:.*]] = graph.constant {value = dense<2.000000e+00> : tensor<3xf32>}
// CHECK-DAG: %[[ONE:.*]] = graph.constant {value = dense<1.000000e+00> : tensor<2x3xf32>}
// CHECK: %[[A:.*]] = graph.mul %[[X]], %[[TWO]] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[B:.*]] = graph.mul %[[X]], %[[ONE]] : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: return %[[A]], %[[B]]
func.func @mul_no_fold(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<2x3xf32>) {
  %two = graph.constant {value = dense<2.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = graph.mul %x, %two : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %one = graph.constant {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %1 = graph.mul %x, %one : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<3xf32>, tensor<2x3xf32>
}

// -----

// Tests that an identity transpose folds away and a real one stays.
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x4xf32>
// CHECK-NEXT: %[[T:.*]] = graph.transpose %[[X]] {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: return %[[X]], %[[T]]
func.func @transpose(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x4x3xf32>) {
  %0 = graph.transpose %x {perm = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = graph.transpose %0 {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x4x3xf32>
}

// -----

// Tests that a reshape of a reshape becomes one reshape of the original
// value, and the inner reshape is then dead.
// CHECK-LABEL: func.func @reshape_reshape(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x4xf32>
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]] : tensor<4x6xf32>
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = graph.reshape %x : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %1 = graph.reshape %0 : (tensor<24xf32>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// Tests that a reshape chain back to the original type folds all the way to
// the original value.
// CHECK-LABEL: func.func @reshape_round_trip(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3xf32>
// CHECK-NEXT: return %[[X]] : tensor<2x3xf32>
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
  %1 = graph.reshape %0 : (tensor<6xf32>) -> tensor<3x2xf32>
  %2 = graph.reshape %1 : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// Tests that a reshape and a cast to the operand's own type fold away, and a
// cast that changes the element type stays.
// CHECK-LABEL: func.func @same_type(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3xf32>
// CHECK-NEXT: %[[C:.*]] = graph.cast %[[X]] : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK-NEXT: return %[[X]], %[[X]], %[[C]]
func.func @same_type(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf16>) {
  %0 = graph.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf16>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf16>
}

// -----

// Tests that an unused constant is removed.
// CHECK-LABEL: func.func @dead_constant(
// CHECK-NOT: graph.constant
// CHECK: return
func.func @dead_constant(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = graph.constant {value = dense<5.0> : tensor<3xf32>} : () -> tensor<3xf32>
  return %x : tensor<3xf32>
}
