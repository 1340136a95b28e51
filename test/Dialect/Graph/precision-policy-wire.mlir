// Tests graph-precision-policy's wire format: under a narrow policy a
// kernel whose every result goes only to all-reduces and all-gathers (a
// tensor-parallel layer's partial sums, k and v gathered past the key-value
// heads) stores them at bf16 (fp16 under fp16), which the collectives then
// carry; under fp32 nothing changes, and a kernel one of whose results is
// also used elsewhere keeps fp32.
// RUN: %loom-opt --graph-precision-policy --split-input-file %s | FileCheck %s --check-prefix=FP32
// RUN: %loom-opt --graph-precision-policy=precision=fp8 --split-input-file %s | FileCheck %s --check-prefix=NARROW -DWIRE=bf16
// RUN: %loom-opt --graph-precision-policy=precision=int8 --split-input-file %s | FileCheck %s --check-prefix=NARROW -DWIRE=bf16
// RUN: %loom-opt --graph-precision-policy=precision=bf16 --split-input-file %s | FileCheck %s --check-prefix=NARROW -DWIRE=bf16
// RUN: %loom-opt --graph-precision-policy=precision=fp16 --split-input-file %s | FileCheck %s --check-prefix=NARROW -DWIRE=fp16

// FP32-LABEL: func.func @partial_sums(
// FP32-NOT: storage
// NARROW-LABEL: func.func @partial_sums(
// NARROW: graph.kernel %arg0, %arg2 {kind = #graph.kind<matmul>, precision = #graph.precision<{{[a-z0-9]+}}>, storage = #graph.precision<[[WIRE]]>}
// NARROW: graph.kernel %arg1, %arg3 {kind = #graph.kind<matmul>, precision = #graph.precision<{{[a-z0-9]+}}>, storage = #graph.precision<[[WIRE]]>}
// NARROW: graph.all_reduce
// NARROW: graph.kernel {{.*}}kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} :
func.func @partial_sums(%x0: tensor<1x4xf32>, %x1: tensor<1x4xf32>, %w0: tensor<4x8xf32>, %w1: tensor<4x8xf32>) -> tensor<1x8xf32> {
  %p0 = graph.kernel %x0, %w0 {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<1x4xf32>, tensor<4x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%a: tensor<1x4xf32>, %b: tensor<4x8xf32>):
    %m = graph.matmul %a, %b : (tensor<1x4xf32>, tensor<4x8xf32>) -> tensor<1x8xf32>
    graph.yield %m : tensor<1x8xf32>
  }
  %p1 = graph.kernel %x1, %w1 {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<1x4xf32>, tensor<4x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%a: tensor<1x4xf32>, %b: tensor<4x8xf32>):
    %m = graph.matmul %a, %b : (tensor<1x4xf32>, tensor<4x8xf32>) -> tensor<1x8xf32>
    graph.yield %m : tensor<1x8xf32>
  }
  %r:2 = graph.all_reduce %p0, %p1 {chips = array<i64: 0, 1>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
  %y = graph.kernel %r#0, %r#1 {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%a: tensor<1x8xf32>, %b: tensor<1x8xf32>):
    %s = graph.add %a, %b : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
    graph.yield %s : tensor<1x8xf32>
  }
  return %y : tensor<1x8xf32>
}

// -----

// One partial is also returned: its kernel keeps fp32, the other's goes
// narrow.
// FP32-LABEL: func.func @also_used(
// FP32-NOT: storage
// NARROW-LABEL: func.func @also_used(
// NARROW: graph.kernel %arg0, %arg2 {kind = #graph.kind<matmul>, precision = #graph.precision<{{[a-z0-9]+}}>} :
// NARROW: graph.kernel %arg1, %arg3 {kind = #graph.kind<matmul>, precision = #graph.precision<{{[a-z0-9]+}}>, storage = #graph.precision<[[WIRE]]>}
func.func @also_used(%x0: tensor<1x4xf32>, %x1: tensor<1x4xf32>, %w0: tensor<4x8xf32>, %w1: tensor<4x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>) {
  %p0 = graph.kernel %x0, %w0 {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<1x4xf32>, tensor<4x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%a: tensor<1x4xf32>, %b: tensor<4x8xf32>):
    %m = graph.matmul %a, %b : (tensor<1x4xf32>, tensor<4x8xf32>) -> tensor<1x8xf32>
    graph.yield %m : tensor<1x8xf32>
  }
  %p1 = graph.kernel %x1, %w1 {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<1x4xf32>, tensor<4x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%a: tensor<1x4xf32>, %b: tensor<4x8xf32>):
    %m = graph.matmul %a, %b : (tensor<1x4xf32>, tensor<4x8xf32>) -> tensor<1x8xf32>
    graph.yield %m : tensor<1x8xf32>
  }
  %r:2 = graph.all_reduce %p0, %p1 {chips = array<i64: 0, 1>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
  return %r#0, %p0 : tensor<1x8xf32>, tensor<1x8xf32>
}

// -----

// A pipeline stage's hand-off: a kernel on chip 0 whose result only a
// kernel on chip 1 reads stores it at the wire format; one that chip 0
// reads too keeps fp32. An all-gather's input goes narrow as an
// all-reduce's does.
// FP32-LABEL: func.func @stages(
// FP32-NOT: storage
// NARROW-LABEL: func.func @stages(
// NARROW: graph.kernel %arg0 {graph.chip = 0 : i64, kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, storage = #graph.precision<[[WIRE]]>}
// NARROW: graph.kernel %arg0 {graph.chip = 0 : i64, kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} :
// NARROW: graph.kernel %arg1 {graph.chip = 1 : i64, kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, storage = #graph.precision<[[WIRE]]>}
func.func @stages(%x: tensor<1x8xf32>, %z: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x16xf32>) {
  %a = graph.kernel %x {graph.chip = 0 : i64, kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<1x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%v: tensor<1x8xf32>):
    %r = graph.relu %v : (tensor<1x8xf32>) -> tensor<1x8xf32>
    graph.yield %r : tensor<1x8xf32>
  }
  %b = graph.kernel %x {graph.chip = 0 : i64, kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<1x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%v: tensor<1x8xf32>):
    %r = graph.neg %v : (tensor<1x8xf32>) -> tensor<1x8xf32>
    graph.yield %r : tensor<1x8xf32>
  }
  %g0 = graph.kernel %z {graph.chip = 1 : i64, kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<1x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%v: tensor<1x8xf32>):
    %r = graph.neg %v : (tensor<1x8xf32>) -> tensor<1x8xf32>
    graph.yield %r : tensor<1x8xf32>
  }
  %c = graph.kernel %a, %b {graph.chip = 1 : i64, kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%u: tensor<1x8xf32>, %v: tensor<1x8xf32>):
    %s = graph.add %u, %v : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
    graph.yield %s : tensor<1x8xf32>
  }
  %d = graph.kernel %b {graph.chip = 0 : i64, kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<1x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%v: tensor<1x8xf32>):
    %r = graph.relu %v : (tensor<1x8xf32>) -> tensor<1x8xf32>
    graph.yield %r : tensor<1x8xf32>
  }
  %ag:2 = graph.all_gather %d, %g0 {axis = 1 : i64, chips = array<i64: 0, 1>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>)
  return %c, %d, %ag#1 : tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x16xf32>
}
