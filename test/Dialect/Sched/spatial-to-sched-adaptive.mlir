// Tests spatial-to-sched's adaptive routing (docs/targets.md): four chips
// (two nodes of two) compiled as the first of the eight of tiny-dragonfly
// (four nodes), one tensor-parallel block. Chip 0's global bundle to chip 2
// carries minimal routing's share, 2 of its 4 links over the 3 other nodes
// (6.67 bytes a cycle at 10 per link), or Valiant's, the 2 links over
// 2 x 1 partner node (10 bytes a cycle) at two hops' latency (20 cycles
// against 10). A 16 KiB message takes the second: 1639 cycles on the link
// and 20 of latency (minimal: 2458 and 10). A 16-byte message stays
// minimal: 3 cycles and 10. The whole 8-chip system at tp 4: the blocks
// are nodes {0, 1} and {2, 3}, so the same message to chip 2 takes
// Valiant's share; so does one to chip 4, the same chip of the next block
// (a pipeline's hand-off: node 0 sends to node 2 alone, k = 1), and one to
// chip 6 (another chip of another block) minimal routing's.
// RUN: %loom-opt --graph-to-spatial=target=%S/Inputs/tiny-dragonfly.json --spatial-to-sched=target=%S/Inputs/tiny-dragonfly.json %s | FileCheck %s

// CHECK-LABEL: func.func @large
// CHECK: "chip_link"[{{[0-9]+}}] start {{[0-9]+}} duration 1639 latency 20 kernel -1 bytes 16384
func.func @large(%x: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {graph.chips = 4 : i64, graph.pp = 1 : i64, graph.tp = 4 : i64, graph.system_chips = 8 : i64} {
  %a = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 0 : i64} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%p: tensor<64x64xf32>):
    %q = graph.relu %p : (tensor<64x64xf32>) -> tensor<64x64xf32>
    graph.yield %q : tensor<64x64xf32>
  }
  %c = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 2 : i64} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%p: tensor<64x64xf32>):
    %q = graph.exp %p : (tensor<64x64xf32>) -> tensor<64x64xf32>
    graph.yield %q : tensor<64x64xf32>
  }
  return %c : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @small
// CHECK: "chip_link"[{{[0-9]+}}] start {{[0-9]+}} duration 3 latency 10 kernel -1 bytes 16
func.func @small(%x: tensor<1x4xf32>) -> tensor<1x4xf32> attributes {graph.chips = 4 : i64, graph.pp = 1 : i64, graph.tp = 4 : i64, graph.system_chips = 8 : i64} {
  %a = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 0 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32> {
  ^bb0(%p: tensor<1x4xf32>):
    %q = graph.relu %p : (tensor<1x4xf32>) -> tensor<1x4xf32>
    graph.yield %q : tensor<1x4xf32>
  }
  %c = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 2 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32> {
  ^bb0(%p: tensor<1x4xf32>):
    %q = graph.exp %p : (tensor<1x4xf32>) -> tensor<1x4xf32>
    graph.yield %q : tensor<1x4xf32>
  }
  return %c : tensor<1x4xf32>
}

// CHECK-LABEL: func.func @blocks
// CHECK-DAG: "chip_link"[{{[0-9]+}}] start {{[0-9]+}} duration 1639 latency 20 kernel -1 bytes 16384
// CHECK-DAG: "chip_link"[{{[0-9]+}}] start {{[0-9]+}} duration 1639 latency 20 kernel -1 bytes 16384
// CHECK-DAG: "chip_link"[{{[0-9]+}}] start {{[0-9]+}} duration 2458 latency 10 kernel -1 bytes 16384
// CHECK-NOT: "chip_link"{{.*}}bytes 16384
// CHECK-LABEL: func.func
func.func @blocks(%x: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) attributes {graph.chips = 8 : i64, graph.pp = 1 : i64, graph.tp = 4 : i64} {
  %a = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 0 : i64} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%p: tensor<64x64xf32>):
    %q = graph.relu %p : (tensor<64x64xf32>) -> tensor<64x64xf32>
    graph.yield %q : tensor<64x64xf32>
  }
  %c = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 2 : i64} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%p: tensor<64x64xf32>):
    %q = graph.exp %p : (tensor<64x64xf32>) -> tensor<64x64xf32>
    graph.yield %q : tensor<64x64xf32>
  }
  %d = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 4 : i64} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%p: tensor<64x64xf32>):
    %q = graph.neg %p : (tensor<64x64xf32>) -> tensor<64x64xf32>
    graph.yield %q : tensor<64x64xf32>
  }
  %e = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 6 : i64} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%p: tensor<64x64xf32>):
    %q = graph.tanh %p : (tensor<64x64xf32>) -> tensor<64x64xf32>
    graph.yield %q : tensor<64x64xf32>
  }
  return %c, %d, %e : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// The end of the file (the CHECK-NOT above stops here).
func.func @end() {
  return
}
