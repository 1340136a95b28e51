// An instruction longer than 2^40 cycles is refused naming the task and the
// target field whose rate sets it (issue #32 item 5: a schedule's sums of
// cycles must stay within 64 bits). The 8 GiB hand-off from chip 0 to chip
// 1 crosses their bundle of 4 links at 0.001 bytes a cycle each:
// 2^33 / 0.004 = 2147483648000 cycles.
// RUN: not %loom-opt --graph-to-spatial=target=%S/Inputs/tiny-slow-links.json --spatial-to-sched=target=%S/Inputs/tiny-slow-links.json %s 2>&1 | FileCheck %s
// CHECK: error: spatial-to-sched: 'kernel0' -> 'kernel1': its chip_link instruction would take 2147483648000 cycles, more than the 2^40 a schedule holds: system.links.bytes_per_second is too slow for its 8589934592 bytes
func.func @big(%x: tensor<65536x32768xf32>) -> tensor<65536x32768xf32> attributes {graph.chips = 2 : i64, graph.pp = 2 : i64, graph.tp = 1 : i64} {
  %a = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 0 : i64} : (tensor<65536x32768xf32>) -> tensor<65536x32768xf32> {
  ^bb0(%p: tensor<65536x32768xf32>):
    %q = graph.relu %p : (tensor<65536x32768xf32>) -> tensor<65536x32768xf32>
    graph.yield %q : tensor<65536x32768xf32>
  }
  %c = graph.kernel %a {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, graph.chip = 1 : i64} : (tensor<65536x32768xf32>) -> tensor<65536x32768xf32> {
  ^bb0(%p: tensor<65536x32768xf32>):
    %q = graph.exp %p : (tensor<65536x32768xf32>) -> tensor<65536x32768xf32>
    graph.yield %q : tensor<65536x32768xf32>
  }
  return %c : tensor<65536x32768xf32>
}
