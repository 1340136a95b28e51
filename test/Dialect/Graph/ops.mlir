// Tests that every graph op prints in a form that parses back to the same
// module: the output of a round trip is parsed again and checked.
// RUN: %loom-opt %s | %loom-opt | FileCheck %s

// Tests that the collectives graph-partition inserts round-trip.
// CHECK-LABEL: func.func @collectives(
// CHECK: %[[R:.*]]:2 = graph.all_reduce %arg0, %arg1 {chips = array<i64: 0, 1>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
// CHECK: %[[G:.*]]:2 = graph.all_gather %arg0, %arg1 {axis = 1 : i64, chips = array<i64: 2, 3>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>)
func.func @collectives(%a: tensor<1x8xf32>, %b: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x16xf32>) {
  %r:2 = graph.all_reduce %a, %b {chips = array<i64: 0, 1>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
  %g:2 = graph.all_gather %a, %b {axis = 1 : i64, chips = array<i64: 2, 3>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>)
  return %r#1, %g#0 : tensor<1x8xf32>, tensor<1x16xf32>
}

// Tests that every attribute-free elementwise unary op round-trips.
// CHECK-LABEL: func.func @unary(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<2x3xf32>, %[[ARG1:[^:]*]]: tensor<4xi1>) -> (tensor<2x3xf32>, tensor<4xi1>)
// CHECK-NEXT: %[[V0:.*]] = graph.neg %[[ARG0]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.abs %[[V0]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.sqrt %[[V1]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V3:.*]] = graph.reciprocal %[[V2]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V4:.*]] = graph.exp %[[V3]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V5:.*]] = graph.log %[[V4]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V6:.*]] = graph.erf %[[V5]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V7:.*]] = graph.tanh %[[V6]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V8:.*]] = graph.sigmoid %[[V7]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V9:.*]] = graph.relu %[[V8]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V10:.*]] = graph.sin %[[V9]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V11:.*]] = graph.cos %[[V10]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V12:.*]] = graph.tan %[[V11]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V13:.*]] = graph.asin %[[V12]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V14:.*]] = graph.acos %[[V13]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V15:.*]] = graph.atan %[[V14]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V16:.*]] = graph.sinh %[[V15]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V17:.*]] = graph.cosh %[[V16]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V18:.*]] = graph.asinh %[[V17]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V19:.*]] = graph.acosh %[[V18]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V20:.*]] = graph.atanh %[[V19]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V21:.*]] = graph.floor %[[V20]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V22:.*]] = graph.ceil %[[V21]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V23:.*]] = graph.round %[[V22]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V24:.*]] = graph.sign %[[V23]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V25:.*]] = graph.softsign %[[V24]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V26:.*]] = graph.softplus %[[V25]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V27:.*]] = graph.hard_swish %[[V26]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V28:.*]] = graph.not %[[ARG1]] : (tensor<4xi1>) -> tensor<4xi1>
// CHECK-NEXT: return %[[V27]], %[[V28]] : tensor<2x3xf32>, tensor<4xi1>
func.func @unary(%x: tensor<2x3xf32>, %b: tensor<4xi1>) -> (tensor<2x3xf32>, tensor<4xi1>) {
  %0 = graph.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.abs %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.sqrt %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.reciprocal %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.exp %3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = graph.log %4 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = graph.erf %5 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = graph.tanh %6 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = graph.sigmoid %7 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = graph.relu %8 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = graph.sin %9 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = graph.cos %10 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %12 = graph.tan %11 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %13 = graph.asin %12 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %14 = graph.acos %13 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %15 = graph.atan %14 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %16 = graph.sinh %15 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %17 = graph.cosh %16 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %18 = graph.asinh %17 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %19 = graph.acosh %18 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %20 = graph.atanh %19 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %21 = graph.floor %20 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %22 = graph.ceil %21 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %23 = graph.round %22 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %24 = graph.sign %23 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %25 = graph.softsign %24 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %26 = graph.softplus %25 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %27 = graph.hard_swish %26 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %28 = graph.not %b : (tensor<4xi1>) -> tensor<4xi1>
  return %27, %28 : tensor<2x3xf32>, tensor<4xi1>
}

// Tests that unary ops with float attributes, is_nan and is_inf round-trip
// with their attributes intact.
// CHECK-LABEL: func.func @unary_attrs(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>)
// CHECK-NEXT: %[[V0:.*]] = graph.leaky_relu %[[ARG0]] {alpha = 2.500000e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.elu %[[V0]] {alpha = 1.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.celu %[[V1]] {alpha = 2.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V3:.*]] = graph.selu %[[V2]] {alpha = 1.500000e+00 : f64, gamma = 3.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V4:.*]] = graph.hard_sigmoid %[[V3]] {alpha = 2.000000e-01 : f64, beta = 5.000000e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V5:.*]] = graph.thresholded_relu %[[V4]] {alpha = 7.500000e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V6:.*]] = graph.shrink %[[V5]] {bias = 1.250000e-01 : f64, lambd = 5.000000e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V7:.*]] = graph.is_nan %[[V6]] : (tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[V8:.*]] = graph.is_inf %[[V6]] {detect_negative = false, detect_positive = true} : (tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: return %[[V6]], %[[V7]], %[[V8]] : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>
func.func @unary_attrs(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>) {
  %0 = graph.leaky_relu %x {alpha = 0.25 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.elu %0 {alpha = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.celu %1 {alpha = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.selu %2 {alpha = 1.5 : f64, gamma = 3.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.hard_sigmoid %3 {alpha = 0.2 : f64, beta = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = graph.thresholded_relu %4 {alpha = 0.75 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = graph.shrink %5 {lambd = 0.5 : f64, bias = 0.125 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = graph.is_nan %6 : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %8 = graph.is_inf %6 {detect_positive = true, detect_negative = false} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  return %6, %7, %8 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>
}

// Tests that the broadcasting binary ops round-trip, including mod's fmod,
// pow with an integer exponent, boolean logic and bit_shift.
// CHECK-LABEL: func.func @binary(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<2x3xf32>, %[[ARG1:[^:]*]]: tensor<3xf32>, %[[ARG2:[^:]*]]: tensor<2x3xi32>, %[[ARG3:[^:]*]]: tensor<2x3xi1>, %[[ARG4:[^:]*]]: tensor<1x3xi1>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32>)
// CHECK-NEXT: %[[V0:.*]] = graph.add %[[ARG0]], %[[ARG1]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.sub %[[V0]], %[[ARG0]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.mul %[[V1]], %[[ARG1]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V3:.*]] = graph.div %[[V2]], %[[ARG0]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V4:.*]] = graph.min %[[V3]], %[[ARG0]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V5:.*]] = graph.max %[[V4]], %[[ARG0]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V6:.*]] = graph.mod %[[V5]], %[[ARG1]] {fmod = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V7:.*]] = graph.prelu %[[V6]], %[[ARG1]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V8:.*]] = graph.pow %[[V7]], %[[ARG2]] : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V9:.*]] = graph.and %[[ARG3]], %[[ARG4]] : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[V10:.*]] = graph.or %[[V9]], %[[ARG3]] : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[V11:.*]] = graph.xor %[[V10]], %[[ARG4]] : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[V12:.*]] = graph.bit_shift %[[ARG2]], %[[ARG2]] {left = false} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: return %[[V8]], %[[V11]], %[[V12]] : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32>
func.func @binary(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %e: tensor<2x3xi32>,
                  %p: tensor<2x3xi1>, %q: tensor<1x3xi1>)
    -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32>) {
  %0 = graph.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.sub %0, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.mul %1, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %3 = graph.div %2, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.min %3, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = graph.max %4, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = graph.mod %5, %y {fmod = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %7 = graph.prelu %6, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %8 = graph.pow %7, %e : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  %9 = graph.and %p, %q : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
  %10 = graph.or %9, %p : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %11 = graph.xor %10, %q : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
  %12 = graph.bit_shift %e, %e {left = false} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %8, %11, %12 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32>
}

// Tests that comparisons (i1 results) and select round-trip with
// broadcasting operands.
// CHECK-LABEL: func.func @compare_select(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<2x3xf32>, %[[ARG1:[^:]*]]: tensor<3xf32>, %[[ARG2:[^:]*]]: tensor<2x1xi1>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xf32>)
// CHECK-NEXT: %[[V0:.*]] = graph.equal %[[ARG0]], %[[ARG1]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[V1:.*]] = graph.less %[[ARG0]], %[[ARG1]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[V2:.*]] = graph.greater %[[ARG0]], %[[ARG0]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[V3:.*]] = graph.less_equal %[[ARG1]], %[[ARG0]] : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[V4:.*]] = graph.greater_equal %[[ARG0]], %[[ARG1]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[V5:.*]] = graph.select %[[ARG2]], %[[ARG0]], %[[ARG1]] : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V4]], %[[V5]] : tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xf32>
func.func @compare_select(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %c: tensor<2x1xi1>)
    -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xf32>) {
  %0 = graph.equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = graph.less %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %2 = graph.greater %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %3 = graph.less_equal %y, %x : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %4 = graph.greater_equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %5 = graph.select %c, %x, %y : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xf32>
}

// Tests that cast round-trips to integer and narrower float types.
// CHECK-LABEL: func.func @cast(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<2x3xf32>) -> (tensor<2x3xi8>, tensor<2x3xf16>)
// CHECK-NEXT: %[[V0:.*]] = graph.cast %[[ARG0]] : (tensor<2x3xf32>) -> tensor<2x3xi8>
// CHECK-NEXT: %[[V1:.*]] = graph.cast %[[ARG0]] : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK-NEXT: return %[[V0]], %[[V1]] : tensor<2x3xi8>, tensor<2x3xf16>
func.func @cast(%x: tensor<2x3xf32>) -> (tensor<2x3xi8>, tensor<2x3xf16>) {
  %0 = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xi8>
  %1 = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf16>
  return %0, %1 : tensor<2x3xi8>, tensor<2x3xf16>
}

// Tests that every reduction round-trips (empty axes = all axes, with and
// without keepdims) and that arg_max/arg_min keep their flags.
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[V0:.*]] = graph.reduce_sum %[[ARG0]] {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.reduce_mean %[[ARG0]] {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.reduce_max %[[ARG0]] {axes = array<i64>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK-NEXT: %[[V3:.*]] = graph.reduce_min %[[ARG0]] {axes = array<i64>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
// CHECK-NEXT: %[[V4:.*]] = graph.reduce_prod %[[ARG0]] {axes = array<i64: 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V5:.*]] = graph.reduce_l1 %[[ARG0]] {axes = array<i64: 0>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[V6:.*]] = graph.reduce_l2 %[[ARG0]] {axes = array<i64: 0>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x4xf32>
// CHECK-NEXT: %[[V7:.*]] = graph.reduce_sum_square %[[ARG0]] {axes = array<i64: 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[V8:.*]] = graph.reduce_log_sum %[[ARG0]] {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[V9:.*]] = graph.reduce_log_sum_exp %[[ARG0]] {axes = array<i64: 0, 1, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
// CHECK-NEXT: %[[V10:.*]] = graph.arg_max %[[ARG0]] {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
// CHECK-NEXT: %[[V11:.*]] = graph.arg_min %[[ARG0]] {axis = 2 : i64, keepdims = true, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
// CHECK-NEXT: return
func.func @reduce(%x: tensor<2x3x4xf32>) {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %1 = graph.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %2 = graph.reduce_max %x {axes = array<i64>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  %3 = graph.reduce_min %x {axes = array<i64>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %4 = graph.reduce_prod %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  %5 = graph.reduce_l1 %x {axes = array<i64: 0>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  %6 = graph.reduce_l2 %x {axes = array<i64: 0>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x4xf32>
  %7 = graph.reduce_sum_square %x {axes = array<i64: 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2xf32>
  %8 = graph.reduce_log_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %9 = graph.reduce_log_sum_exp %x {axes = array<i64: 0, 1, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %10 = graph.arg_max %x {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  %11 = graph.arg_min %x {axis = 2 : i64, keepdims = true, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  return
}

// Tests that softmax, log_softmax, hardmax and cumsum round-trip.
// CHECK-LABEL: func.func @axis_ops(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT: %[[V0:.*]] = graph.softmax %[[ARG0]] {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.log_softmax %[[ARG0]] {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.hardmax %[[ARG0]] {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[V3:.*]] = graph.cumsum %[[ARG0]] {axis = 1 : i64, exclusive = true, reverse = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]], %[[V2]], %[[V3]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
func.func @axis_ops(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = graph.softmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.log_softmax %x {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.hardmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.cumsum %x {axis = 1 : i64, exclusive = true, reverse = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// Tests that batch_norm, layer_norm with and without its optional bias, and
// instance_norm round-trip.
// CHECK-LABEL: func.func @norms(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<2x4x5x5xf32>, %[[ARG1:[^:]*]]: tensor<4xf32>, %[[ARG2:[^:]*]]: tensor<2x3x8xf32>, %[[ARG3:[^:]*]]: tensor<8xf32>) -> (tensor<2x4x5x5xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x4x5x5xf32>)
// CHECK-NEXT: %[[V0:.*]] = graph.batch_norm %[[ARG0]], %[[ARG1]], %[[ARG1]], %[[ARG1]], %[[ARG1]] {epsilon = 1.000000e-05 : f64} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.layer_norm %[[ARG2]], %[[ARG3]], %[[ARG3]] {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.layer_norm %[[ARG2]], %[[ARG3]] {axis = 2 : i64, epsilon = 9.9999999999999995E-7 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[V3:.*]] = graph.instance_norm %[[ARG0]], %[[ARG1]], %[[ARG1]] {epsilon = 1.000000e-05 : f64} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]], %[[V2]], %[[V3]] : tensor<2x4x5x5xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x4x5x5xf32>
func.func @norms(%x: tensor<2x4x5x5xf32>, %c: tensor<4xf32>, %t: tensor<2x3x8xf32>, %g: tensor<8xf32>)
    -> (tensor<2x4x5x5xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x4x5x5xf32>) {
  %0 = graph.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-05 : f64} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  %1 = graph.layer_norm %t, %g, %g {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %2 = graph.layer_norm %t, %g {axis = 2 : i64, epsilon = 1.0e-06 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %3 = graph.instance_norm %x, %c, %c {epsilon = 1.0e-05 : f64} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  return %0, %1, %2, %3 : tensor<2x4x5x5xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x4x5x5xf32>
}

// Tests that matmul round-trips with batching and 1-D promotion on either
// side.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<8x16x32xf32>, %[[ARG1:[^:]*]]: tensor<32x64xf32>, %[[ARG2:[^:]*]]: tensor<32xf32>) -> (tensor<8x16x64xf32>, tensor<64xf32>, tensor<8x16xf32>)
// CHECK-NEXT: %[[V0:.*]] = graph.matmul %[[ARG0]], %[[ARG1]] : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.matmul %[[ARG2]], %[[ARG1]] : (tensor<32xf32>, tensor<32x64xf32>) -> tensor<64xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.matmul %[[ARG0]], %[[ARG2]] : (tensor<8x16x32xf32>, tensor<32xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]], %[[V2]] : tensor<8x16x64xf32>, tensor<64xf32>, tensor<8x16xf32>
func.func @matmul(%a: tensor<8x16x32xf32>, %b: tensor<32x64xf32>, %v: tensor<32xf32>)
    -> (tensor<8x16x64xf32>, tensor<64xf32>, tensor<8x16xf32>) {
  %0 = graph.matmul %a, %b : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
  %1 = graph.matmul %v, %b : (tensor<32xf32>, tensor<32x64xf32>) -> tensor<64xf32>
  %2 = graph.matmul %a, %v : (tensor<8x16x32xf32>, tensor<32xf32>) -> tensor<8x16xf32>
  return %0, %1, %2 : tensor<8x16x64xf32>, tensor<64xf32>, tensor<8x16xf32>
}

// Tests that conv and conv_transpose round-trip with and without the
// optional bias, grouped, strided and dilated.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<1x4x8x8xf32>, %[[ARG1:[^:]*]]: tensor<6x4x3x3xf32>, %[[ARG2:[^:]*]]: tensor<6xf32>, %[[ARG3:[^:]*]]: tensor<8x2x3x3xf32>, %[[ARG4:[^:]*]]: tensor<4x3x2x2xf32>, %[[ARG5:[^:]*]]: tensor<6xf32>) -> (tensor<1x6x8x8xf32>, tensor<1x8x3x3xf32>, tensor<1x6x16x16xf32>, tensor<1x6x17x17xf32>)
// CHECK-NEXT: %[[V0:.*]] = graph.conv %[[ARG0]], %[[ARG1]], %[[ARG2]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.conv %[[ARG0]], %[[ARG3]] {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x3x3xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.conv_transpose %[[ARG0]], %[[ARG4]], %[[ARG5]] {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x3x2x2xf32>, tensor<6xf32>) -> tensor<1x6x16x16xf32>
// CHECK-NEXT: %[[V3:.*]] = graph.conv_transpose %[[ARG0]], %[[ARG4]] {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x3x2x2xf32>) -> tensor<1x6x17x17xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]], %[[V2]], %[[V3]] : tensor<1x6x8x8xf32>, tensor<1x8x3x3xf32>, tensor<1x6x16x16xf32>, tensor<1x6x17x17xf32>
func.func @conv(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<6xf32>,
                %wg: tensor<8x2x3x3xf32>, %wt: tensor<4x3x2x2xf32>, %bt: tensor<6xf32>)
    -> (tensor<1x6x8x8xf32>, tensor<1x8x3x3xf32>, tensor<1x6x16x16xf32>, tensor<1x6x17x17xf32>) {
  %0 = graph.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
  %1 = graph.conv %x, %wg {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x3x3xf32>
  %2 = graph.conv_transpose %x, %wt, %bt {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x3x2x2xf32>, tensor<6xf32>) -> tensor<1x6x16x16xf32>
  %3 = graph.conv_transpose %x, %wt {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x3x2x2xf32>) -> tensor<1x6x17x17xf32>
  return %0, %1, %2, %3 : tensor<1x6x8x8xf32>, tensor<1x8x3x3xf32>, tensor<1x6x16x16xf32>, tensor<1x6x17x17xf32>
}

// Tests that max_pool round-trips with one and with two results (indices),
// and that avg_pool keeps count_include_pad.
// CHECK-LABEL: func.func @pool(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<1x3x8x8xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>, tensor<1x3x8x8xf32>)
// CHECK-NEXT: %[[OUTPUT:.*]] = graph.max_pool %[[ARG0]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT: %[[OUTPUT_0:.*]], %[[INDICES:.*]] = graph.max_pool %[[ARG0]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>)
// CHECK-NEXT: %[[V0:.*]] = graph.avg_pool %[[ARG0]] {count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT: return %[[OUTPUT]], %[[OUTPUT_0]], %[[INDICES]], %[[V0]] : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>, tensor<1x3x8x8xf32>
func.func @pool(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>, tensor<1x3x8x8xf32>) {
  %0 = graph.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  %1:2 = graph.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>)
  %2 = graph.avg_pool %x {count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  return %0, %1#0, %1#1, %2 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>, tensor<1x3x8x8xf32>
}

// Tests that einsum round-trips with one and two operands.
// CHECK-LABEL: func.func @einsum(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<2x3x4xf32>, %[[ARG1:[^:]*]]: tensor<2x4x5xf32>, %[[ARG2:[^:]*]]: tensor<7x7xf32>) -> (tensor<2x3x5xf32>, tensor<7xf32>)
// CHECK-NEXT: %[[V0:.*]] = graph.einsum %[[ARG0]], %[[ARG1]] {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.einsum %[[ARG2]] {equation = "ii->i"} : (tensor<7x7xf32>) -> tensor<7xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]] : tensor<2x3x5xf32>, tensor<7xf32>
func.func @einsum(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %c: tensor<7x7xf32>) -> (tensor<2x3x5xf32>, tensor<7xf32>) {
  %0 = graph.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = graph.einsum %c {equation = "ii->i"} : (tensor<7x7xf32>) -> tensor<7xf32>
  return %0, %1 : tensor<2x3x5xf32>, tensor<7xf32>
}

// Tests that reshape, transpose, broadcast_to, concat, slice (including a
// negative step), tile, pad, topk and trilu round-trip.
// CHECK-LABEL: func.func @data_movement(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<2x3x4xf32>, %[[ARG1:[^:]*]]: tensor<2x5x4xf32>, %[[ARG2:[^:]*]]: tensor<3x1xf32>)
// CHECK-NEXT: %[[V0:.*]] = graph.reshape %[[ARG0]] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.transpose %[[ARG0]] {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.broadcast_to %[[ARG2]] : (tensor<3x1xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT: %[[V3:.*]] = graph.concat %[[ARG0]], %[[ARG1]], %[[ARG0]] {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
// CHECK-NEXT: %[[V4:.*]] = graph.slice %[[ARG0]] {axes = array<i64: 1, 2>, ends = array<i64: 3, 4>, starts = array<i64: 1, 0>, steps = array<i64: 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
// CHECK-NEXT: %[[V5:.*]] = graph.slice %[[ARG0]] {axes = array<i64: 2>, ends = array<i64: -1>, starts = array<i64: 3>, steps = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[V6:.*]] = graph.tile %[[ARG0]] {repeats = array<i64: 1, 2, 3>} : (tensor<2x3x4xf32>) -> tensor<2x6x12xf32>
// CHECK-NEXT: %[[V7:.*]] = graph.pad %[[ARG0]] {mode = "reflect", pads = array<i64: 0, 1, 1, 0, 1, -1>, value = 0.000000e+00 : f64} : (tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
// CHECK-NEXT: %[[VALUES:.*]], %[[INDICES:.*]] = graph.topk %[[ARG0]] {axis = 2 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<2x3x4xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xi64>)
// CHECK-NEXT: %[[V8:.*]] = graph.trilu %[[ARG0]] {k = -1 : i64, upper = false} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: return
func.func @data_movement(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %s: tensor<3x1xf32>) {
  %0 = graph.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %2 = graph.broadcast_to %s : (tensor<3x1xf32>) -> tensor<2x3x5xf32>
  %3 = graph.concat %x, %y, %x {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
  %4 = graph.slice %x {axes = array<i64: 1, 2>, ends = array<i64: 3, 4>, starts = array<i64: 1, 0>, steps = array<i64: 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
  %5 = graph.slice %x {axes = array<i64: 2>, ends = array<i64: -1>, starts = array<i64: 3>, steps = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %6 = graph.tile %x {repeats = array<i64: 1, 2, 3>} : (tensor<2x3x4xf32>) -> tensor<2x6x12xf32>
  %7 = graph.pad %x {mode = "reflect", pads = array<i64: 0, 1, 1, 0, 1, -1>, value = 0.0 : f64} : (tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  %8:2 = graph.topk %x {axis = 2 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<2x3x4xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xi64>)
  %9 = graph.trilu %x {k = -1 : i64, upper = false} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// Tests that the gather and scatter ops round-trip.
// CHECK-LABEL: func.func @gather_scatter(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<5x4xf32>, %[[ARG1:[^:]*]]: tensor<3xi64>, %[[ARG2:[^:]*]]: tensor<2x4xi64>, %[[ARG3:[^:]*]]: tensor<3x2xi64>, %[[ARG4:[^:]*]]: tensor<3xf32>, %[[ARG5:[^:]*]]: tensor<2x4xf32>) -> (tensor<3x4xf32>, tensor<2x4xf32>, tensor<3xf32>, tensor<5x4xf32>, tensor<5x4xf32>)
// CHECK-NEXT: %[[V0:.*]] = graph.gather %[[ARG0]], %[[ARG1]] {axis = 0 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.gather_elements %[[ARG0]], %[[ARG2]] {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.gather_nd %[[ARG0]], %[[ARG3]] {batch_dims = 0 : i64} : (tensor<5x4xf32>, tensor<3x2xi64>) -> tensor<3xf32>
// CHECK-NEXT: %[[V3:.*]] = graph.scatter_nd %[[ARG0]], %[[ARG3]], %[[ARG4]] {reduction = "add"} : (tensor<5x4xf32>, tensor<3x2xi64>, tensor<3xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: %[[V4:.*]] = graph.scatter_elements %[[ARG0]], %[[ARG2]], %[[ARG5]] {axis = 0 : i64, reduction = "none"} : (tensor<5x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V4]] : tensor<3x4xf32>, tensor<2x4xf32>, tensor<3xf32>, tensor<5x4xf32>, tensor<5x4xf32>
func.func @gather_scatter(%x: tensor<5x4xf32>, %i: tensor<3xi64>, %ie: tensor<2x4xi64>,
                          %ind: tensor<3x2xi64>, %u: tensor<3xf32>, %ue: tensor<2x4xf32>)
    -> (tensor<3x4xf32>, tensor<2x4xf32>, tensor<3xf32>, tensor<5x4xf32>, tensor<5x4xf32>) {
  %0 = graph.gather %x, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  %1 = graph.gather_elements %x, %ie {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  %2 = graph.gather_nd %x, %ind {batch_dims = 0 : i64} : (tensor<5x4xf32>, tensor<3x2xi64>) -> tensor<3xf32>
  %3 = graph.scatter_nd %x, %ind, %u {reduction = "add"} : (tensor<5x4xf32>, tensor<3x2xi64>, tensor<3xf32>) -> tensor<5x4xf32>
  %4 = graph.scatter_elements %x, %ie, %ue {axis = 0 : i64, reduction = "none"} : (tensor<5x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<5x4xf32>
  return %0, %1, %2, %3, %4 : tensor<3x4xf32>, tensor<2x4xf32>, tensor<3xf32>, tensor<5x4xf32>, tensor<5x4xf32>
}

// Tests that resize, depth_to_space, space_to_depth and one_hot round-trip.
// CHECK-LABEL: func.func @spatial(
// CHECK-SAME: %[[ARG0:[^:]*]]: tensor<1x8x2x3xf32>, %[[ARG1:[^:]*]]: tensor<4xi64>, %[[ARG2:[^:]*]]: tensor<2xf32>) -> (tensor<1x8x4x6xf32>, tensor<1x2x4x6xf32>, tensor<1x32x1x1xf32>, tensor<4x10xf32>)
// CHECK-NEXT: %[[V0:.*]] = graph.resize %[[ARG0]] {coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = false, extrapolation_value = 0.000000e+00 : f64, mode = "linear", nearest_mode = "round_prefer_floor", roi = array<f64>, scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : (tensor<1x8x2x3xf32>) -> tensor<1x8x4x6xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.depth_to_space %[[ARG0]] {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
// CHECK-NEXT: %[[V2:.*]] = graph.space_to_depth %[[V0]] {blocksize = 4 : i64} : (tensor<1x8x4x6xf32>) -> tensor<1x32x1x1xf32>
// CHECK-NEXT: %[[V3:.*]] = graph.one_hot %[[ARG1]], %[[ARG2]] {axis = 1 : i64, depth = 10 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<4x10xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]], %[[V2]], %[[V3]] : tensor<1x8x4x6xf32>, tensor<1x2x4x6xf32>, tensor<1x32x1x1xf32>, tensor<4x10xf32>
func.func @spatial(%x: tensor<1x8x2x3xf32>, %idx: tensor<4xi64>, %v: tensor<2xf32>)
    -> (tensor<1x8x4x6xf32>, tensor<1x2x4x6xf32>, tensor<1x32x1x1xf32>, tensor<4x10xf32>) {
  %0 = graph.resize %x {coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = false, extrapolation_value = 0.000000e+00 : f64, mode = "linear", nearest_mode = "round_prefer_floor", roi = array<f64>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x8x2x3xf32>) -> tensor<1x8x4x6xf32>
  %1 = graph.depth_to_space %x {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
  %2 = graph.space_to_depth %0 {blocksize = 4 : i64} : (tensor<1x8x4x6xf32>) -> tensor<1x32x1x1xf32>
  %3 = graph.one_hot %idx, %v {axis = 1 : i64, depth = 10 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<4x10xf32>
  return %0, %1, %2, %3 : tensor<1x8x4x6xf32>, tensor<1x2x4x6xf32>, tensor<1x32x1x1xf32>, tensor<4x10xf32>
}

// Tests that dense, splat, boolean, scalar and dense_resource constants
// round-trip.
// CHECK-LABEL: func.func @constants(
// CHECK-SAME: ) -> (tensor<2x2xf32>, tensor<3xi64>, tensor<2xi1>, tensor<3xf32>, tensor<f32>)
// CHECK-NEXT: %[[V0:.*]] = graph.constant {value = dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
// CHECK-NEXT: %[[V1:.*]] = graph.constant {value = dense<7> : tensor<3xi64>} : () -> tensor<3xi64>
// CHECK-NEXT: %[[V2:.*]] = graph.constant {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
// CHECK-NEXT: %[[V3:.*]] = graph.constant {value = dense_resource<weights> : tensor<3xf32>} : () -> tensor<3xf32>
// CHECK-NEXT: %[[V4:.*]] = graph.constant {value = dense<2.500000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT: return %[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V4]] : tensor<2x2xf32>, tensor<3xi64>, tensor<2xi1>, tensor<3xf32>, tensor<f32>
func.func @constants() -> (tensor<2x2xf32>, tensor<3xi64>, tensor<2xi1>, tensor<3xf32>, tensor<f32>) {
  %0 = graph.constant {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %1 = graph.constant {value = dense<7> : tensor<3xi64>} : () -> tensor<3xi64>
  %2 = graph.constant {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %3 = graph.constant {value = dense_resource<weights> : tensor<3xf32>} : () -> tensor<3xf32>
  %4 = graph.constant {value = dense<2.5> : tensor<f32>} : () -> tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<2x2xf32>, tensor<3xi64>, tensor<2xi1>, tensor<3xf32>, tensor<f32>
}

// The resource blob survives the round trip byte for byte.
// CHECK:      {-#
// CHECK-NEXT:   dialect_resources: {
// CHECK-NEXT:     builtin: {
// CHECK-NEXT:       weights: "0x040000000000803F0000004000004040"
{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F0000004000004040"
    }
  }
#-}

