// Tests spatial-to-sched across chips: a chip link is busy for a message's
// bytes only, and the message arrives the route's latency later (1 us, 1000
// cycles on tiny). Two values crossing the same link: the second message
// takes the link as soon as the first's bytes are through, and each reader
// starts when its message arrives (the second reader on tiles 18 and 19,
// beside the first's output: program outputs count as resident in
// graph-to-spatial's balance). One value sent to two chips: the source
// tiles' DMA units inject each message at their own (mesh) rate, 8 cycles,
// not held while the link drains (52 cycles), so the second message takes
// its own link 8 cycles after the first instead of after the first's bytes.
// The producers take 6 cycles (rule kernel.vector: 128 element ops on 64
// lanes plus 4 cycles of latency; docs/isa.md).
// RUN: %loom-opt --graph-to-spatial=target=tiny --spatial-to-sched=target=tiny %s | FileCheck %s

// CHECK-LABEL: func.func @two_messages
// CHECK: sched.instr 6 "chip_link"[[[L:[0-9]+]]] start 6 duration 26 latency 1000 kernel -1 bytes 1024
// CHECK: sched.instr 7 "vector"[16] start 1032 duration 6 kernel 2 {{.*}}deps [4, 5, 6]
// CHECK: sched.instr 11 "chip_link"[[[L]]] start 32 duration 26 latency 1000 kernel -1 bytes 1024
// CHECK: sched.instr 12 "vector"[18] start 1058 duration 6 kernel 3
func.func @two_messages(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) attributes {graph.chips = 2 : i64, graph.pp = 2 : i64, graph.tp = 1 : i64} {
  %a = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 0 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%p: tensor<4x64xf32>):
    %q = graph.relu %p : (tensor<4x64xf32>) -> tensor<4x64xf32>
    graph.yield %q : tensor<4x64xf32>
  }
  %b = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 0 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%p: tensor<4x64xf32>):
    %q = graph.neg %p : (tensor<4x64xf32>) -> tensor<4x64xf32>
    graph.yield %q : tensor<4x64xf32>
  }
  %c = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 1 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%p: tensor<4x64xf32>):
    %q = graph.exp %p : (tensor<4x64xf32>) -> tensor<4x64xf32>
    graph.yield %q : tensor<4x64xf32>
  }
  %d = graph.kernel %b {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 1 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%p: tensor<4x64xf32>):
    %q = graph.exp %p : (tensor<4x64xf32>) -> tensor<4x64xf32>
    graph.yield %q : tensor<4x64xf32>
  }
  return %c, %d : tensor<4x64xf32>, tensor<4x64xf32>
}

// CHECK-LABEL: func.func @fan_out
// CHECK: sched.instr 2 "dma"[0] start 6 duration 8 kernel -1 bytes 512
// CHECK: sched.instr 4 "chip_link"[[[A:[0-9]+]]] start 6 duration 52 latency 1000 kernel -1 bytes 1024
// CHECK: sched.instr 7 "dma"[0] start 14 duration 8 kernel -1 bytes 512
// CHECK: sched.instr 9 "chip_link"[[[B:[0-9]+]]] start 14 duration 52 latency 1000 kernel -1 bytes 1024
// CHECK: sched.instr 10 "vector"[32] start 1066
func.func @fan_out(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) attributes {graph.chips = 3 : i64, graph.pp = 3 : i64, graph.tp = 1 : i64} {
  %a = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 0 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%p: tensor<4x64xf32>):
    %q = graph.relu %p : (tensor<4x64xf32>) -> tensor<4x64xf32>
    graph.yield %q : tensor<4x64xf32>
  }
  %c = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 1 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%p: tensor<4x64xf32>):
    %q = graph.exp %p : (tensor<4x64xf32>) -> tensor<4x64xf32>
    graph.yield %q : tensor<4x64xf32>
  }
  %d = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 2 : i64} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%p: tensor<4x64xf32>):
    %q = graph.neg %p : (tensor<4x64xf32>) -> tensor<4x64xf32>
    graph.yield %q : tensor<4x64xf32>
  }
  return %c, %d : tensor<4x64xf32>, tensor<4x64xf32>
}
