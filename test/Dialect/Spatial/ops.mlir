// Tests that every spatial op prints in a form that parses back to the same
// module: the output of a round trip is parsed again and checked.
// RUN: %loom-opt %s | %loom-opt | FileCheck %s

// CHECK-LABEL: func.func @placed(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32> {spatial.region = array<i64: 0, 0, 1, 2>, spatial.shard_dim = 0 : i64}
// CHECK-NEXT: %[[W:.*]] = spatial.weight {region = array<i64: 0, 0, 1, 1>, shard_dim = -1 : i64, value = dense<1.000000e+00> : tensor<8x16xf32>} : tensor<8x16xf32>
// CHECK-NEXT: %[[T:.*]] = spatial.transfer %[[X]] {bytes = 128 : i64, from_region = array<i64: 0, 0, 1, 2>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 1>, to_region = array<i64: 0, 0, 1, 1>, to_shard_dim = -1 : i64} : tensor<4x8xf32>
// CHECK-NEXT: %[[K:.*]] = spatial.kernel %[[T]], %[[W]] {block = array<i64: 16, 16, 16>, bound = #graph.bound<compute>, bytes = 1536 : i64, cycles = 40 : i64, flops = 1024 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<bf16>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>):
// CHECK-NEXT: %[[M:.*]] = graph.matmul %[[A]], %[[B]]
// CHECK-NEXT: spatial.yield %[[M]] : tensor<4x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[K]]
func.func @placed(%x: tensor<4x8xf32> {spatial.region = array<i64: 0, 0, 1, 2>, spatial.shard_dim = 0 : i64}) -> tensor<4x16xf32> {
  %w = spatial.weight {region = array<i64: 0, 0, 1, 1>, shard_dim = -1 : i64, value = dense<1.0> : tensor<8x16xf32>} : tensor<8x16xf32>
  %t = spatial.transfer %x {bytes = 128 : i64, from_region = array<i64: 0, 0, 1, 2>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 1>, to_region = array<i64: 0, 0, 1, 1>, to_shard_dim = -1 : i64} : tensor<4x8xf32>
  %y = spatial.kernel %t, %w {block = array<i64: 16, 16, 16>, bound = #graph.bound<compute>, bytes = 1536 : i64, cycles = 40 : i64, flops = 1024 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<bf16>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>):
    %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    spatial.yield %m : tensor<4x16xf32>
  }
  return %y : tensor<4x16xf32>
}

// Tests that a collective's kind and algorithm round-trip.
// CHECK-LABEL: func.func @collective(
// CHECK-NEXT: %{{.*}}:2 = spatial.collective %arg0, %arg1 {algorithm = #spatial.collective_algorithm<ring>, axis = -1 : i64, bytes = 32 : i64, chips = array<i64: 0, 1>, kind = #spatial.collective_kind<all_reduce>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
// CHECK-NEXT: %{{.*}}:2 = spatial.collective %arg0, %arg1 {algorithm = #spatial.collective_algorithm<hierarchical>, axis = 1 : i64, bytes = 32 : i64, chips = array<i64: 2, 3>, kind = #spatial.collective_kind<all_gather>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>)
func.func @collective(%a: tensor<1x8xf32>, %b: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x16xf32>) {
  %r:2 = spatial.collective %a, %b {algorithm = #spatial.collective_algorithm<ring>, axis = -1 : i64, bytes = 32 : i64, chips = array<i64: 0, 1>, kind = #spatial.collective_kind<all_reduce>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
  %g:2 = spatial.collective %a, %b {algorithm = #spatial.collective_algorithm<hierarchical>, axis = 1 : i64, bytes = 32 : i64, chips = array<i64: 2, 3>, kind = #spatial.collective_kind<all_gather>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>)
  return %r#1, %g#0 : tensor<1x8xf32>, tensor<1x16xf32>
}
