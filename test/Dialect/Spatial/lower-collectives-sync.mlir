// Tests that spatial-lower-collectives marks the transfers of a
// collective's first exchange (what each chip sends of its own operand)
// with spatial.collective_sync on a target with a synchronisation
// (tsp-v1's system.links.sync_seconds), and nothing else: the second
// exchange sends sums of what was received, and a target without one
// (tiny) marks nothing. spatial-to-sched adds the wait to the marked
// transfers' arrival (test/Compile/collective-sync.test).
// RUN: %loom-opt --spatial-lower-collectives=target=tsp-v1 %s | FileCheck %s
// RUN: %loom-opt --spatial-lower-collectives=target=tiny %s | FileCheck %s --check-prefix=NOSYNC

// Direct all-reduce over 2 chips: each sends the chunk the other sums
// (first exchange, waited), then the summed chunk back (not waited).
// CHECK-LABEL: func.func @direct(
// CHECK: %[[A:.*]]:2 = spatial.kernel %arg0 {{.*}}kind = #graph.kind<data_movement>
// CHECK: %[[B:.*]]:2 = spatial.kernel %arg1 {{.*}}kind = #graph.kind<data_movement>
// CHECK: %[[T:.*]] = spatial.transfer %[[B]]#0 {{.*}}spatial.collective_sync
// CHECK: %[[S:.*]] = spatial.kernel %[[A]]#0, %[[T]] {{.*}}kind = #graph.kind<elementwise>
// CHECK: spatial.transfer %[[A]]#1 {{.*}}spatial.collective_sync
// CHECK-NOT: collective_sync
// CHECK: spatial.transfer %[[S]]
// CHECK-NOT: collective_sync
// CHECK: return
// NOSYNC-NOT: collective_sync
func.func @direct(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) attributes {spatial.chips = 2 : i64} {
  %r:2 = spatial.collective %a, %b {algorithm = #spatial.collective_algorithm<direct>, axis = -1 : i64, bytes = 32 : i64, chips = array<i64: 0, 1>, kind = #spatial.collective_kind<all_reduce>} : (tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  return %r#0, %r#1 : tensor<2x4xf32>, tensor<2x4xf32>
}
