// Tests sched-verify, the independent schedule verifier, on a pipelined
// schedule of the tiny target (mm on tiles 0 and 4, its result moved over
// mesh links 0 and 10 to relu on tiles 1 and 5; II 34, latency 54) and on
// copies of it each broken in one way. Each violation is reported at the
// instruction or buffer it names.
// RUN: %loom-opt --split-input-file --sched-verify=target=tiny -verify-diagnostics %s | FileCheck %s
// RUN: not %loom-opt --split-input-file --sched-verify="target=tiny max-violations=8" %s 2>&1 | FileCheck %s --check-prefix=ALL

// With max-violations, the early start also reports its other deps and the
// write outside the output buffer's lifetime.
// ALL-COUNT-4: starts at cycle 40 before its dep
// ALL: instr 6 {{.*}} writes buffer 8 {{.*}}, which is not live for the whole instr

// The schedule as spatial-to-sched wrote it passes unchanged.
// CHECK-LABEL: func.func @sound(
func.func @sound(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 0 "matrix"[0] start 0 duration 34 kernel 0 bytes 0 deps [] reads [0, 2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
  sched.instr 2 "dma"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 5 "link"[10] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 6 "vector"[1] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  sched.buffer 8 %3 tile 1 offset 512 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 34 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}

// -----

// early start
func.func @early_start(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 0 "matrix"[0] start 0 duration 34 kernel 0 bytes 0 deps [] reads [0, 2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
  sched.instr 2 "dma"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 5 "link"[10] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  // expected-error @below {{schedule violation (dependency): instr 6 [kernel 1 'relu', vector unit of tile 1 (0,1), cycles 40-50] starts at cycle 40 before its dep instr 2}}
  sched.instr 6 "vector"[1] start 40 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  sched.buffer 8 %3 tile 1 offset 512 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 34 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}

// -----

// dropped dep
func.func @dropped_dep(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 0 "matrix"[0] start 0 duration 34 kernel 0 bytes 0 deps [] reads [0, 2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
  sched.instr 2 "dma"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 5 "link"[10] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  // expected-error @below {{schedule violation (data-arrival): instr 6 [kernel 1 'relu', vector unit of tile 1 (0,1), cycles 44-54] reads buffer 6}}
  sched.instr 6 "vector"[1] start 44 duration 10 kernel 1 bytes 0 deps [3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  sched.buffer 8 %3 tile 1 offset 512 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 34 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}

// -----

// overlapping buffers
func.func @overlapping_buffers(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 0 "matrix"[0] start 0 duration 34 kernel 0 bytes 0 deps [] reads [0, 2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
  sched.instr 2 "dma"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 5 "link"[10] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 6 "vector"[1] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  // expected-error @below {{schedule violation (sram-overlap): buffer 8}}
  sched.buffer 8 %3 tile 1 offset 256 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 34 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}

// -----

// too few copies
func.func @too_few_copies(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 0 "matrix"[0] start 0 duration 34 kernel 0 bytes 0 deps [] reads [0, 2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  // expected-error @below {{schedule violation (buffer-copies): buffer 4}}
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
  sched.instr 2 "dma"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 5 "link"[10] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 6 "vector"[1] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  sched.buffer 8 %3 tile 1 offset 512 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 34 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}

// -----

// double booked link
func.func @double_booked_link(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 0 "matrix"[0] start 0 duration 34 kernel 0 bytes 0 deps [] reads [0, 2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
  sched.instr 2 "dma"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  // expected-error @below {{overlap on the mesh link 0 (tile 0 -> tile 1)}}
  sched.instr 5 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [] writes []
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 6 "vector"[1] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  sched.buffer 8 %3 tile 1 offset 512 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 34 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}

// -----

// interval too short
func.func @interval_too_short(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  // expected-error @below {{runs 34 cycles, longer than the initiation interval 30}}
  sched.instr 0 "matrix"[0] start 0 duration 34 kernel 0 bytes 0 deps [] reads [0, 2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
  sched.instr 2 "dma"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 5 "link"[10] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 6 "vector"[1] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  sched.buffer 8 %3 tile 1 offset 512 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 30 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}

// -----

// A matrix instr given 1 cycle: its rule (kernel.matrix: one 16x16x16 fp32 block of 4096 MACs at 256 a cycle, plus 16 of latency) needs 32.
func.func @matrix_one_cycle(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
// expected-error @+1 {{schedule violation (timing): instr 0 [kernel 0 'mm', matrix unit of tile 0 (0,0), cycles 0-1] lasts 1 cycles, less than the 32 its timing rule gives (kernel.matrix: 1 contraction (1 x 8x16x16) in fp32, 2048 SRAM bytes)}}
  sched.instr 0 "matrix"[0] start 0 duration 1 kernel 0 bytes 0 deps [] reads [0, 2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
  sched.instr 2 "dma"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 5 "link"[10] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 6 "vector"[1] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  sched.buffer 8 %3 tile 1 offset 512 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 34 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}

// -----

// A 512-byte DMA given 1 cycle: at 64 bytes a cycle over one hop it needs 10 (transfer.mesh).
func.func @dma_one_cycle(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 0 "matrix"[0] start 0 duration 34 kernel 0 bytes 0 deps [] reads [0, 2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
// expected-error @+1 {{schedule violation (timing): instr 2 [transfer, dma unit of tile 0 (0,0), cycles 34-35] lasts 1 cycles, less than the 10 its timing rule gives (transfer.mesh: 512 bytes, 1 hops)}}
  sched.instr 2 "dma"[0] start 34 duration 1 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 5 "link"[10] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 6 "vector"[1] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  sched.buffer 8 %3 tile 1 offset 512 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 34 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}

// -----

// A transfer that says it carries 1 byte: its buffers' boxes hold 512.
func.func @transfer_one_byte(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 0 "matrix"[0] start 0 duration 34 kernel 0 bytes 0 deps [] reads [0, 2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
// expected-error @+1 {{schedule violation (timing): instr 2 [transfer, dma unit of tile 0 (0,0), cycles 34-44] says it carries 1 bytes, but the buffers it moves hold 512 (transfer.mesh: 512 bytes, 1 hops)}}
  sched.instr 2 "dma"[0] start 34 duration 10 kernel -1 bytes 1 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 5 "link"[10] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 6 "vector"[1] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  sched.buffer 8 %3 tile 1 offset 512 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 34 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}

// -----

// A kernel instr without its first read: the matmul needs rows [0, 8) of x on tile 0.
func.func @first_read_removed(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 60 = II; pipelined: 1 group of 2-row bands, latency 54, II 34", spatial.pipeline_groups = 1 : i64} {
  sched.buffer 0 %arg0 tile 0 offset 1024 size 512 live 0 to 34 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 1 %arg0 tile 4 offset 1024 size 512 live 0 to 34 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  sched.buffer 2 %0 tile 0 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  sched.buffer 3 %0 tile 4 offset 1536 size 1024 live 0 to 54 {box = array<i64: 0, 0, 16, 16>, resident} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 3072 : i64, cycles = 34 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
// expected-error @+1 {{schedule violation (data-flow): instr 0 [kernel 0 'mm', matrix unit of tile 0 (0,0), cycles 0-34] does not read what its ops need: op 0 'matmul': needs [0, 8) x [0, 16) of tensor 0}}
  sched.instr 0 "matrix"[0] start 0 duration 34 kernel 0 bytes 0 deps [] reads [2] writes [4]
  sched.instr 1 "matrix"[4] start 0 duration 34 kernel 0 bytes 0 deps [] reads [1, 3] writes [5]
  sched.buffer 4 %1 tile 0 offset 0 size 512 live 0 to 44 {box = array<i64: 0, 0, 8, 16>, copies = 2 : i64} : tensor<16x16xf32>
  sched.buffer 5 %1 tile 4 offset 0 size 512 live 0 to 44 {box = array<i64: 8, 0, 16, 16>, copies = 2 : i64} : tensor<16x16xf32>
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
  sched.instr 2 "dma"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 3 "dma"[4] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.instr 4 "link"[0] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [4] writes [6]
  sched.instr 5 "link"[10] start 34 duration 10 kernel -1 bytes 512 deps [0, 1] reads [5] writes [7]
  sched.buffer 6 %2 tile 1 offset 0 size 512 live 34 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 7 %2 tile 5 offset 0 size 512 live 34 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  sched.instr 6 "vector"[1] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [6] writes [8]
  sched.instr 7 "vector"[5] start 44 duration 10 kernel 1 bytes 0 deps [2, 3, 4, 5] reads [7] writes [9]
  sched.buffer 8 %3 tile 1 offset 512 size 512 live 44 to 54 {box = array<i64: 0, 0, 8, 16>} : tensor<16x16xf32>
  sched.buffer 9 %3 tile 5 offset 512 size 512 live 44 to 54 {box = array<i64: 8, 0, 16, 16>} : tensor<16x16xf32>
  sched.summary {initiation_interval = 34 : i64, mapping = "pipelined", roofline_cycles = 2 : i64, sram_lower_bound_bytes = 2048 : i64, sram_peak_bytes = 2048 : i64, sram_peak_per_tile = array<i64: 2048, 1024, 0, 0, 2048, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, total_cycles = 54 : i64}
  return %3 : tensor<16x16xf32>
}
