// Tests graph-form-kernels: every compute op ends up in one graph.kernel; a
// matmul or conv anchor takes in its elementwise epilogue.
// RUN: %loom-opt --graph-form-kernels --split-input-file --verify-diagnostics %s | FileCheck %s
// The pass is idempotent: ops already in kernels are left alone.
// RUN: %loom-opt --graph-form-kernels --graph-form-kernels --split-input-file --verify-diagnostics %s | FileCheck %s

// Tests that matmul + bias add + relu become one matmul kernel, that the
// constants stay outside and come in as inputs (block arguments inside), and
// that the kernel starts fp32 with no block.
// CHECK-LABEL: func.func @matmul_bias_relu(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK: %[[W:.*]] = graph.constant {value = dense<1.000000e+00> : tensor<8x16xf32>}
// CHECK: %[[B:.*]] = graph.constant {value = dense<5.000000e-01> : tensor<16xf32>}
// CHECK: %[[K:.*]] = graph.kernel %[[X]], %[[W]], %[[B]] {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT: ^bb0(%[[AX:.*]]: tensor<4x8xf32>, %[[AW:.*]]: tensor<8x16xf32>, %[[AB:.*]]: tensor<16xf32>):
// CHECK-NEXT: %[[M:.*]] = graph.matmul %[[AX]], %[[AW]]
// CHECK-NEXT: %[[A:.*]] = graph.add %[[M]], %[[AB]]
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[A]]
// CHECK-NEXT: graph.yield %[[R]] : tensor<4x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[K]]
func.func @matmul_bias_relu(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = graph.constant {value = dense<1.0> : tensor<8x16xf32>} : () -> tensor<8x16xf32>
  %b = graph.constant {value = dense<0.5> : tensor<16xf32>} : () -> tensor<16xf32>
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = graph.add %m, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = graph.relu %a : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// Tests that a conv takes in a bias add, a residual add whose other operand
// is defined before the conv (a function argument), and the relu after it.
// CHECK-LABEL: func.func @conv_residual(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x2x4x4xf32>, %[[RES:[^:]*]]: tensor<1x2x4x4xf32>
// CHECK: %[[K:.*]] = graph.kernel %[[X]], %{{.*}}, %{{.*}}, %[[RES]] {kind = #graph.kind<conv>, precision = #graph.precision<fp32>}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.conv
// CHECK-NEXT: graph.add
// CHECK-NEXT: graph.add
// CHECK-NEXT: graph.relu
// CHECK-NEXT: graph.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[K]]
func.func @conv_residual(%x: tensor<1x2x4x4xf32>, %res: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant {value = dense<1.0> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %b = graph.constant {value = dense<0.5> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %c = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = graph.add %c, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.add %res, %a : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %s : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// Tests that a GELU written out as div/erf/add/mul/mul after matmul + bias
// fuses into the matmul kernel, although the biased value has two users
// (both inside the kernel, so it is not yielded).
// CHECK-LABEL: func.func @matmul_gelu(
// CHECK: %[[K:.*]] = graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4x16xf32> {
// CHECK: %[[M:.*]] = graph.matmul
// CHECK-NEXT: %[[H:.*]] = graph.add %[[M]]
// CHECK-NEXT: %[[D:.*]] = graph.div %[[H]]
// CHECK-NEXT: %[[E:.*]] = graph.erf %[[D]]
// CHECK-NEXT: %[[P:.*]] = graph.add %[[E]]
// CHECK-NEXT: %[[Q:.*]] = graph.mul %[[H]], %[[P]]
// CHECK-NEXT: %[[Y:.*]] = graph.mul %[[Q]]
// CHECK-NEXT: graph.yield %[[Y]] : tensor<4x16xf32>
// CHECK-NOT: graph.kernel
// CHECK: return %[[K]]
func.func @matmul_gelu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %b = graph.constant {value = dense<0.5> : tensor<16xf32>} : () -> tensor<16xf32>
  %sqrt2 = graph.constant {value = dense<1.41421354> : tensor<f32>} : () -> tensor<f32>
  %one = graph.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %half = graph.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %h = graph.add %m, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %d = graph.div %h, %sqrt2 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %e = graph.erf %d : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = graph.add %e, %one : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %q = graph.mul %h, %p : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = graph.mul %q, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Tests that an intermediate used both inside and outside the kernel is
// yielded along with the final result, in op order.
// CHECK-LABEL: func.func @intermediate_used_outside(
// CHECK: %[[K:.*]]:2 = graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
// CHECK: %[[A:.*]] = graph.add
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[A]]
// CHECK-NEXT: graph.yield %[[A]], %[[R]] : tensor<4x16xf32>, tensor<4x16xf32>
// CHECK: return %[[K]]#0, %[[K]]#1
func.func @intermediate_used_outside(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = graph.add %m, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = graph.relu %a : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %a, %r : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Tests that an add whose other operand is computed after the matmul is not
// taken into the matmul kernel (the kernel sits where the matmul was); it
// joins the elementwise kernel of that operand instead.
// CHECK-LABEL: func.func @operand_after_anchor(
// CHECK-SAME: %[[Y:[^:]*]]: tensor<4x16xf32>
// CHECK: %[[MK:.*]] = graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.matmul
// CHECK-NEXT: graph.yield
// CHECK: %[[EK:.*]] = graph.kernel %[[Y]], %[[MK]] {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>}
// CHECK-NEXT: ^bb0(%[[AY:.*]]: tensor<4x16xf32>, %[[AM:.*]]: tensor<4x16xf32>):
// CHECK-NEXT: %[[N:.*]] = graph.neg %[[AY]]
// CHECK-NEXT: %[[S:.*]] = graph.add %[[AM]], %[[N]]
// CHECK-NEXT: graph.yield %[[S]]
// CHECK: return %[[EK]]
func.func @operand_after_anchor(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %n = graph.neg %y : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = graph.add %m, %n : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %a : tensor<4x16xf32>
}

// -----

// Tests that an elementwise op that broadcasts the matmul result to a larger
// shape is not an epilogue; it is a kernel of its own.
// CHECK-LABEL: func.func @broadcast_up(
// CHECK: %[[MK:.*]] = graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK: graph.kernel %[[MK]], %{{.*}} {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
func.func @broadcast_up(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %y: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = graph.add %m, %y : (tensor<4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %a : tensor<2x4x16xf32>
}

// -----

// Tests the kind of each single-op kernel (reduce_sum and max_pool are
// reductions, einsum is a matmul) and that the order of ops is kept.
// CHECK-LABEL: func.func @kinds(
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<reduction>, {{.*}}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.reduce_sum
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<softmax>, {{.*}}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.softmax
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<data_movement>, {{.*}}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.transpose
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<reduction>, {{.*}}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.max_pool
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<matmul>, {{.*}}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.einsum
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<normalization>, {{.*}}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.layer_norm
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<conv>, {{.*}}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.conv_transpose
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<data_movement>, {{.*}}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.gather
// CHECK: return
func.func @kinds(%x: tensor<2x3xf32>, %img: tensor<1x1x4x4xf32>, %idx: tensor<2xi64>) -> (tensor<2xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<1x1x2x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<1x1x4x4xf32>, tensor<2x3xf32>) {
  %g = graph.constant {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %k = graph.constant {value = dense<1.0> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %1 = graph.softmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = graph.max_pool %img {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  %4 = graph.einsum %x, %2 {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %5 = graph.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %6 = graph.conv_transpose %img, %k {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %7 = graph.gather %x, %idx {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<1x1x2x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<1x1x4x4xf32>, tensor<2x3xf32>
}

// -----

// Tests that a chain of elementwise ops becomes one elementwise kernel, and
// that a reshape ends the chain (the abs after it is a kernel of its own).
// CHECK-LABEL: func.func @elementwise_chain(
// CHECK: %[[E:.*]] = graph.kernel %{{.*}} {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.exp
// CHECK-NEXT: graph.neg
// CHECK-NEXT: graph.sigmoid
// CHECK-NEXT: graph.yield
// CHECK: %[[R:.*]] = graph.kernel %[[E]] {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>}
// CHECK: %[[A:.*]] = graph.kernel %[[R]] {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.abs
// CHECK-NEXT: graph.yield
// CHECK: return %[[E]], %[[A]]
func.func @elementwise_chain(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xf32>) {
  %0 = graph.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.neg %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.sigmoid %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.reshape %2 : (tensor<2x3xf32>) -> tensor<6xf32>
  %4 = graph.abs %3 : (tensor<6xf32>) -> tensor<6xf32>
  return %2, %4 : tensor<2x3xf32>, tensor<6xf32>
}

// -----

// Tests that a result with no use at all (topk's indices) is still yielded,
// so a single-op kernel has the op's results.
// CHECK-LABEL: func.func @unused_result(
// CHECK: %[[K:.*]]:2 = graph.kernel %{{.*}} {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi64>)
// CHECK: return %[[K]]#0
func.func @unused_result(%x: tensor<5xf32>) -> tensor<2xf32> {
  %v, %i = graph.topk %x {axis = 0 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  return %v : tensor<2xf32>
}

// -----

// Tests that a constant defined after the anchor is moved before the kernel
// that uses it, and is passed in once although used twice.
// CHECK-LABEL: func.func @constant_after(
// CHECK-NEXT: %[[B:.*]] = graph.constant
// CHECK-NEXT: graph.kernel %{{.*}}, %{{.*}}, %[[B]] {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>)
// CHECK: graph.matmul
// CHECK-NEXT: graph.add
// CHECK-NEXT: graph.add
func.func @constant_after(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %b = graph.constant {value = dense<0.5> : tensor<16xf32>} : () -> tensor<16xf32>
  %a = graph.add %m, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %c = graph.add %a, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// Tests that ops of other dialects (func.call) stay outside kernels and end
// an elementwise chain, and that a function without a body is skipped.
// CHECK-LABEL: func.func private @callee(
// CHECK-LABEL: func.func @other_dialect(
// CHECK: %[[A:.*]] = graph.kernel %{{.*}} {kind = #graph.kind<elementwise>
// CHECK: %[[C:.*]] = call @callee(%[[A]])
// CHECK: %[[B:.*]] = graph.kernel %[[C]] {kind = #graph.kind<elementwise>
// CHECK: return %[[B]]
func.func private @callee(tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @other_dialect(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = func.call @callee(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.relu %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// Tests that a function that already has kernels is left as it is.
// CHECK-LABEL: func.func @already_formed(
// CHECK: graph.kernel %{{.*}} {kind = #graph.kind<elementwise>, precision = #graph.precision<bf16>}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.relu
// CHECK-NEXT: graph.yield
// CHECK-NOT: graph.kernel
func.func @already_formed(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<bf16>} : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>):
    %1 = graph.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    graph.yield %1 : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a matmul takes in the transpose of the last two dimensions of
// an operand it alone reads (attention's keys), placed where the matmul
// was (after %q, which the transpose precedes) and named by it; that a
// transpose other ops read too, or of other dimensions, stays its own
// data_movement kernel.
// CHECK-LABEL: func.func @operand_transpose(
// CHECK: %[[KT:.*]] = graph.kernel %{{.*}} {kind = #graph.kind<data_movement>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[Q:.*]] = graph.kernel %{{.*}} {kind = #graph.kind<elementwise>
// CHECK: %[[S:.*]] = graph.kernel %arg0, %[[Q]] {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
// CHECK-NEXT: ^bb0(%[[AK:.*]]: tensor<1x2x3x4xf32>, %[[AQ:.*]]: tensor<1x2x1x4xf32>):
// CHECK-NEXT: %[[T:.*]] = graph.transpose %[[AK]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT: graph.matmul %[[AQ]], %[[T]]
// CHECK: graph.kernel %{{.*}} {kind = #graph.kind<data_movement>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.transpose %{{.*}} {perm = array<i64: 0, 1, 3, 2>}
// CHECK: graph.kernel {{.*}}kind = #graph.kind<matmul>
// CHECK-NOT: graph.transpose
// CHECK: return
func.func @operand_transpose(%k: tensor<1x2x3x4xf32>, %q0: tensor<1x2x1x4xf32>) -> (tensor<1x2x1x3xf32>, tensor<1x3x2x4xf32>, tensor<1x2x1x3xf32>, tensor<1x2x4x3xf32>) {
  %heads = graph.transpose %k {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x2x4xf32>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x4x3xf32>
  %q = graph.neg %q0 : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x1x3xf32>
  %kt2 = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x4x3xf32>
  %s2 = graph.matmul %q0, %kt2 : (tensor<1x2x1x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x1x3xf32>
  return %s, %heads, %s2, %kt2 : tensor<1x2x1x3xf32>, tensor<1x3x2x4xf32>, tensor<1x2x1x3xf32>, tensor<1x2x4x3xf32>
}
