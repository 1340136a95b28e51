// Tests graph-to-spatial on the tiny target: 4 x 4 tiles, per tile 256 fp32
// MACs/cycle in 16 x 16 x 16 blocks (16 cycles a block, latency 16), 64
// vector lanes (latency 4), 2 cycles per mesh hop.
// RUN: %loom-opt --split-input-file --graph-to-spatial=target=tiny %s | FileCheck %s

// Tests a matmul + bias + relu, a smaller matmul and a softmax.
// fc1 (64x128x256): 64 output blocks, 4 per tile on all 16 tiles, 8 k-steps:
// 4*8*16 = 512 cycles + fill 16 + 4 + 2*(3+3) = 544; 12 tiles would need 6
// blocks each (768), so all 16 pay. Split by rows or by columns the tiles
// do equal work; by columns each tile takes 16 of the weights' columns and
// the whole input (a multicast of 32 KiB to 16 tiles), where by rows every
// tile would need all 128 KiB of weights: columns win. The bias follows
// the columns.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: spatial.region = array<i64: 0, 0, 4, 4>, spatial.shard_dim = -2 : i64
// CHECK: %[[W1:.*]] = spatial.weight {region = array<i64: 0, 0, 4, 4>, shard_dim = 1 : i64, value = dense<5.000000e-01> : tensor<128x256xf32>}
// CHECK: %[[B1:.*]] = spatial.weight {region = array<i64: 0, 0, 4, 4>, shard_dim = 0 : i64, value = dense<1.000000e-01> : tensor<256xf32>}
// CHECK: %[[H:.*]] = spatial.kernel %arg0, %[[W1]], %[[B1]] {bound = #graph.bound<compute>, bytes = 229376 : i64, cycles = 544 : i64, decomposition = "matmul.cols", flops = 4194304 : i64, id = 0 : i64, kernel_name = "fc1", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 4, 4>, shard_dims = array<i64: 1>}
// CHECK: graph.matmul
// CHECK: graph.add
// CHECK: graph.relu
// CHECK: spatial.yield
// fc2 (64x256x32) has 8 output blocks, so at most 8 tiles: 2 x 4, one block
// each, 16 k-steps: 256 + 16 + 2*(1+3) = 280. Split by rows (8 a tile) or
// columns (4 a tile) each tile computes 256 outputs; by columns every tile
// would need all 64 KiB of the input (a 512 KiB multicast on every run),
// by rows only the input's rows move and each of the 8 tiles keeps a copy
// of the 32 KiB of weights: rows win. Its input moves
// from 16 tiles (16 columns each) to 8 (8 rows each); all 64 KiB move
// (local copies included), the longest route 5 hops.
// CHECK: %[[T:.*]] = spatial.transfer %[[H]] {bytes = 65536 : i64, from_region = array<i64: 0, 0, 4, 4>, from_shard_dim = 1 : i64, hops = 5 : i64, links = array<i64: {{.*}}>, to_region = array<i64: 1, 0, 2, 4>, to_shard_dim = 0 : i64}
// CHECK: %[[W2:.*]] = spatial.weight {region = array<i64: 1, 0, 2, 4>, shard_dim = -2 : i64
// CHECK: %[[Y:.*]] = spatial.kernel %[[T]], %[[W2]] {bound = #graph.bound<compute>, {{.*}}cycles = 280 : i64, decomposition = "matmul.rows", {{.*}}kernel_name = "fc2", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 1, 0, 2, 4>, shard_dims = array<i64: 0>}
// Softmax over 2048 elements (5 ops each) on 16 tiles: 640 ops / 64 lanes
// = 10 cycles + fill 4 + 2*6 = 26; 8 tiles would take 32.
// CHECK: %[[T2:.*]] = spatial.transfer %[[Y]] {bytes = 8192 : i64, {{.*}}to_region = array<i64: 0, 0, 4, 4>
// CHECK: %[[Z:.*]] = spatial.kernel %[[T2]] {bound = #graph.bound<fill_drain>, bytes = 16384 : i64, cycles = 26 : i64, decomposition = "softmax.dim0", flops = 0 : i64, id = 2 : i64, kernel_name = "sm", kind = #graph.kind<softmax>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 4, 4>, shard_dims = array<i64: 0>}
// CHECK: return %[[Z]]
// CHECK-NOT: graph.constant
func.func @mlp(%x: tensor<64x128xf32> {graph.name = "x"}) -> (tensor<64x32xf32> {graph.name = "y"}) {
  %w1 = graph.constant {value = dense<0.5> : tensor<128x256xf32>} : () -> tensor<128x256xf32> loc("w1")
  %b1 = graph.constant {value = dense<0.1> : tensor<256xf32>} : () -> tensor<256xf32> loc("b1")
  %w2 = graph.constant {value = dense<0.25> : tensor<256x32xf32>} : () -> tensor<256x32xf32> loc("w2")
  %h = graph.kernel %x, %w1, %b1 {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<64x128xf32>, tensor<128x256xf32>, tensor<256xf32>) -> tensor<64x256xf32> {
  ^bb0(%a: tensor<64x128xf32>, %w: tensor<128x256xf32>, %b: tensor<256xf32>):
    %m = graph.matmul %a, %w : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32> loc("fc1")
    %s = graph.add %m, %b : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32> loc("fc1_bias")
    %r = graph.relu %s : (tensor<64x256xf32>) -> tensor<64x256xf32> loc("relu1")
    graph.yield %r : tensor<64x256xf32>
  } loc("fc1")
  %y = graph.kernel %h, %w2 {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<64x256xf32>, tensor<256x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%a: tensor<64x256xf32>, %w: tensor<256x32xf32>):
    %m = graph.matmul %a, %w : (tensor<64x256xf32>, tensor<256x32xf32>) -> tensor<64x32xf32> loc("fc2")
    graph.yield %m : tensor<64x32xf32>
  } loc("fc2")
  %z = graph.kernel %y {kind = #graph.kind<softmax>, precision = #graph.precision<fp32>} : (tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%a: tensor<64x32xf32>):
    %s = graph.softmax %a {axis = 1 : i64} : (tensor<64x32xf32>) -> tensor<64x32xf32> loc("sm")
    graph.yield %s : tensor<64x32xf32>
  } loc("sm")
  return %z : tensor<64x32xf32>
}

