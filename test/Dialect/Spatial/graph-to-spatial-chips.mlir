// Tests graph-to-spatial across chips: a value crosses the chip network
// once per destination chip however many kernels there read it; the other
// readers take it from that copy over the mesh. System chips (a program
// that is the first chips of a bigger system) carry over to the spatial
// function.
// RUN: %loom-opt --graph-to-spatial=target=tiny %s | FileCheck %s
// RUN: %loom-opt --graph-to-spatial=target=tiny %s | FileCheck %s --check-prefix=ONCE

// CHECK-LABEL: func.func @fanout
// CHECK-SAME: spatial.chips = 2 : i64
// CHECK-SAME: spatial.system_chips = 8 : i64
// CHECK: %[[A:.*]] = spatial.kernel %arg0
// CHECK: %[[T:.*]] = spatial.transfer %[[A]] {{.*}}chip_links = array<i64: 0>{{.*}}to_chip = 1 : i64
// CHECK: spatial.kernel %[[T]]
// CHECK: %[[U:.*]] = spatial.transfer %[[T]] {bytes = {{[0-9]+}} : i64, from_chip = 1 : i64{{.*}}to_chip = 1 : i64
// CHECK: spatial.kernel %[[U]] {{.*}}kind = #graph.kind<softmax>
// ONCE-COUNT-1: chip_links = array<i64: 0>
// ONCE-NOT: chip_links = array<i64: 0>
func.func @fanout(%x: tensor<4x240xf32>) -> (tensor<4x1000xf32>, tensor<4x240xf32>) attributes {graph.chips = 2 : i64, graph.pp = 2 : i64, graph.tp = 1 : i64, graph.system_chips = 8 : i64} {
  %w1 = graph.constant {value = dense<0.5> : tensor<240x1000xf32>, graph.chip = 1 : i64} : () -> tensor<240x1000xf32>
  %a = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 0 : i64} : (tensor<4x240xf32>) -> tensor<4x240xf32> {
  ^bb0(%p: tensor<4x240xf32>):
    %q = graph.relu %p : (tensor<4x240xf32>) -> tensor<4x240xf32>
    graph.yield %q : tensor<4x240xf32>
  }
  %b = graph.kernel %a, %w1 {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, graph.chip = 1 : i64} : (tensor<4x240xf32>, tensor<240x1000xf32>) -> tensor<4x1000xf32> {
  ^bb0(%p: tensor<4x240xf32>, %r: tensor<240x1000xf32>):
    %q = graph.matmul %p, %r : (tensor<4x240xf32>, tensor<240x1000xf32>) -> tensor<4x1000xf32>
    graph.yield %q : tensor<4x1000xf32>
  }
  %c = graph.kernel %a {kind = #graph.kind<softmax>, precision = #graph.precision<fp32>, graph.chip = 1 : i64} : (tensor<4x240xf32>) -> tensor<4x240xf32> {
  ^bb0(%p: tensor<4x240xf32>):
    %q = graph.softmax %p {axis = 1 : i64} : (tensor<4x240xf32>) -> tensor<4x240xf32>
    graph.yield %q : tensor<4x240xf32>
  }
  return %b, %c : tensor<4x1000xf32>, tensor<4x240xf32>
}
