// Tests spatial-to-sched's software pipelining on the tiny target: mm (a
// 16x16x16 bf16 matmul) on tiles 0 and 4, its result moved to relu on tiles
// 1 and 5, mapped pipelined by graph-to-spatial.
// RUN: %loom-opt --graph-to-spatial="target=tiny mapping=pipelined" --spatial-to-sched=target=tiny %s | FileCheck %s
// RUN: %loom-opt --graph-to-spatial="target=tiny mapping=pipelined" --spatial-to-sched=target=tiny --sched-verify=target=tiny %s > /dev/null
// RUN: not %loom-opt --graph-to-spatial="target=tiny mapping=pipelined" --spatial-to-sched="target=tiny max-ii=19" %s 2>&1 | FileCheck %s --check-prefix=MAXII
// RUN: %loom-opt --graph-to-spatial="target=%S/Inputs/tiny-small-sram.json mapping=pipelined" --spatial-to-sched=target=%S/Inputs/tiny-small-sram.json %s | FileCheck %s --check-prefix=SRAM
// RUN: not %loom-opt --graph-to-spatial="target=%S/Inputs/tiny-slow-mesh.json mapping=pipelined" --spatial-to-sched="target=%S/Inputs/tiny-slow-mesh.json max-ii=100" %s 2>&1 | FileCheck %s --check-prefix=LINK

// The busiest unit is mm's matrix unit, 20 cycles per input (rule
// kernel.matrix, docs/isa.md: one 16x16x16 block at 1024 bf16 MACs a cycle
// is 4 cycles, plus 16 of latency), so a new input starts every 20 cycles
// (II) while one input takes 36 (latency): mm of input k+1 runs while relu
// of input k does. mm splits by output rows (matmul.rows): each tile reads
// its 8 rows of x and the whole weight, which is resident (one copy for
// every input) and, read only by a bf16 matmul, stored in bf16: 16 x 16 x 2
// bytes on each tile.
// CHECK: sched.buffer 2 %{{.*}} tile 0 offset {{[0-9]+}} size 512 live 0 to 36 {resident}
// CHECK: sched.instr 0 "matrix"[0] start 0 duration 20 kernel 0
// mm's result lives from cycle 0 until the transfer has read it at 30, more
// than one interval: two copies rotate, so input k+1 does not overwrite it.
// CHECK: sched.buffer 4 %{{.*}} tile 0 offset 0 size 512 live 0 to 30 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64}
// CHECK: sched.instr 2 "dma"[0] start 20 duration 10 kernel -1 bytes 512 deps [0, 1]
// CHECK: sched.instr 4 "link"[0] start 20 duration 10
// relu's input lives 16 cycles (20 to 36): one copy, at offset 0 of tile 1,
// and relu's output (6 cycles: 128 ops on 64 lanes plus 4) fits beside it.
// CHECK: sched.buffer 6 %{{.*}} tile 1 offset 0 size 512 live 20 to 36 {box = array<i64: 0, 0, 8, 16>}
// CHECK: sched.instr 6 "vector"[1] start 30 duration 6 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
// CHECK: sched.buffer 8 %{{.*}} tile 1 offset 512 size 512 live 30 to 36 {box = array<i64: 0, 0, 8, 16>}
// CHECK: sched.summary {initiation_interval = 20 : i64, mapping = "pipelined", {{.*}}total_cycles = 36 : i64}

// With 1536 bytes of SRAM a tile, tile 0 cannot hold two copies of mm's result beside the input and the weight: at the
// 20-cycle interval they overflow, so the interval grows (doubling, then
// halving the gap) to 30, where mm's result lives one interval and needs
// one copy; one input at a time would be 36 cycles.
// SRAM: sched.buffer 4 %{{.*}} tile 0 offset {{[0-9]+}} size 512 live 0 to 30 {box = array<i64: 0, 0, 8, 16>} :
// SRAM: sched.summary {initiation_interval = 30 : i64, mapping = "pipelined"

// MAXII: error: {{.*}}spatial-to-sched: matrix unit of tile 4 (1,0) is oversubscribed: it is busy 20 cycles per input for 'mm', more than the initiation interval limit of 19 cycles (max-ii)

// With 1-byte links, moving mm's 512-byte shards takes 514 cycles a link.
// LINK: error: {{.*}}spatial-to-sched: mesh link {{[0-9]+}} (tile {{[0-9]+}} -> tile {{[0-9]+}}) is oversubscribed: it is busy {{[0-9]+}} cycles per input for 'mm' -> 'relu', more than the initiation interval limit of 100 cycles (max-ii)
func.func @small(%x: tensor<16x16xf32> {graph.name = "x"}) -> (tensor<16x16xf32> {graph.name = "y"}) {
  %w = graph.constant {value = dense<0.5> : tensor<16x16xf32>} : () -> tensor<16x16xf32> loc("w")
  %h = graph.kernel %x, %w {kind = #graph.kind<matmul>, precision = #graph.precision<bf16>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>):
    %m = graph.matmul %a, %b : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> loc("mm")
    graph.yield %m : tensor<16x16xf32>
  } loc("mm")
  %y = graph.kernel %h {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%a: tensor<16x16xf32>):
    %r = graph.relu %a : (tensor<16x16xf32>) -> tensor<16x16xf32> loc("relu")
    graph.yield %r : tensor<16x16xf32>
  } loc("relu")
  return %y : tensor<16x16xf32>
}
