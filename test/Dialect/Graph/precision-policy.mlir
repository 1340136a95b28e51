// Tests graph-precision-policy: with bf16, fp16, fp8 or int8, matmul and
// conv kernels get that precision (narrow inputs, fp32 accumulation; int8
// per-tensor symmetric); every other kernel stays fp32.
// RUN: %loom-opt --graph-precision-policy --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=FP32
// RUN: %loom-opt --graph-precision-policy=precision=fp32 --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=FP32
// RUN: %loom-opt --graph-precision-policy=precision=bf16 --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=BF16
// RUN: %loom-opt --graph-precision-policy=precision=fp16 --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=FP16
// RUN: %loom-opt --graph-precision-policy=precision=fp8 --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=FP8
// RUN: %loom-opt --graph-precision-policy=precision=int8 --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=INT8
// RUN: not %loom-opt --graph-precision-policy=precision=int4 %s 2>&1 | FileCheck %s --check-prefix=BAD

// Tests that matmul and conv kernels take the policy and the elementwise,
// softmax and data_movement kernels stay fp32; that fp32 (the default) also
// resets a kernel that was bf16; and that ops outside kernels are untouched.
// FP32-LABEL: func.func @kernels(
// FP32: kind = #graph.kind<matmul>, precision = #graph.precision<fp32>
// FP32: kind = #graph.kind<softmax>, precision = #graph.precision<fp32>
// FP32: kind = #graph.kind<conv>, precision = #graph.precision<fp32>
// FP32: kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>
// FP32: kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>
// BF16-LABEL: func.func @kernels(
// BF16: kind = #graph.kind<matmul>, precision = #graph.precision<bf16>
// BF16: kind = #graph.kind<softmax>, precision = #graph.precision<fp32>
// BF16: kind = #graph.kind<conv>, precision = #graph.precision<bf16>
// BF16: kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>
// BF16: kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>
// FP16-LABEL: func.func @kernels(
// FP16: kind = #graph.kind<matmul>, precision = #graph.precision<fp16>
// FP16: kind = #graph.kind<softmax>, precision = #graph.precision<fp32>
// FP16: kind = #graph.kind<conv>, precision = #graph.precision<fp16>
// FP16: kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>
// FP16: kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>
// FP8-LABEL: func.func @kernels(
// FP8: kind = #graph.kind<matmul>, precision = #graph.precision<fp8>
// FP8: kind = #graph.kind<softmax>, precision = #graph.precision<fp32>
// FP8: kind = #graph.kind<conv>, precision = #graph.precision<fp8>
// FP8: kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>
// FP8: kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>
// INT8-LABEL: func.func @kernels(
// INT8: kind = #graph.kind<matmul>, precision = #graph.precision<int8>
// INT8: kind = #graph.kind<softmax>, precision = #graph.precision<fp32>
// INT8: kind = #graph.kind<conv>, precision = #graph.precision<int8>
// INT8: kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>
// INT8: kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>
// BAD: error: graph-precision-policy: precision must be fp32, bf16, fp16, fp8 or int8, got 'int4'
func.func @kernels(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %img: tensor<1x1x4x4xf32>, %k: tensor<1x1x1x1xf32>) -> (tensor<4x16xf32>, tensor<1x1x4x4xf32>, tensor<16x4xf32>) {
  %0 = graph.kernel %x, %w {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>):
    %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    graph.yield %m : tensor<4x16xf32>
  }
  %1 = graph.kernel %0 {kind = #graph.kind<softmax>, precision = #graph.precision<bf16>} : (tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x16xf32>):
    %s = graph.softmax %a {axis = 1 : i64} : (tensor<4x16xf32>) -> tensor<4x16xf32>
    graph.yield %s : tensor<4x16xf32>
  }
  %2 = graph.kernel %img, %k {kind = #graph.kind<conv>, precision = #graph.precision<bf16>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32> {
  ^bb0(%a: tensor<1x1x4x4xf32>, %b: tensor<1x1x1x1xf32>):
    %c = graph.conv %a, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
    graph.yield %c : tensor<1x1x4x4xf32>
  }
  %3 = graph.kernel %2 {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  ^bb0(%a: tensor<1x1x4x4xf32>):
    %r = graph.relu %a : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    graph.yield %r : tensor<1x1x4x4xf32>
  }
  %4 = graph.kernel %1 {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>} : (tensor<4x16xf32>) -> tensor<16x4xf32> {
  ^bb0(%a: tensor<4x16xf32>):
    %t = graph.transpose %a {perm = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
    graph.yield %t : tensor<16x4xf32>
  }
  return %1, %3, %4 : tensor<4x16xf32>, tensor<1x1x4x4xf32>, tensor<16x4xf32>
}

// -----

// Tests that a function without kernels is left as it is.
// FP32-LABEL: func.func @no_kernels(
// FP32-NEXT: graph.matmul
// FP32-NEXT: return
// BF16-LABEL: func.func @no_kernels(
// BF16-NEXT: graph.matmul
// BF16-NEXT: return
func.func @no_kernels(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}
