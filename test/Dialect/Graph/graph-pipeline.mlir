// Tests the graph-pipeline pass pipeline: verify shapes, canonicalize, fold
// batch norms and constants, form kernels, set precision and layout.
// RUN: %loom-opt --graph-pipeline --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: %loom-opt --graph-pipeline="precision=bf16 target=tiny" --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=BF16
// RUN: not %loom-opt --graph-pipeline="target=no-such-chip" --split-input-file %s 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not %loom-opt --graph-pipeline="precision=fp64" --split-input-file %s 2>&1 | FileCheck %s --check-prefix=PRECISION
// TARGET: error: graph-partition: no-such-chip: (target): unknown target preset
// PRECISION: error: graph-precision-policy: precision must be fp32, bf16, fp16, fp8 or int8, got 'fp64'

// Tests that in a small convolutional network the batch_norm folds into the
// conv, the constant reshape of the classifier's bias folds away, the dead op
// is deleted, and what is left is a conv kernel with its relu, a data_movement
// kernel, and a matmul kernel with its bias add, fp32 and without a block by
// default; with precision=bf16 and target=tiny the conv and matmul kernels
// are bf16 with tiny's 16x16x16 block and the reshape kernel stays fp32.
// CHECK-LABEL: func.func @convnet(
// CHECK-NOT: graph.batch_norm
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<conv>, precision = #graph.precision<fp32>}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.conv
// CHECK-NEXT: graph.relu
// CHECK-NEXT: graph.yield
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.reshape
// CHECK-NEXT: graph.yield
// CHECK: graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: graph.matmul
// CHECK-NEXT: graph.add
// CHECK-NEXT: graph.yield
// CHECK-NOT: graph.kernel
// CHECK-NOT: graph.batch_norm
// CHECK: return
// BF16-LABEL: func.func @convnet(
// BF16: graph.kernel {{.*}} {block = array<i64: 16, 16, 16>, kind = #graph.kind<conv>, precision = #graph.precision<bf16>}
// BF16: graph.kernel {{.*}} {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>}
// BF16: graph.kernel {{.*}} {block = array<i64: 16, 16, 16>, kind = #graph.kind<matmul>, precision = #graph.precision<bf16>}
func.func @convnet(%x: tensor<1x1x2x2xf32>) -> tensor<1x3xf32> {
  %w = graph.constant {value = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %p = graph.constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %fc = graph.constant {value = dense<1.0> : tensor<8x3xf32>} : () -> tensor<8x3xf32>
  %fb = graph.constant {value = dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>} : () -> tensor<1x3xf32>
  %fb3 = graph.reshape %fb : (tensor<1x3xf32>) -> tensor<3xf32>
  %dead = graph.neg %x : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %c = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %bn = graph.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-05 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %r = graph.relu %bn : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %f = graph.reshape %r : (tensor<1x2x2x2xf32>) -> tensor<1x8xf32>
  %m = graph.matmul %f, %fc : (tensor<1x8xf32>, tensor<8x3xf32>) -> tensor<1x3xf32>
  %y = graph.add %m, %fb3 : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// Tests that the pipeline checks shapes first: a dynamic dimension is
// rejected before any kernel is formed.
// expected-error @below {{argument has a dynamic shape: 'tensor<?x4xf32>'}}
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @below {{result #0 has a dynamic shape: 'tensor<?x4xf32>'}}
  %0 = graph.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
