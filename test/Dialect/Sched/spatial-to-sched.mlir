// Tests spatial-to-sched on hand-placed kernels for the tiny target (4x4
// tiles, 64 B/cycle mesh links, 2 cycles per hop, 256 B/cycle SRAM).
// RUN: %loom-opt --split-input-file --spatial-to-sched=target=tiny %s | FileCheck %s

// Tests that two independent kernels on different tiles start together at
// cycle 0, that a transfer from tile 1 to tile 0 waits for its producer and
// uses the DMA of tile 1 and the westward link 1->0 (link 3: tile 0 has
// links 0 (east) and 1 (south), tile 1 has 2 (east) and 3 (west)), and that the
// consumer waits for both the transfer and the other kernel. Durations are
// the ISA's rules (docs/isa.md), not the kernels' `cycles` estimates:
//  a: 8 ops x 64 elements on 64 lanes = 8 cycles + 4 latency = 12
//     (its 512 SRAM bytes take 2);
//  b: 64 ops = 1 + 4 = 5;
//  the transfer: 256 bytes at 64 B/cycle = 4 cycles, plus 1 hop x 2 = 6,
//  so it arrives at 11, before a ends;
//  c: 64 ops = 5, starting when a ends at 12: the program ends at 17.
// CHECK-LABEL: func.func @independent_then_join
// CHECK: sched.buffer 0 %arg0 tile 0 offset {{[0-9]+}} size 256 live 0 to 12
// CHECK: sched.buffer 1 %arg1 tile 1 offset {{[0-9]+}} size 256 live 0 to 5
// CHECK: %[[A:.*]] = spatial.kernel
// CHECK: sched.instr 0 "vector"[0] start 0 duration 12 kernel 0 bytes 0 deps [] reads [0] writes [2]
// CHECK: sched.buffer 2 %[[A]] tile 0 offset {{[0-9]+}} size 256 live 0 to 17
// CHECK: %[[B:.*]] = spatial.kernel
// CHECK: sched.instr 1 "vector"[1] start 0 duration 5 kernel 1 bytes 0 deps [] reads [1] writes [3]
// The producer's buffer lives until the transfer has read it.
// CHECK: sched.buffer 3 %[[B]] tile 1 offset {{[0-9]+}} size 256 live 0 to 11
// CHECK: %[[T:.*]] = spatial.transfer %[[B]]
// CHECK: sched.instr 2 "dma"[1] start 5 duration 6 kernel -1 bytes 256 deps [1] reads [3] writes [4]
// CHECK: sched.instr 3 "link"[3] start 5 duration 6 kernel -1 bytes 256 deps [1] reads [3] writes [4]
// CHECK: sched.buffer 4 %[[T]] tile 0 offset {{[0-9]+}} size 256 live 5 to 17
// CHECK: spatial.kernel %[[A]], %[[T]]
// CHECK: sched.instr 4 "vector"[0] start 12 duration 5 kernel 2 bytes 0 deps [0, 2, 3] reads [2, 4] writes [5]
// CHECK: sched.summary {roofline_cycles = {{[0-9]+}} : i64, sram_lower_bound_bytes = 768 : i64, sram_peak_bytes = 768 : i64, sram_peak_per_tile = array<i64: 768, 512, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 17 : i64}
func.func @independent_then_join(%x: tensor<64xf32> {spatial.region = array<i64: 0, 0, 1, 1>, spatial.shard_dim = -1 : i64},
                                 %y: tensor<64xf32> {spatial.region = array<i64: 0, 1, 1, 1>, spatial.shard_dim = -1 : i64}) -> tensor<64xf32> {
  %a = spatial.kernel %x {bound = #graph.bound<compute>, bytes = 512 : i64, cycles = 100 : i64, flops = 0 : i64, id = 0 : i64, kernel_name = "a", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%in: tensor<64xf32>):
    %r0 = graph.relu %in : (tensor<64xf32>) -> tensor<64xf32>
    %r1 = graph.neg %r0 : (tensor<64xf32>) -> tensor<64xf32>
    %r2 = graph.relu %r1 : (tensor<64xf32>) -> tensor<64xf32>
    %r3 = graph.neg %r2 : (tensor<64xf32>) -> tensor<64xf32>
    %r4 = graph.relu %r3 : (tensor<64xf32>) -> tensor<64xf32>
    %r5 = graph.neg %r4 : (tensor<64xf32>) -> tensor<64xf32>
    %r6 = graph.relu %r5 : (tensor<64xf32>) -> tensor<64xf32>
    %r7 = graph.neg %r6 : (tensor<64xf32>) -> tensor<64xf32>
    spatial.yield %r7 : tensor<64xf32>
  }
  %b = spatial.kernel %y {bound = #graph.bound<compute>, bytes = 512 : i64, cycles = 50 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "b", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 1, 1>, shard_dims = array<i64: -1>} : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%in: tensor<64xf32>):
    %r = graph.neg %in : (tensor<64xf32>) -> tensor<64xf32>
    spatial.yield %r : tensor<64xf32>
  }
  %t = spatial.transfer %b {bytes = 256 : i64, from_region = array<i64: 0, 1, 1, 1>, from_shard_dim = -1 : i64, hops = 1 : i64, links = array<i64: 3>, to_region = array<i64: 0, 0, 1, 1>, to_shard_dim = -1 : i64} : tensor<64xf32>
  %c = spatial.kernel %a, %t {bound = #graph.bound<compute>, bytes = 768 : i64, cycles = 54 : i64, flops = 0 : i64, id = 2 : i64, kernel_name = "c", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%p: tensor<64xf32>, %q: tensor<64xf32>):
    %r = graph.add %p, %q : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    spatial.yield %r : tensor<64xf32>
  }
  return %c : tensor<64xf32>
}

