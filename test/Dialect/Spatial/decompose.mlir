// Tests that each kernel's work is split over its tiles by its anchor op's
// semantics (loom::spatial::decomposeKernel, one rule file per op family),
// on the tiny target (4 x 4 tiles): what the spatial IR records for each
// rule (the kernel's decomposition and result shard, each operand's
// placement: its shard dimension, -2 for a multicast, and its layout, the
// block and halo of every tile's part).
// RUN: %loom-opt --split-input-file --graph-to-spatial=target=tiny %s | FileCheck %s

// Tests a convolution split by output rows: each of the 16 tiles computes
// 2 of the 32 output rows, from input rows [2i - 1, 2i + 3): blocks of 2
// with a halo of 1 on each side (a 3x3 window, padding 1). The weights are
// multicast.
// CHECK-LABEL: func.func @conv_rows
// CHECK-SAME: spatial.layout = array<i64: 2, 1, 1>, spatial.region = array<i64: 0, 0, 4, 4>, spatial.shard_dim = 2 : i64
// CHECK: spatial.weight {region = array<i64: 0, 0, 4, 4>, shard_dim = -2 : i64
// CHECK: spatial.kernel {{.*}}decomposition = "conv.out_rows"{{.*}}shard_dims = array<i64: 2>
func.func @conv_rows(%x: tensor<1x3x32x32xf32>) -> tensor<1x4x32x32xf32> {
  %w = graph.constant {value = dense<0.5> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %y = graph.kernel %x, %w {kind = #graph.kind<conv>, precision = #graph.precision<fp32>} : (tensor<1x3x32x32xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x32x32xf32> {
  ^bb0(%a: tensor<1x3x32x32xf32>, %b: tensor<4x3x3x3xf32>):
    %c = graph.conv %a, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x32x32xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x32x32xf32>
    graph.yield %c : tensor<1x4x32x32xf32>
  } loc("conv_rows")
  return %y : tensor<1x4x32x32xf32>
}

// -----

// Tests a strided convolution split by output rows: output rows [i, i + 1)
// read input rows [2i - 1, 2i + 2): blocks of 2 input rows (a row x the
// stride), a halo of 1 before (the padding) and none after (3 - 2 - 1).
// CHECK-LABEL: func.func @conv_strided
// CHECK-SAME: spatial.layout = array<i64: 2, 1, 0>
// CHECK: spatial.kernel {{.*}}decomposition = "conv.out_rows"
func.func @conv_strided(%x: tensor<1x3x32x32xf32>) -> tensor<1x4x16x16xf32> {
  %w = graph.constant {value = dense<0.5> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %y = graph.kernel %x, %w {kind = #graph.kind<conv>, precision = #graph.precision<fp32>} : (tensor<1x3x32x32xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x16x16xf32> {
  ^bb0(%a: tensor<1x3x32x32xf32>, %b: tensor<4x3x3x3xf32>):
    %c = graph.conv %a, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x32x32xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x16x16xf32>
    graph.yield %c : tensor<1x4x16x16xf32>
  } loc("conv_strided")
  return %y : tensor<1x4x16x16xf32>
}

// -----

// Tests a convolution split by output channels: a small image with many
// channels, so each tile keeps its channels' weights (sharded along dim 0,
// with the bias) and the whole input is multicast to every tile.
// CHECK-LABEL: func.func @conv_channels
// CHECK-SAME: spatial.shard_dim = -2 : i64
// CHECK: spatial.weight {region = {{.*}}, shard_dim = 0 : i64{{.*}}tensor<64x64x3x3xf32>
// CHECK: spatial.weight {region = {{.*}}, shard_dim = 0 : i64{{.*}}tensor<64xf32>
// CHECK: spatial.kernel {{.*}}decomposition = "conv.out_channels"{{.*}}shard_dims = array<i64: 1>
func.func @conv_channels(%x: tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32> {
  %w = graph.constant {value = dense<0.5> : tensor<64x64x3x3xf32>} : () -> tensor<64x64x3x3xf32>
  %bias = graph.constant {value = dense<0.1> : tensor<64xf32>} : () -> tensor<64xf32>
  %y = graph.kernel %x, %w, %bias {kind = #graph.kind<conv>, precision = #graph.precision<fp32>} : (tensor<1x64x4x4xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x4x4xf32> {
  ^bb0(%a: tensor<1x64x4x4xf32>, %b: tensor<64x64x3x3xf32>, %c: tensor<64xf32>):
    %o = graph.conv %a, %b, %c {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x4x4xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x4x4xf32>
    graph.yield %o : tensor<1x64x4x4xf32>
  } loc("conv_channels")
  return %y : tensor<1x64x4x4xf32>
}

// -----

// Tests a depthwise convolution split by channels: each tile's channels
// need only the same input channels (one group each), not the whole input.
// CHECK-LABEL: func.func @depthwise
// CHECK-SAME: spatial.shard_dim = 1 : i64
// CHECK: spatial.weight {region = {{.*}}, shard_dim = 0 : i64
// CHECK: spatial.kernel {{.*}}decomposition = "conv.out_channels"
func.func @depthwise(%x: tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32> {
  %w = graph.constant {value = dense<0.5> : tensor<64x1x3x3xf32>} : () -> tensor<64x1x3x3xf32>
  %y = graph.kernel %x, %w {kind = #graph.kind<conv>, precision = #graph.precision<fp32>} : (tensor<1x64x4x4xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x4x4xf32> {
  ^bb0(%a: tensor<1x64x4x4xf32>, %b: tensor<64x1x3x3xf32>):
    %o = graph.conv %a, %b {dilations = array<i64: 1, 1>, group = 64 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x4x4xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x4x4xf32>
    graph.yield %o : tensor<1x64x4x4xf32>
  } loc("depthwise")
  return %y : tensor<1x64x4x4xf32>
}

// -----

// Tests a matmul split by rows: a tall A and a small B, so each tile takes
// its rows of A and B is multicast.
// CHECK-LABEL: func.func @mm_rows
// CHECK-SAME: spatial.shard_dim = 0 : i64
// CHECK: spatial.weight {region = {{.*}}, shard_dim = -2 : i64
// CHECK: spatial.kernel {{.*}}decomposition = "matmul.rows"{{.*}}shard_dims = array<i64: 0>
func.func @mm_rows(%x: tensor<256x16xf32>) -> tensor<256x16xf32> {
  %w = graph.constant {value = dense<0.5> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %y = graph.kernel %x, %w {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<256x16xf32>, tensor<16x16xf32>) -> tensor<256x16xf32> {
  ^bb0(%a: tensor<256x16xf32>, %b: tensor<16x16xf32>):
    %m = graph.matmul %a, %b : (tensor<256x16xf32>, tensor<16x16xf32>) -> tensor<256x16xf32>
    graph.yield %m : tensor<256x16xf32>
  } loc("mm_rows")
  return %y : tensor<256x16xf32>
}

// -----

// Tests a batched matmul split by its batch: each tile takes its batches
// of both operands.
// CHECK-LABEL: func.func @mm_batch
// CHECK-SAME: spatial.shard_dim = 0 : i64
// CHECK-SAME: spatial.shard_dim = 0 : i64
// CHECK: spatial.kernel {{.*}}decomposition = "matmul.batch"{{.*}}shard_dims = array<i64: 0>
func.func @mm_batch(%x: tensor<16x16x16xf32>, %z: tensor<16x16x16xf32>) -> tensor<16x16x16xf32> {
  %y = graph.kernel %x, %z {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<16x16x16xf32>, tensor<16x16x16xf32>) -> tensor<16x16x16xf32> {
  ^bb0(%a: tensor<16x16x16xf32>, %b: tensor<16x16x16xf32>):
    %m = graph.matmul %a, %b : (tensor<16x16x16xf32>, tensor<16x16x16xf32>) -> tensor<16x16x16xf32>
    graph.yield %m : tensor<16x16x16xf32>
  } loc("mm_batch")
  return %y : tensor<16x16x16xf32>
}

// -----

// Tests the vector families. The add runs on 12 tiles, where rows (6 a
// tile) and columns (3 a tile) balance alike; by columns the bias splits
// with them, by rows it would be multicast: columns. The reduction and the
// softmax split over a dimension they keep (rows: the reduced and the
// softmax axis stay whole on each tile), the layer norm over the rows it
// normalises whole, its scale multicast; the transpose's input is split
// along the permuted dimension.
// CHECK-LABEL: func.func @vector
// CHECK-SAME: spatial.shard_dim = 1 : i64
// CHECK: spatial.weight {region = {{.*}}, shard_dim = 0 : i64{{.*}}tensor<32xf32>
// CHECK: spatial.kernel {{.*}}decomposition = "add.dim1"{{.*}}shard_dims = array<i64: 1>
// CHECK: spatial.kernel {{.*}}decomposition = "reduce_sum.dim0"{{.*}}shard_dims = array<i64: 0>
// CHECK: spatial.kernel {{.*}}decomposition = "softmax.dim0"{{.*}}shard_dims = array<i64: 0>
// CHECK: spatial.weight {region = {{.*}}, shard_dim = -2 : i64{{.*}}tensor<32xf32>
// CHECK: spatial.kernel {{.*}}decomposition = "layer_norm.dim0"{{.*}}shard_dims = array<i64: 0>
// CHECK: spatial.transfer {{.*}}to_shard_dim = 0
// CHECK: spatial.kernel {{.*}}decomposition = "transpose.dim1"{{.*}}shard_dims = array<i64: 1>
func.func @vector(%x: tensor<64x32xf32>) -> (tensor<64xf32>, tensor<32x64xf32>) {
  %b = graph.constant {value = dense<0.5> : tensor<32xf32>} : () -> tensor<32xf32>
  %g = graph.constant {value = dense<1.0> : tensor<32xf32>} : () -> tensor<32xf32>
  %s = graph.kernel %x, %b {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32> {
  ^bb0(%p: tensor<64x32xf32>, %q: tensor<32xf32>):
    %r = graph.add %p, %q : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
    graph.yield %r : tensor<64x32xf32>
  } loc("add")
  %r = graph.kernel %s {kind = #graph.kind<reduction>, precision = #graph.precision<fp32>} : (tensor<64x32xf32>) -> tensor<64xf32> {
  ^bb0(%p: tensor<64x32xf32>):
    %o = graph.reduce_sum %p {axes = array<i64: 1>, keepdims = false} : (tensor<64x32xf32>) -> tensor<64xf32>
    graph.yield %o : tensor<64xf32>
  } loc("sum")
  %m = graph.kernel %s {kind = #graph.kind<softmax>, precision = #graph.precision<fp32>} : (tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%p: tensor<64x32xf32>):
    %o = graph.softmax %p {axis = 1 : i64} : (tensor<64x32xf32>) -> tensor<64x32xf32>
    graph.yield %o : tensor<64x32xf32>
  } loc("sm")
  %n = graph.kernel %m, %g {kind = #graph.kind<normalization>, precision = #graph.precision<fp32>} : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32> {
  ^bb0(%p: tensor<64x32xf32>, %q: tensor<32xf32>):
    %o = graph.layer_norm %p, %q {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
    graph.yield %o : tensor<64x32xf32>
  } loc("ln")
  %t = graph.kernel %n {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>} : (tensor<64x32xf32>) -> tensor<32x64xf32> {
  ^bb0(%p: tensor<64x32xf32>):
    %o = graph.transpose %p {perm = array<i64: 1, 0>} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    graph.yield %o : tensor<32x64xf32>
  } loc("tr")
  return %r, %t : tensor<64xf32>, tensor<32x64xf32>
}

// -----

// Tests a concat split along its axis: a decode step's KV cache, 127 past
// positions and the new one, 8 positions a tile. The past rows are plain
// blocks of 8; the new row is the block shifted back by 127 (block 8, halo
// 127 before and -127 after), which only the last tile holds.
// CHECK-LABEL: func.func @kv_cache
// CHECK-SAME: spatial.shard_dim = 2 : i64
// CHECK: spatial.transfer {{.*}}to_layout = array<i64: 8, 127, -127>, to_region = array<i64: 0, 0, 4, 4>, to_shard_dim = 2
// CHECK: spatial.kernel {{.*}}decomposition = "concat.dim2"{{.*}}shard_dims = array<i64: 2>
func.func @kv_cache(%past: tensor<1x2x127x16xf32>, %x: tensor<1x2x1x16xf32>) -> tensor<1x2x128x16xf32> {
  %n = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<1x2x1x16xf32>) -> tensor<1x2x1x16xf32> {
  ^bb0(%p: tensor<1x2x1x16xf32>):
    %o = graph.neg %p : (tensor<1x2x1x16xf32>) -> tensor<1x2x1x16xf32>
    graph.yield %o : tensor<1x2x1x16xf32>
  } loc("new")
  %c = graph.kernel %past, %n {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>} : (tensor<1x2x127x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x128x16xf32> {
  ^bb0(%p: tensor<1x2x127x16xf32>, %q: tensor<1x2x1x16xf32>):
    %o = graph.concat %p, %q {axis = 2 : i64} : (tensor<1x2x127x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x128x16xf32>
    graph.yield %o : tensor<1x2x128x16xf32>
  } loc("present")
  return %c : tensor<1x2x128x16xf32>
}
