// Tests that spatial-to-sched rejects a buffer too big for its tile even
// when no kernel reads it: an unused 512 KiB input placed on tile 15 of
// tiny (256 KiB a tile) has no lifetime, so it counts in no peak of live
// bytes; the allocation still ends past the tile's SRAM. The pipelined
// mapping's interval search must not take that layout as fitting (it did
// when "does not fit" was inferred from a need of 0 bytes), and the
// diagnostic names the bytes the buffer needs.
// RUN: not %loom-opt --spatial-to-sched=target=tiny %s 2>&1 | FileCheck %s

// CHECK: error: kernel '?' does not fit in SRAM: tile 15 needs 524288 bytes after allocation but has 262144 bytes
func.func @small(%arg0: tensor<16x16xf32> {graph.name = "x", spatial.region = array<i64: 0, 0, 2, 1>, spatial.shard_dim = 0 : i64}, %big: tensor<512x256xf32> {spatial.region = array<i64: 3, 3, 1, 1>, spatial.shard_dim = -1 : i64}) -> (tensor<16x16xf32> {graph.name = "y"}) attributes {spatial.mapping = "pipelined", spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency 50 = II; pipelined: 1 group of 2-row bands, latency 42, II 22", spatial.pipeline_groups = 1 : i64} {
  %0 = spatial.weight {region = array<i64: 0, 0, 2, 1>, shard_dim = 0 : i64, value = dense<5.000000e-01> : tensor<16x16xf32>} : tensor<16x16xf32>
  %1 = spatial.kernel %arg0, %0 {bound = #graph.bound<fill_drain>, bytes = 1536 : i64, cycles = 22 : i64, flops = 8192 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<bf16>, region = array<i64: 0, 0, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>):
    %4 = graph.matmul %arg1, %arg2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  %2 = spatial.transfer %1 {bytes = 1024 : i64, from_region = array<i64: 0, 0, 2, 1>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0, 10>, to_region = array<i64: 0, 1, 2, 1>, to_shard_dim = 0 : i64} : tensor<16x16xf32>
  %3 = spatial.kernel %2 {bound = #graph.bound<fill_drain>, bytes = 2048 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "relu", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 1, 2, 1>, shard_dims = array<i64: 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%arg1: tensor<16x16xf32>):
    %4 = graph.relu %arg1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
    spatial.yield %4 : tensor<16x16xf32>
  }
  return %3 : tensor<16x16xf32>
}