// -----

// Tests a chain on one tile: each kernel starts when its producer ends, a
// weight lives for the whole program, an activation lives from its
// producer's start to its last reader's end (the output to the end), and a
// dead buffer's bytes are reused (b's result takes the input's place).
// SRAM bounds these kernels (rule sram, 256 B/cycle): a and c read and
// write 3 x 4096 bytes (48 cycles, their 1024 adds take 16 + 4), b 8192
// (32 cycles).
// CHECK-LABEL: func.func @reuse
// CHECK: sched.buffer 0 %arg0 tile 0 offset 0 size 4096 live 0 to 48
// CHECK: %[[W:.*]] = spatial.weight
// CHECK: sched.buffer 1 %[[W]] tile 0 offset 4096 size 4096 live 0 to 128
// CHECK: sched.instr 0 "vector"[0] start 0 duration 48 kernel 0 bytes 0 deps [] reads [0, 1] writes [2]
// CHECK: sched.buffer 2 %{{.*}} tile 0 offset 8192 size 4096 live 0 to 80
// CHECK: sched.instr 1 "vector"[0] start 48 duration 32 kernel 1 bytes 0 deps [0] reads [2] writes [3]
// CHECK: sched.buffer 3 %{{.*}} tile 0 offset 0 size 4096 live 48 to 128
// CHECK: sched.instr 2 "vector"[0] start 80 duration 48 kernel 2 bytes 0 deps [1] reads [1, 3] writes [4]
// CHECK: sched.buffer 4 %{{.*}} tile 0 offset 8192 size 4096 live 80 to 128
// CHECK: sched.summary {{.*}}sram_lower_bound_bytes = 12288 : i64, sram_peak_bytes = 12288 : i64{{.*}}total_cycles = 128 : i64}
func.func @reuse(%x: tensor<1024xf32> {spatial.region = array<i64: 0, 0, 1, 1>, spatial.shard_dim = -1 : i64}) -> tensor<1024xf32> {
  %w = spatial.weight {region = array<i64: 0, 0, 1, 1>, shard_dim = -1 : i64, value = dense<1.0> : tensor<1024xf32>} : tensor<1024xf32>
  %a = spatial.kernel %x, %w {bound = #graph.bound<compute>, bytes = 0 : i64, cycles = 10 : i64, flops = 0 : i64, id = 0 : i64, kernel_name = "a", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%p: tensor<1024xf32>, %q: tensor<1024xf32>):
    %r = graph.add %p, %q : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    spatial.yield %r : tensor<1024xf32>
  }
  %b = spatial.kernel %a {bound = #graph.bound<compute>, bytes = 0 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "b", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%p: tensor<1024xf32>):
    %r = graph.relu %p : (tensor<1024xf32>) -> tensor<1024xf32>
    spatial.yield %r : tensor<1024xf32>
  }
  %c = spatial.kernel %b, %w {bound = #graph.bound<compute>, bytes = 0 : i64, cycles = 10 : i64, flops = 0 : i64, id = 2 : i64, kernel_name = "c", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%p: tensor<1024xf32>, %q: tensor<1024xf32>):
    %r = graph.mul %p, %q : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    spatial.yield %r : tensor<1024xf32>
  }
  return %c : tensor<1024xf32>
}
