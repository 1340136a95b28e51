// Tests graph-choose-layout with the fp16 and fp8 policies on the presets
// whose matrix units run only narrow formats: tsp-v1's runs fp16 (and int8),
// lp30's fp8 only. A kernel gets the unit's block exactly when its precision
// is one the unit runs; the others go to the vector unit without a block.
// RUN: %loom-opt --graph-choose-layout=target=tsp-v1 %s | FileCheck %s --check-prefix=TSP
// RUN: %loom-opt --graph-choose-layout=target=lp30 %s | FileCheck %s --check-prefix=LP30
// TSP-LABEL: func.func @narrow(
// TSP: graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
// TSP: graph.kernel {{.*}} {block = array<i64: 1, 320, 320>, kind = #graph.kind<matmul>, precision = #graph.precision<fp16>}
// TSP: graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp8>}
// LP30-LABEL: func.func @narrow(
// LP30: graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>}
// LP30: graph.kernel {{.*}} {kind = #graph.kind<matmul>, precision = #graph.precision<fp16>}
// LP30: graph.kernel {{.*}} {block = array<i64: 1, 480, 320>, kind = #graph.kind<matmul>, precision = #graph.precision<fp8>}
func.func @narrow(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = graph.kernel %x, %w {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>):
    %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    graph.yield %m : tensor<4x8xf32>
  }
  %1 = graph.kernel %0, %w {kind = #graph.kind<matmul>, precision = #graph.precision<fp16>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>):
    %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    graph.yield %m : tensor<4x8xf32>
  }
  %2 = graph.kernel %1, %w {kind = #graph.kind<matmul>, precision = #graph.precision<fp8>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>):
    %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    graph.yield %m : tensor<4x8xf32>
  }
  return %2 : tensor<4x8xf32>
}