// -----

// Tests that a kernel too small to pay for more tiles gets one: 16 elements
// are less than one vector of 64 lanes. The second small kernel stays on the
// tile its input is on (no transfer), although that tile holds a weight.
// CHECK-LABEL: func.func @small
// CHECK: spatial.weight {region = array<i64: 0, 0, 1, 1>, shard_dim = -1 : i64
// CHECK: %[[A:.*]] = spatial.kernel {{.*}}kernel_name = "a", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>}
// CHECK-NOT: spatial.transfer
// CHECK: spatial.weight {region = array<i64: 0, 0, 1, 1>
// CHECK: spatial.kernel %[[A]], {{.*}}kernel_name = "b", {{.*}}region = array<i64: 0, 0, 1, 1>
func.func @small(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c = graph.constant {value = dense<2.0> : tensor<16xf32>} : () -> tensor<16xf32>
  %d = graph.constant {value = dense<3.0> : tensor<16xf32>} : () -> tensor<16xf32>
  %a = graph.kernel %x, %c {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%p: tensor<16xf32>, %q: tensor<16xf32>):
    %r = graph.mul %p, %q : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    graph.yield %r : tensor<16xf32>
  } loc("a")
  %b = graph.kernel %a, %d {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%p: tensor<16xf32>, %q: tensor<16xf32>):
    %r = graph.add %p, %q : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    graph.yield %r : tensor<16xf32>
  } loc("b")
  return %b : tensor<16xf32>
}

// -----

// Tests that a kernel moves off its input's tiles when they have no SRAM left
// for its weights. Each gather reads a 1000 x 240 fp32 table (960000 B) and
// is costed best on 2 x 3 tiles, where the gather splits by the table's
// columns (dim 1, 240 / 6): 160000 B per tile, every tile given all the
// indices (-2); tiny has 262144 B per tile, so the second table does not
// fit beside the first. Its gather goes to the only 2 x 3 origin clear of
// the first (row 2), and the indices (32 B) go to each of its tiles from
// the nearest tile holding them, 2 hops at most.
// CHECK-LABEL: func.func @tables
// CHECK-SAME: spatial.region = array<i64: 0, 0, 2, 3>, spatial.shard_dim = -2 : i64
// CHECK: spatial.weight {region = array<i64: 0, 0, 2, 3>, shard_dim = 1 : i64
// CHECK: spatial.kernel {{.*}}decomposition = "gather.dim1"{{.*}}kernel_name = "g1", kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 2, 3>
// CHECK: spatial.weight {region = array<i64: 2, 0, 2, 3>, shard_dim = 1 : i64
// CHECK: %[[T:.*]] = spatial.transfer %arg0 {bytes = 192 : i64, from_region = array<i64: 0, 0, 2, 3>, from_shard_dim = -2 : i64, hops = 2 : i64, {{.*}}to_region = array<i64: 2, 0, 2, 3>, to_shard_dim = -2
// CHECK: spatial.kernel {{.*}}%[[T]]{{.*}}kernel_name = "g2", kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>, region = array<i64: 2, 0, 2, 3>
func.func @tables(%i: tensor<4xi64>) -> (tensor<4x240xf32>, tensor<4x240xf32>) {
  %t1 = graph.constant {value = dense<1.0> : tensor<1000x240xf32>} : () -> tensor<1000x240xf32>
  %t2 = graph.constant {value = dense<2.0> : tensor<1000x240xf32>} : () -> tensor<1000x240xf32>
  %a = graph.kernel %t1, %i {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>} : (tensor<1000x240xf32>, tensor<4xi64>) -> tensor<4x240xf32> {
  ^bb0(%p: tensor<1000x240xf32>, %q: tensor<4xi64>):
    %r = graph.gather %p, %q {axis = 0 : i64} : (tensor<1000x240xf32>, tensor<4xi64>) -> tensor<4x240xf32>
    graph.yield %r : tensor<4x240xf32>
  } loc("g1")
  %b = graph.kernel %t2, %i {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>} : (tensor<1000x240xf32>, tensor<4xi64>) -> tensor<4x240xf32> {
  ^bb0(%p: tensor<1000x240xf32>, %q: tensor<4xi64>):
    %r = graph.gather %p, %q {axis = 0 : i64} : (tensor<1000x240xf32>, tensor<4xi64>) -> tensor<4x240xf32>
    graph.yield %r : tensor<4x240xf32>
  } loc("g2")
  return %a, %b : tensor<4x240xf32>, tensor<4x240xf32>
}
