// Tests graph-fold-quantized: a matmul or conv whose operands are 8-bit
// tensors as the importer writes DequantizeLinear (cast, sub zero point,
// mul scale), MatMulInteger/QLinearMatMul (cast to i32, sub) or
// QLinearConv/ConvInteger (cast to f64, sub) reads the 8-bit tensors with
// its zero points as attributes and an i32 result; the scales follow it.
// RUN: %loom-opt --graph-fold-quantized --canonicalize --split-input-file --verify-diagnostics %s | FileCheck %s

// Tests QDQ matmul: uint8 activation (zero point 128, scale 0.5) times an
// int8 weight with per-column scales [2, 4]: one int8 matmul, its i32 sum
// cast to f32 and multiplied by the product of the scales.
// CHECK-LABEL: func.func @qdq_matmul(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xui8>
// CHECK: %[[M:.*]] = graph.matmul %[[A]], %{{.*}} {lhs_zero_point = 128 : i64, rhs_zero_point = 0 : i64} : (tensor<4x8xui8>, tensor<8x2xi8>) -> tensor<4x2xi32>
// CHECK-DAG: %[[S:.*]] = graph.mul %{{.*}}, %{{.*}} : (tensor<f32>, tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK-DAG: %[[F:.*]] = graph.cast %[[M]] : (tensor<4x2xi32>) -> tensor<4x2xf32>
// CHECK: %[[Y:.*]] = graph.mul %[[F]], %[[S]] : (tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
// CHECK: return %[[Y]]
func.func @qdq_matmul(%a: tensor<4x8xui8>) -> tensor<4x2xf32> {
  %zp = graph.constant {value = dense<128.0> : tensor<f32>} : () -> tensor<f32>
  %sa = graph.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %w = graph.constant {value = dense<3> : tensor<8x2xi8>} : () -> tensor<8x2xi8>
  %sw = graph.constant {value = dense<[[2.0, 4.0]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %af = graph.cast %a : (tensor<4x8xui8>) -> tensor<4x8xf32>
  %ac = graph.sub %af, %zp : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %ad = graph.mul %ac, %sa : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %wf = graph.cast %w : (tensor<8x2xi8>) -> tensor<8x2xf32>
  %wd = graph.mul %wf, %sw : (tensor<8x2xf32>, tensor<1x2xf32>) -> tensor<8x2xf32>
  %y = graph.matmul %ad, %wd : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Tests a Gemm's transposed weight: the transpose moves to the int8 weight.
// CHECK-LABEL: func.func @qdq_transposed_weight(
// CHECK: %[[T:.*]] = graph.transpose %{{.*}} {perm = array<i64: 1, 0>} : (tensor<2x8xi8>) -> tensor<8x2xi8>
// CHECK: graph.matmul %{{.*}}, %[[T]] {lhs_zero_point = 0 : i64, rhs_zero_point = 0 : i64} : (tensor<4x8xi8>, tensor<8x2xi8>) -> tensor<4x2xi32>
func.func @qdq_transposed_weight(%a: tensor<4x8xi8>, %w: tensor<2x8xi8>) -> tensor<4x2xf32> {
  %sa = graph.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %af = graph.cast %a : (tensor<4x8xi8>) -> tensor<4x8xf32>
  %ad = graph.mul %af, %sa : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %wf = graph.cast %w : (tensor<2x8xi8>) -> tensor<2x8xf32>
  %wd = graph.mul %wf, %sa : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %wt = graph.transpose %wd {perm = array<i64: 1, 0>} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  %y = graph.matmul %ad, %wt : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Tests MatMulInteger's form (i32 centring): the same values, so the new
// matmul replaces the old one with no epilogue.
// CHECK-LABEL: func.func @matmul_integer(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xui8>, %[[B:[^:]*]]: tensor<8x2xi8>
// CHECK: %[[M:.*]] = graph.matmul %[[A]], %[[B]] {lhs_zero_point = 7 : i64, rhs_zero_point = -3 : i64} : (tensor<4x8xui8>, tensor<8x2xi8>) -> tensor<4x2xi32>
// CHECK-NEXT: return %[[M]]
func.func @matmul_integer(%a: tensor<4x8xui8>, %b: tensor<8x2xi8>) -> tensor<4x2xi32> {
  %za = graph.constant {value = dense<7> : tensor<i32>} : () -> tensor<i32>
  %zb = graph.constant {value = dense<-3> : tensor<i32>} : () -> tensor<i32>
  %ai = graph.cast %a : (tensor<4x8xui8>) -> tensor<4x8xi32>
  %ac = graph.sub %ai, %za : (tensor<4x8xi32>, tensor<i32>) -> tensor<4x8xi32>
  %bi = graph.cast %b : (tensor<8x2xi8>) -> tensor<8x2xi32>
  %bc = graph.sub %bi, %zb : (tensor<8x2xi32>, tensor<i32>) -> tensor<8x2xi32>
  %y = graph.matmul %ac, %bc : (tensor<4x8xi32>, tensor<8x2xi32>) -> tensor<4x2xi32>
  return %y : tensor<4x2xi32>
}

// -----

// Tests QLinearConv's form (f64 centring) with a per-output-channel weight
// scale folded into QDQ: the conv reads the 8-bit tensors, its i32 sum is
// cast back to f64, and the f64 bias is added after it.
// CHECK-LABEL: func.func @conv_integer(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x2x4x4xui8>, %[[W:[^:]*]]: tensor<3x2x3x3xi8>
// CHECK: %[[C:.*]] = graph.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, group = 1 : i64, input_zero_point = 128 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, weight_zero_point = 0 : i64} : (tensor<1x2x4x4xui8>, tensor<3x2x3x3xi8>) -> tensor<1x3x4x4xi32>
// CHECK: %[[F:.*]] = graph.cast %[[C]] : (tensor<1x3x4x4xi32>) -> tensor<1x3x4x4xf64>
// CHECK: graph.add %[[F]], %{{.*}} : (tensor<1x3x4x4xf64>, tensor<3x1x1xf64>) -> tensor<1x3x4x4xf64>
func.func @conv_integer(%x: tensor<1x2x4x4xui8>, %w: tensor<3x2x3x3xi8>) -> tensor<1x3x4x4xf64> {
  %zx = graph.constant {value = dense<128.0> : tensor<f64>} : () -> tensor<f64>
  %b = graph.constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf64>} : () -> tensor<3xf64>
  %xf = graph.cast %x : (tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xf64>
  %xc = graph.sub %xf, %zx : (tensor<1x2x4x4xf64>, tensor<f64>) -> tensor<1x2x4x4xf64>
  %wf = graph.cast %w : (tensor<3x2x3x3xi8>) -> tensor<3x2x3x3xf64>
  %y = graph.conv %xc, %wf, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf64>, tensor<3x2x3x3xf64>, tensor<3xf64>) -> tensor<1x3x4x4xf64>
  return %y : tensor<1x3x4x4xf64>
}

// -----

// Tests QDQ conv with per-channel weight scales [1, 2, 3] ([3,1,1,1]) and
// an int32 bias dequantized at x_scale * w_scale: the bias joins the
// integer sum, and the scale moves to the result's channel axis.
// CHECK-LABEL: func.func @qdq_conv_int_bias(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x2x4x4xi8>, %[[W:[^:]*]]: tensor<3x2x1x1xi8>, %[[B:[^:]*]]: tensor<3xi32>
// CHECK: %[[C:.*]] = graph.conv %[[X]], %[[W]], %[[B]] {{{.*}}input_zero_point = 0 : i64{{.*}}weight_zero_point = 0 : i64} : (tensor<1x2x4x4xi8>, tensor<3x2x1x1xi8>, tensor<3xi32>) -> tensor<1x3x4x4xi32>
// CHECK: %[[F:.*]] = graph.cast %[[C]]
// CHECK: %[[Y:.*]] = graph.mul %[[F]], %{{.*}} : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @qdq_conv_int_bias(%x: tensor<1x2x4x4xi8>, %w: tensor<3x2x1x1xi8>, %b: tensor<3xi32>) -> tensor<1x3x4x4xf32> {
  %sx = graph.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %sw = graph.constant {value = dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]]]> : tensor<3x1x1x1xf32>} : () -> tensor<3x1x1x1xf32>
  %sb = graph.constant {value = dense<[0.5, 1.0, 1.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %xf = graph.cast %x : (tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xf32>
  %xd = graph.mul %xf, %sx : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %wf = graph.cast %w : (tensor<3x2x1x1xi8>) -> tensor<3x2x1x1xf32>
  %wd = graph.mul %wf, %sw : (tensor<3x2x1x1xf32>, tensor<3x1x1x1xf32>) -> tensor<3x2x1x1xf32>
  %bf = graph.cast %b : (tensor<3xi32>) -> tensor<3xf32>
  %bd = graph.mul %bf, %sb : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = graph.conv %xd, %wd, %bd {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// Negative: per-axis zero points that differ are not folded (warned).
// CHECK-LABEL: func.func @per_axis_zero_points(
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
func.func @per_axis_zero_points(%a: tensor<4x8xi8>, %w: tensor<8x2xi8>) -> tensor<4x2xf32> {
  %s = graph.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zw = graph.constant {value = dense<[[1.0, 2.0]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %af = graph.cast %a : (tensor<4x8xi8>) -> tensor<4x8xf32>
  %ad = graph.mul %af, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %wf = graph.cast %w : (tensor<8x2xi8>) -> tensor<8x2xf32>
  %wc = graph.sub %wf, %zw : (tensor<8x2xf32>, tensor<1x2xf32>) -> tensor<8x2xf32>
  %wd = graph.mul %wc, %s : (tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
  // expected-warning @+1 {{graph-fold-quantized: not run as int8 (per-axis zero points that differ); it computes in 'f32'}}
  %y = graph.matmul %ad, %wd : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Negative: a weight scale along the contracted axis (rows of [K, N]).
// CHECK-LABEL: func.func @scale_along_k(
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
func.func @scale_along_k(%a: tensor<4x8xi8>, %w: tensor<8x2xi8>) -> tensor<4x2xf32> {
  %s = graph.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %sk = graph.constant {value = dense<[[1.0], [2.0], [1.0], [2.0], [1.0], [2.0], [1.0], [2.0]]> : tensor<8x1xf32>} : () -> tensor<8x1xf32>
  %af = graph.cast %a : (tensor<4x8xi8>) -> tensor<4x8xf32>
  %ad = graph.mul %af, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %wf = graph.cast %w : (tensor<8x2xi8>) -> tensor<8x2xf32>
  %wd = graph.mul %wf, %sk : (tensor<8x2xf32>, tensor<8x1xf32>) -> tensor<8x2xf32>
  // expected-warning @+1 {{graph-fold-quantized: not run as int8 (a scale that varies along the contracted axis); it computes in 'f32'}}
  %y = graph.matmul %ad, %wd : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Negative: an fp32 operand (only one side quantized) and a non-constant
// scale are left alone, silently: neither is a quantized pattern.
// CHECK-LABEL: func.func @not_quantized(
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
func.func @not_quantized(%a: tensor<4x8xi8>, %w: tensor<8x2xf32>, %s: tensor<f32>, %b: tensor<8x2xi8>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %c = graph.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %af = graph.cast %a : (tensor<4x8xi8>) -> tensor<4x8xf32>
  %ad = graph.mul %af, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %y = graph.matmul %ad, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %bf = graph.cast %b : (tensor<8x2xi8>) -> tensor<8x2xf32>
  %bd = graph.mul %bf, %s : (tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
  %ax = graph.mul %af, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %z = graph.matmul %ax, %bd : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %y, %z : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Negative: a conv weight scale along axis 1 (input channels) is refused.
// CHECK-LABEL: func.func @conv_scale_axis1(
// CHECK: graph.conv %{{.*}}, %{{.*}} {{{.*}}} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
func.func @conv_scale_axis1(%x: tensor<1x2x4x4xi8>, %w: tensor<3x2x1x1xi8>) -> tensor<1x3x4x4xf32> {
  %sx = graph.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %sw = graph.constant {value = dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %xf = graph.cast %x : (tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xf32>
  %xd = graph.mul %xf, %sx : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %wf = graph.cast %w : (tensor<3x2x1x1xi8>) -> tensor<3x2x1x1xf32>
  %wd = graph.mul %wf, %sw : (tensor<3x2x1x1xf32>, tensor<1x2x1x1xf32>) -> tensor<3x2x1x1xf32>
  // expected-warning @+1 {{graph-fold-quantized: not run as int8 (a weight scale along an axis other than 0); it computes in 'f32'}}
  %y = graph.conv %xd, %wd {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}
