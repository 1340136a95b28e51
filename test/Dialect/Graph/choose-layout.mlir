// Tests graph-choose-layout: matmul and conv kernels get the target matrix
// unit's native block [M, N, K] when the unit runs their precision.
// RUN: %loom-opt --graph-choose-layout=target=tiny --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=TINY
// RUN: %loom-opt --graph-choose-layout=target=wormhole --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=WORM
// A target given as a JSON file (tiny with another block) is read from it.
// RUN: sed -e 's/"m": 16, "n": 16, "k": 16/"m": 8, "n": 32, "k": 4/' %srcdir/targets/tiny.json > %t.json
// RUN: %loom-opt --graph-choose-layout=target=%t.json --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=FILE
// A bad target is an error that names it.
// RUN: not %loom-opt --graph-choose-layout=target=no-such-chip %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not %loom-opt --graph-choose-layout %s 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo '{' > %t.bad.json
// RUN: not %loom-opt --graph-choose-layout=target=%t.bad.json %s 2>&1 | FileCheck %s --check-prefix=BADFILE -DFILE=%t.bad.json
// UNKNOWN: error: graph-choose-layout: cannot load target 'no-such-chip': {{.*}}unknown target preset
// MISSING: error: graph-choose-layout: no target given; use target=NAME|FILE
// BADFILE: error: graph-choose-layout: cannot load target '[[FILE]]': [[FILE]]: {{.*}}invalid JSON

// Tests that the fp32 matmul and bf16 conv kernels get tiny's 16x16x16 block
// (tiny's matrix unit runs both), that a non-matrix kernel gets none, and
// that on wormhole, whose matrix unit has no fp32, the fp32 matmul runs on
// the vector unit and gets no block while the bf16 conv gets 32x32x32.
// TINY-LABEL: func.func @kernels(
// TINY: graph.kernel {{.*}} {block = array<i64: 16, 16, 16>, kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
// TINY: graph.kernel {{.*}} {block = array<i64: 16, 16, 16>, kind = #graph.kind<conv>, precision = #graph.precision<bf16>}
// TINY: graph.kernel {{.*}} {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>}
// WORM-LABEL: func.func @kernels(
// WORM: graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
// WORM: graph.kernel {{.*}} {block = array<i64: 32, 32, 32>, kind = #graph.kind<conv>, precision = #graph.precision<bf16>}
// WORM: graph.kernel {{.*}} {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>}
// FILE-LABEL: func.func @kernels(
// FILE: graph.kernel {{.*}} {block = array<i64: 8, 32, 4>, kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
// FILE: graph.kernel {{.*}} {block = array<i64: 8, 32, 4>, kind = #graph.kind<conv>, precision = #graph.precision<bf16>}
// FILE: graph.kernel {{.*}} {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>}
func.func @kernels(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %img: tensor<1x1x4x4xf32>, %k: tensor<1x1x1x1xf32>) -> (tensor<4x16xf32>, tensor<1x1x4x4xf32>) {
  %0 = graph.kernel %x, %w {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>):
    %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    graph.yield %m : tensor<4x16xf32>
  }
  %1 = graph.kernel %img, %k {kind = #graph.kind<conv>, precision = #graph.precision<bf16>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32> {
  ^bb0(%a: tensor<1x1x4x4xf32>, %b: tensor<1x1x1x1xf32>):
    %c = graph.conv %a, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
    graph.yield %c : tensor<1x1x4x4xf32>
  }
  %2 = graph.kernel %1 {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  ^bb0(%a: tensor<1x1x4x4xf32>):
    %r = graph.relu %a : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    graph.yield %r : tensor<1x1x4x4xf32>
  }
  return %0, %2 : tensor<4x16xf32>, tensor<1x1x4x4xf32>
}

// -----

// Tests that a block already set is replaced by the target's, and removed
// where the matrix unit does not run the kernel's precision (wormhole, fp32).
// TINY-LABEL: func.func @replaces_block(
// TINY: graph.kernel {{.*}} {block = array<i64: 16, 16, 16>, kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
// WORM-LABEL: func.func @replaces_block(
// WORM: graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
// FILE-LABEL: func.func @replaces_block(
// FILE: graph.kernel {{.*}} {block = array<i64: 8, 32, 4>, kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
func.func @replaces_block(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = graph.kernel %x, %w {block = array<i64: 1, 2, 3>, kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>):
    %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    graph.yield %m : tensor<4x16xf32>
  }
  return %0 : tensor<4x16xf32>
}
