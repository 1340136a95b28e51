// Tests graph-fold-constants: ops whose operands are all constants become
// the constants the reference evaluator computes.
// RUN: %loom-opt --graph-fold-constants --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: %loom-opt --graph-fold-constants=max-elements=4 --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=LIMIT
// RUN: %loom-opt --graph-fold-constants --canonicalize --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=DCE

// Tests that a chain of constant ops folds in one sweep (the folded add makes
// the reduce_sum foldable), that the folded ops are left in place without
// uses, and that the canonicalizer then deletes them.
// CHECK-LABEL: func.func @chain(
// CHECK-DAG: %[[SUM:.*]] = graph.constant {value = dense<{{\[\[}}1.100000e+01, 1.200000e+01, 1.300000e+01], [1.400000e+01, 1.500000e+01, 1.600000e+01]]> : tensor<2x3xf32>}
// CHECK-DAG: %[[RED:.*]] = graph.constant {value = dense<[2.500000e+01, 2.700000e+01, 2.900000e+01]> : tensor<3xf32>}
// CHECK-DAG: graph.add
// CHECK-DAG: graph.reduce_sum
// CHECK: return %[[SUM]], %[[RED]] : tensor<2x3xf32>, tensor<3xf32>
// DCE-LABEL: func.func @chain(
// DCE-NOT: graph.add
// DCE-NOT: graph.reduce_sum
// DCE: return
func.func @chain() -> (tensor<2x3xf32>, tensor<3xf32>) {
  %a = graph.constant {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %b = graph.constant {value = dense<10.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<3xf32>
}

// -----

// Tests that an op with a non-constant operand is not folded.
// CHECK-LABEL: func.func @not_all_constant(
// CHECK-SAME: %[[X:[^:]*]]: tensor<3xf32>
// CHECK: %[[C:.*]] = graph.constant {value = dense<2.000000e+00> : tensor<3xf32>}
// CHECK: %[[M:.*]] = graph.mul %[[C]], %[[X]] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: return %[[M]]
func.func @not_all_constant(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = graph.constant {value = dense<2.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = graph.mul %c, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that both results of a multi-result op (topk) are folded.
// CHECK-LABEL: func.func @multi_result(
// CHECK-DAG: %[[V:.*]] = graph.constant {value = dense<[9.000000e+00, 4.000000e+00]> : tensor<2xf32>}
// CHECK-DAG: %[[I:.*]] = graph.constant {value = dense<[2, 0]> : tensor<2xi64>}
// CHECK: return %[[V]], %[[I]]
func.func @multi_result() -> (tensor<2xf32>, tensor<2xi64>) {
  %a = graph.constant {value = dense<[4.0, 1.0, 9.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %v, %i = graph.topk %a {axis = 0 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<3xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  return %v, %i : tensor<2xf32>, tensor<2xi64>
}

// -----

// Tests that dense_resource weights are read for folding, and that integer
// and boolean results fold too.
// CHECK-LABEL: func.func @resource_and_types(
// CHECK-DAG: %[[NEG:.*]] = graph.constant {value = dense<[-1.000000e+00, -2.000000e+00]> : tensor<2xf32>}
// CHECK-DAG: %[[CAST:.*]] = graph.constant {value = dense<[1, 2]> : tensor<2xi32>}
// CHECK-DAG: %[[EQ:.*]] = graph.constant {value = dense<[false, true]> : tensor<2xi1>}
// CHECK: return %[[NEG]], %[[CAST]], %[[EQ]]
func.func @resource_and_types() -> (tensor<2xf32>, tensor<2xi32>, tensor<2xi1>) {
  %w = graph.constant {value = dense_resource<w> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = graph.neg %w : (tensor<2xf32>) -> tensor<2xf32>
  %1 = graph.cast %w : (tensor<2xf32>) -> tensor<2xi32>
  %two = graph.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %2 = graph.equal %w, %two : (tensor<2xf32>, tensor<f32>) -> tensor<2xi1>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xi32>, tensor<2xi1>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// Tests that max-elements bounds what folds: with max-elements=4 the
// 6-element add stays (and so does the reduction that consumes it), while
// the 2-element neg still folds. By default all three fold.
// CHECK-LABEL: func.func @max_elements(
// CHECK-DAG: %[[ADD:.*]] = graph.constant {value = dense<3.000000e+00> : tensor<2x3xf32>}
// CHECK-DAG: %[[RED:.*]] = graph.constant {value = dense<9.000000e+00> : tensor<2xf32>}
// CHECK-DAG: %[[NEG:.*]] = graph.constant {value = dense<-1.000000e+00> : tensor<2xf32>}
// CHECK: return %[[ADD]], %[[RED]], %[[NEG]]
// LIMIT-LABEL: func.func @max_elements(
// LIMIT-DAG: %[[ADD:.*]] = graph.add
// LIMIT-DAG: %[[RED:.*]] = graph.reduce_sum %[[ADD]]
// LIMIT-DAG: %[[NEG:.*]] = graph.constant {value = dense<-1.000000e+00> : tensor<2xf32>}
// LIMIT: return %[[ADD]], %[[RED]], %[[NEG]]
func.func @max_elements() -> (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>) {
  %a = graph.constant {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %b = graph.constant {value = dense<2.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %c = graph.constant {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %2 = graph.neg %c : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Tests that an op the evaluator rejects is reported at the op and fails the
// pass instead of folding to garbage.
func.func @evaluation_error() -> tensor<2xf32> {
  %a = graph.constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %i = graph.constant {value = dense<[0, 7]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{constant folding failed: gather: index 7 out of range for dimension 3}}
  %0 = graph.gather %a, %i {axis = 0 : i64} : (tensor<3xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
