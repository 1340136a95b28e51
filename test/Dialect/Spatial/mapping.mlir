// Tests graph-to-spatial's mappings on the tiny target (4 x 4 tiles) with
// the function of graph-to-spatial.mlir: fc1 (64x128x256 matmul + bias +
// relu), fc2 (64x256x32) and a softmax.
// RUN: %loom-opt --graph-to-spatial="target=tiny mapping=pipelined objective=throughput" %s | FileCheck %s --check-prefix=PIPE
// RUN: %loom-opt --graph-to-spatial="target=tiny mapping=hybrid objective=throughput" %s | FileCheck %s --check-prefix=HYBRID
// RUN: %loom-opt --graph-to-spatial="target=tiny mapping=auto objective=latency" %s | FileCheck %s --check-prefix=AUTO
// RUN: not %loom-opt --graph-to-spatial="target=tiny mapping=diagonal" %s 2>&1 | FileCheck %s --check-prefix=BADMODE
// RUN: not %loom-opt --graph-to-spatial="target=tiny objective=cost" %s 2>&1 | FileCheck %s --check-prefix=BADGOAL

// Pipelined: every kernel on its own rectangle of one 4-row band, packed
// left to right along the snake, so fc1 -> fc2 -> sm are neighbours; fc1,
// the costliest, is widest. One group; the model input lives where fc1 is.
// PIPE-LABEL: func.func @mlp(
// PIPE-SAME: spatial.region = array<i64: 0, 0, 4, 2>
// PIPE-SAME: spatial.mapping = "pipelined"
// PIPE-SAME: spatial.mapping_report = "pipelined (as asked); estimated cycles per input: sequential: latency {{[0-9]+}} = II; pipelined: 1 group of 4-row bands, latency {{[0-9]+}}, II {{[0-9]+}}"
// PIPE-SAME: spatial.pipeline_groups = 1 : i64
// PIPE: kernel_name = "fc1", {{.*}}region = array<i64: 0, 0, 4, 2>
// PIPE-NOT: group = 1
// PIPE: kernel_name = "fc2", {{.*}}region = array<i64: 0, 2, 4, 1>
// PIPE: kernel_name = "sm", {{.*}}region = array<i64: 0, 3, 4, 1>

// Hybrid: fc1 and fc2 fill the grid as group 0; the softmax starts group 1
// at the grid's beginning, sharing tile 0's column with fc1.
// HYBRID: spatial.mapping = "hybrid"
// HYBRID-SAME: spatial.pipeline_groups = 2 : i64
// HYBRID: kernel_name = "fc1", {{.*}}region = array<i64: 0, 0, 4, 3>
// HYBRID: kernel_name = "fc2", {{.*}}region = array<i64: 0, 3, 4, 1>
// HYBRID: group = 1 : i64, {{.*}}kernel_name = "sm", {{.*}}region = array<i64: 0, 0, 4, 1>

// For latency, one input at a time on the regions that suit each kernel.
// AUTO: spatial.mapping = "sequential"
// AUTO-SAME: spatial.mapping_report = "sequential (objective latency); estimated cycles per input: sequential: latency {{[0-9]+}} = II; pipelined: {{.*}}; hybrid: {{.*}}"

// BADMODE: graph-to-spatial: mapping 'diagonal' is not auto, sequential, pipelined or hybrid
// BADGOAL: graph-to-spatial: objective 'cost' is not latency or throughput
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
