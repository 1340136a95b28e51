// Tests that spatial-to-sched blames the kernel whose buffer pushes a tile
// over its SRAM, not the first kernel on the tile.
// RUN: not %loom-opt --spatial-to-sched=target=tiny %s 2>&1 | FileCheck %s

// 'small' fills tile 0 exactly (128 KiB input, 128 KiB result; tiny has
// 256 KiB per tile); the 192 KiB weight of 'second' pushes it over.
// CHECK: loc("second"): kernel 'second' does not fit in SRAM: tile 0 needs 458752 bytes live at once but has 262144 bytes
// CHECK-NOT: error:
func.func @second_overflows(%x: tensor<32768xf32> {spatial.region = array<i64: 0, 0, 1, 1>, spatial.shard_dim = -1 : i64}) -> tensor<32768xf32> {
  %a = spatial.kernel %x {bound = #graph.bound<compute>, bytes = 0 : i64, cycles = 10 : i64, flops = 0 : i64, id = 0 : i64, kernel_name = "small", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<32768xf32>) -> tensor<32768xf32> {
  ^bb0(%p: tensor<32768xf32>):
    %r = graph.relu %p : (tensor<32768xf32>) -> tensor<32768xf32>
    spatial.yield %r : tensor<32768xf32>
  } loc("small")
  %w = spatial.weight {region = array<i64: 0, 0, 1, 1>, shard_dim = -1 : i64, value = dense<1.0> : tensor<49152xf32>} : tensor<49152xf32> loc("w2")
  %b = spatial.kernel %a, %w {bound = #graph.bound<compute>, bytes = 0 : i64, cycles = 10 : i64, flops = 0 : i64, id = 1 : i64, kernel_name = "second", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<32768xf32>, tensor<49152xf32>) -> tensor<32768xf32> {
  ^bb0(%p: tensor<32768xf32>, %q: tensor<49152xf32>):
    %r = graph.relu %p : (tensor<32768xf32>) -> tensor<32768xf32>
    spatial.yield %r : tensor<32768xf32>
  } loc("second")
  return %b : tensor<32768xf32>
}
