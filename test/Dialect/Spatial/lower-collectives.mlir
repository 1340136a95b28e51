// Tests spatial-lower-collectives: each algorithm's transfers and kernels.
// tiny: 4 chips on a ring (links 0: 0->1, 3: 1->2, 5: 2->3, 6: 3->0).
// RUN: %loom-opt --split-input-file --spatial-lower-collectives=target=tiny %s | FileCheck %s
// RUN: %loom-opt --spatial-lower-collectives=target=lpx-rack %S/Inputs/hierarchical.mlir | FileCheck %S/Inputs/hierarchical.mlir --check-prefix=HIER

// Ring all-reduce over 4 chips: each chip cuts its operand into 4 chunks;
// 3 steps pass partial sums on (4 transfers and 4 sums a step), 3 steps
// pass the finished chunks (4 transfers a step), and each chip
// concatenates. Chip 0 finishes chunk 1 first: its own chunk 1 plus what
// chip 3 sent.
// CHECK-LABEL: func.func @ring(
// CHECK: %[[S0:.*]]:4 = spatial.kernel %arg0 {{.*}}kernel_name = "collective.all_reduce.split0", kind = #graph.kind<data_movement>
// CHECK-COUNT-3: spatial.kernel %arg{{[123]}} {{.*}}kind = #graph.kind<data_movement>
// CHECK: spatial.transfer %[[S0]]#0 {bytes = 8 : i64, chip_links = array<i64: 0>, {{.*}}to_chip = 1 : i64
// CHECK-COUNT-3: spatial.transfer
// CHECK-COUNT-4: kind = #graph.kind<elementwise>
// CHECK-COUNT-4: spatial.transfer
// CHECK-COUNT-4: kind = #graph.kind<elementwise>
// CHECK-COUNT-4: spatial.transfer
// CHECK-COUNT-3: kernel_name = "collective.all_reduce.sum{{1[2-4]}}"
// CHECK: %[[C1:.*]] = spatial.kernel %[[S0]]#1, {{.*}}kernel_name = "collective.all_reduce.sum15"
// CHECK-COUNT-12: spatial.transfer
// CHECK-NOT: spatial.transfer
// CHECK: %[[R0:.*]] = spatial.kernel {{.*}}, %[[C1]], {{.*}}kernel_name = "collective.all_reduce.concat16"
// CHECK-COUNT-3: kernel_name = "collective.all_reduce.concat
// CHECK-NOT: spatial.collective
func.func @ring(%a: tensor<1x8xf32>, %b: tensor<1x8xf32>, %c: tensor<1x8xf32>, %d: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>) attributes {spatial.chips = 4 : i64} {
  %r:4 = spatial.collective %a, %b, %c, %d {algorithm = #spatial.collective_algorithm<ring>, axis = -1 : i64, bytes = 32 : i64, chips = array<i64: 0, 1, 2, 3>, kind = #spatial.collective_kind<all_reduce>} : (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>)
  return %r#0, %r#3 : tensor<1x8xf32>, tensor<1x8xf32>
}

// -----

// Direct all-reduce over chips 0 and 2 (two hops apart on the ring: via
// chip 3 one way and chip 1 the other): chunk 0 is summed on chip 0, chunk
// 1 on chip 2, then swapped.
// CHECK-LABEL: func.func @direct(
// CHECK: %[[A:.*]]:2 = spatial.kernel %arg0 {{.*}}kind = #graph.kind<data_movement>
// CHECK: %[[B:.*]]:2 = spatial.kernel %arg1 {{.*}}chip = 2 : i64
// CHECK: %[[T:.*]] = spatial.transfer %[[B]]#0 {bytes = 16 : i64, chip_links = array<i64: 5, 6>, from_chip = 2 : i64, {{.*}}hops = 2 : i64
// CHECK: %[[S:.*]] = spatial.kernel %[[A]]#0, %[[T]] {{.*}}kind = #graph.kind<elementwise>
// CHECK: spatial.transfer %[[A]]#1 {bytes = 16 : i64, chip_links = array<i64: 0, 3>, {{.*}}to_chip = 2 : i64
// CHECK: spatial.kernel {{.*}}chip = 2 : i64{{.*}}kind = #graph.kind<elementwise>
// CHECK: spatial.transfer
// CHECK: spatial.kernel %[[S]], {{.*}}kind = #graph.kind<data_movement>
// CHECK: spatial.transfer %[[S]] {{.*}}to_chip = 2 : i64
// CHECK: spatial.kernel {{.*}}chip = 2 : i64{{.*}}kind = #graph.kind<data_movement>
// CHECK-NOT: spatial.transfer
func.func @direct(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) attributes {spatial.chips = 4 : i64} {
  %r:2 = spatial.collective %a, %b {algorithm = #spatial.collective_algorithm<direct>, axis = -1 : i64, bytes = 32 : i64, chips = array<i64: 0, 2>, kind = #spatial.collective_kind<all_reduce>} : (tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  return %r#0, %r#1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// All-gather around the ring of chips 1, 2, 3, 0: each piece travels
// three hops, one a step; every chip concatenates the four in order.
// CHECK-LABEL: func.func @gather(
// CHECK-COUNT-12: spatial.transfer {{.*}}hops = 1 : i64
// CHECK-COUNT-4: spatial.kernel {{.*}}kind = #graph.kind<data_movement>
// CHECK: graph.concat {{.*}}axis = 0 : i64{{.*}} -> tensor<4x3xf32>
func.func @gather(%a: tensor<1x3xf32>, %b: tensor<1x3xf32>, %c: tensor<1x3xf32>, %d: tensor<1x3xf32>) -> tensor<4x3xf32> attributes {spatial.chips = 4 : i64} {
  %r:4 = spatial.collective %a, %b, %c, %d {algorithm = #spatial.collective_algorithm<ring>, axis = 0 : i64, bytes = 12 : i64, chips = array<i64: 1, 2, 3, 0>, kind = #spatial.collective_kind<all_gather>} : (tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
  return %r#2 : tensor<4x3xf32>
}

// -----

// Inputs stored at bf16 (graph-precision-policy's wire format under a
// narrow policy): the pieces travel at 2 bytes an element, half @direct's,
// and the splits, sums and copies on the way store at bf16 too.
// CHECK-LABEL: func.func @direct_bf16(
// CHECK: spatial.kernel %arg0 {{.*}}kind = #graph.kind<data_movement>{{.*}}storage = #graph.precision<bf16>
// CHECK: spatial.transfer {{.*}}{bytes = 8 : i64,
// CHECK: kind = #graph.kind<elementwise>{{.*}}storage = #graph.precision<bf16>
// CHECK: spatial.transfer {{.*}}{bytes = 8 : i64,
// CHECK-NOT: bytes = 16
func.func @direct_bf16(%a: tensor<2x4xf32> {graph.storage = "bf16"}, %b: tensor<2x4xf32> {graph.storage = "bf16"}) -> (tensor<2x4xf32>, tensor<2x4xf32>) attributes {spatial.chips = 4 : i64} {
  %r:2 = spatial.collective %a, %b {algorithm = #spatial.collective_algorithm<direct>, axis = -1 : i64, bytes = 16 : i64, chips = array<i64: 0, 2>, kind = #spatial.collective_kind<all_reduce>} : (tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  return %r#0, %r#1 : tensor<2x4xf32>, tensor<2x4xf32>
}
