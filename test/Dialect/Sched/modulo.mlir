// Tests spatial-to-sched's software pipelining on the tiny target: mm (a
// 16x16x16 bf16 matmul) on tiles 0 and 4, its result moved to relu on tiles
// 1 and 5, mapped pipelined by graph-to-spatial.
// RUN: %loom-opt --graph-to-spatial="target=tiny mapping=pipelined" --spatial-to-sched=target=tiny %s | FileCheck %s
// RUN: %loom-opt --graph-to-spatial="target=tiny mapping=pipelined" --spatial-to-sched=target=tiny --sched-verify=target=tiny %s > /dev/null
// RUN: not %loom-opt --graph-to-spatial="target=tiny mapping=pipelined" --spatial-to-sched="target=tiny max-ii=20" %s 2>&1 | FileCheck %s --check-prefix=MAXII
// RUN: %loom-opt --graph-to-spatial="target=%S/Inputs/tiny-small-sram.json mapping=pipelined" --spatial-to-sched=target=%S/Inputs/tiny-small-sram.json %s | FileCheck %s --check-prefix=SRAM
// RUN: not %loom-opt --graph-to-spatial="target=%S/Inputs/tiny-slow-mesh.json mapping=pipelined" --spatial-to-sched="target=%S/Inputs/tiny-slow-mesh.json max-ii=100" %s 2>&1 | FileCheck %s --check-prefix=LINK

// The busiest unit is mm's matrix unit, 22 cycles per input, so a new input
// starts every 22 cycles (II) while one input takes 42 (latency): mm of
// input k+1 runs while relu of input k does. mm splits by output rows
// (matmul.rows): each tile reads its 8 rows of x and the whole weight,
// which is resident (one copy for every input) and, read only by a bf16
// matmul, stored in bf16: 16 x 16 x 2 bytes on each tile.
// CHECK: sched.buffer 2 %{{.*}} tile 0 offset {{[0-9]+}} size 512 live 0 to 42 {resident}
// CHECK: sched.instr 0 "matrix"[0] start 0 duration 22 kernel 0
// mm's result lives from cycle 0 until the transfer has read it at 32, more
// than one interval: two copies rotate, so input k+1 does not overwrite it.
// CHECK: sched.buffer 4 %{{.*}} tile 0 offset 0 size 512 live 0 to 32 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64}
// CHECK: sched.instr 2 "dma"[0] start 22 duration 10 kernel -1 bytes 512 deps [0, 1]
// CHECK: sched.instr 4 "link"[0] start 22 duration 10
// relu's input lives 20 cycles (22 to 42): one copy, at offset 0 of tile 1,
// and relu's output fits beside it over [10, 20) modulo 22.
// CHECK: sched.buffer 6 %{{.*}} tile 1 offset 0 size 512 live 22 to 42 {box = array<i64: 0, 0, 8, 16>}
// CHECK: sched.instr 6 "vector"[1] start 32 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
// CHECK: sched.buffer 8 %{{.*}} tile 1 offset 512 size 512 live 32 to 42 {box = array<i64: 0, 0, 8, 16>}
// CHECK: sched.summary {initiation_interval = 22 : i64, mapping = "pipelined", {{.*}}total_cycles = 42 : i64}

// With 1536 bytes of SRAM a tile, tile 0 cannot hold two copies of mm's result beside the input and the weight: at the
// 22-cycle interval they overflow, so the interval grows (doubling, then
// halving the gap) to 32, where mm's result lives one interval and needs
// one copy; one input at a time would be 42 cycles.
// SRAM: sched.buffer 4 %{{.*}} tile 0 offset {{[0-9]+}} size 512 live 0 to 32 {box = array<i64: 0, 0, 8, 16>} :
// SRAM: sched.summary {initiation_interval = 32 : i64, mapping = "pipelined"

// MAXII: error: {{.*}}spatial-to-sched: matrix unit of tile 4 (1,0) is oversubscribed: it is busy 22 cycles per input for 'mm', more than the initiation interval limit of 20 cycles (max-ii)

// With 1-byte links, moving mm's 512-byte shards takes 514 cycles a link.
// LINK: error: {{.*}}spatial-to-sched: mesh link {{[0-9]+}} (tile {{[0-9]+}} -> tile {{[0-9]+}}) is oversubscribed: it is busy {{[0-9]+}} cycles per input for 'mm' -> 'relu', more than the initiation interval limit of 100 cycles (max-ii)
func.func @small(%x: tensor<16x16xf32> {graph.name = "x"}) -> (tensor<16x16xf32> {graph.name = "y"}) {
  %w = graph.constant {value = dense<0.5> : tensor<16x16xf32>} : () -> tensor<16x16xf32> loc("w")
  %h = graph.kernel %x, %w {kind = "matmul", precision = "bf16"} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>):
    %m = graph.matmul %a, %b : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> loc("mm")
    graph.yield %m : tensor<16x16xf32>
  } loc("mm")
  %y = graph.kernel %h {kind = "elementwise", precision = "fp32"} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%a: tensor<16x16xf32>):
    %r = graph.relu %a : (tensor<16x16xf32>) -> tensor<16x16xf32> loc("relu")
    graph.yield %r : tensor<16x16xf32>
  } loc("relu")
  return %y : tensor<16x16xf32>
}
