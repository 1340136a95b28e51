// Tests graph-fold-batch-norm: a batch_norm after a single-use convolution
// with constant weights becomes that convolution with scaled weights and an
// adjusted bias.
// RUN: %loom-opt --graph-fold-batch-norm --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: %loom-opt --graph-fold-batch-norm --canonicalize --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=DCE

// Tests that conv + batch_norm folds: s = scale / sqrt(var + eps) = [1, 3],
// weight' = weight * s = [1, 6], bias' = (bias - mean) * s + shift =
// [0.5, -8], and that the canonicalizer then deletes the old constants.
// CHECK-LABEL: func.func @conv_bias(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x1x2x2xf32>
// CHECK-DAG: %[[W:.*]] = graph.constant {value = dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK-DAG: %[[B:.*]] = graph.constant {value = dense<[5.000000e-01, -8.000000e+00]> : tensor<2xf32>}
// CHECK: %[[Y:.*]] = graph.conv %[[X]], %[[W]], %[[B]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
// CHECK-NOT: graph.batch_norm
// CHECK: return %[[Y]]
// DCE-LABEL: func.func @conv_bias(
// DCE-COUNT-2: graph.constant
// DCE-NOT: graph.constant
// DCE: graph.conv
// DCE-NEXT: return
func.func @conv_bias(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant {value = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %b = graph.constant {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %scale = graph.constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %shift = graph.constant {value = dense<[0.5, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = graph.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = graph.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = graph.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %y = graph.batch_norm %c, %scale, %shift, %mean, %var {epsilon = 1.0 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// Tests that a convolution without a bias gets one: bias' = -mean * s + shift
// = [-0.5, -5], and that dense_resource weights are read.
// CHECK-LABEL: func.func @conv_no_bias(
// CHECK-DAG: %[[W:.*]] = graph.constant {value = dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK-DAG: %[[B:.*]] = graph.constant {value = dense<[-5.000000e-01, -5.000000e+00]> : tensor<2xf32>}
// CHECK: graph.conv %{{.*}}, %[[W]], %[[B]] {
// CHECK-NOT: graph.batch_norm
func.func @conv_no_bias(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant {value = dense_resource<w> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %scale = graph.constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %shift = graph.constant {value = dense<[0.5, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = graph.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = graph.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y = graph.batch_norm %c, %scale, %shift, %mean, %var {epsilon = 1.0 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// Tests that a grouped conv_transpose folds with its own channel layout:
// weight [C=4, M/g=1, 1, 1] with 2 groups puts weight rows 0-1 in output
// channel 0 and rows 2-3 in channel 1, so weight' = [1, 1, 3, 3].
// CHECK-LABEL: func.func @conv_transpose_grouped(
// CHECK-DAG: %[[W:.*]] = graph.constant {value = dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}1.000000e+00]]], {{\[\[\[}}3.000000e+00]]], {{\[\[\[}}3.000000e+00]]]]> : tensor<4x1x1x1xf32>}
// CHECK-DAG: %[[B:.*]] = graph.constant {value = dense<[-5.000000e-01, -5.000000e+00]> : tensor<2xf32>}
// CHECK: graph.conv_transpose %{{.*}}, %[[W]], %[[B]] {
// CHECK-NOT: graph.batch_norm
func.func @conv_transpose_grouped(%x: tensor<1x4x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant {value = dense<1.0> : tensor<4x1x1x1xf32>} : () -> tensor<4x1x1x1xf32>
  %scale = graph.constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %shift = graph.constant {value = dense<[0.5, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = graph.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = graph.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = graph.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x2x2xf32>, tensor<4x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y = graph.batch_norm %c, %scale, %shift, %mean, %var {epsilon = 1.0 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// Tests that a batch_norm whose input is not a convolution stays.
// CHECK-LABEL: func.func @standalone(
// CHECK: graph.batch_norm
func.func @standalone(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %p = graph.constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = graph.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// Tests that a convolution whose result is also used elsewhere is not
// changed (folding would change that other use).
// CHECK-LABEL: func.func @conv_two_uses(
// CHECK: %[[C:.*]] = graph.conv
// CHECK: %[[Y:.*]] = graph.batch_norm %[[C]]
// CHECK: return %[[C]], %[[Y]]
func.func @conv_two_uses(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = graph.constant {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %p = graph.constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y = graph.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %c, %y : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// Tests that a convolution with a non-constant weight is not folded.
// CHECK-LABEL: func.func @weight_not_constant(
// CHECK: graph.conv
// CHECK: graph.batch_norm
func.func @weight_not_constant(%x: tensor<1x1x2x2xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32> {
  %p = graph.constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y = graph.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// Tests that a batch_norm with a non-constant parameter (the variance) is not
// folded.
// CHECK-LABEL: func.func @param_not_constant(
// CHECK: graph.conv
// CHECK: graph.batch_norm
func.func @param_not_constant(%x: tensor<1x1x2x2xf32>, %var: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %p = graph.constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y = graph.batch_norm %c, %p, %p, %p, %var {epsilon = 1.0 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// Tests that a weight whose data was elided from the text (a dense_resource
// without its blob) is left alone rather than read.
// CHECK-LABEL: func.func @elided_weight(
// CHECK: graph.conv
// CHECK: graph.batch_norm
func.func @elided_weight(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant {value = dense_resource<__elided__> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %p = graph.constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y = graph.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}
