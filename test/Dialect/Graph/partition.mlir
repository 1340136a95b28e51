// Tests graph-partition: tensor parallelism (column- then row-parallel
// matmuls, a partial sum all-reduced before the residual add) and pipeline
// stages.
// RUN: %loom-opt --split-input-file --graph-partition="target=tiny chips=2 tp=2 pp=1" %s | FileCheck %s --check-prefix=TP
// RUN: %loom-opt --split-input-file --graph-partition="target=tiny chips=2 tp=1 pp=2" %s | FileCheck %s --check-prefix=PP
// RUN: %loom-opt --split-input-file --graph-partition="target=tiny chips=2" %s | FileCheck %s --check-prefix=AUTO
// RUN: %loom-opt --split-input-file --graph-partition="target=tiny chips=2 tp=2 pp=1 system-chips=8" %s | FileCheck %s --check-prefix=SYS
// RUN: %loom-opt --split-input-file --graph-partition="target=tiny chips=2 tp=2 pp=1 system-chips=2" %s | FileCheck %s --check-prefix=NOSYS

// The input is needed whole on both chips: two replicas (axis -1). fc1's
// weight is cut by columns (rank 1 gets columns 8..15), its bias likewise;
// fc2's by rows, so its products are partial sums: all-reduced before the
// residual add, which then runs on rank 0 only (rank 1's copy is unused).
// TP-LABEL: func.func @mlp(
// TP-SAME: %arg0: tensor<1x8xf32> {graph.name = "x", graph.part = array<i64: -1, 0, 2>}
// TP-SAME: %arg1: tensor<1x8xf32> {graph.name = "x", graph.part = array<i64: -1, 1, 2>}
// TP-SAME: graph.chips = 2 : i64, graph.partition_report
// TP-SAME: graph.pp = 1 : i64, graph.tp = 2 : i64
// TP: %[[W0:.*]] = graph.constant {value = dense<{{\[\[}}0.000000e+00, 1.000000e+00, {{.*}}7.000000e+00]{{.*}} : tensor<8x8xf32>}
// TP: %[[W1:.*]] = graph.constant {value = dense<{{\[\[}}8.000000e+00, 9.000000e+00, {{.*}}1.500000e+01]{{.*}} : tensor<8x8xf32>}
// TP: %[[H0:.*]] = graph.matmul %arg0, %[[W0]] {graph.chip = 0 : i64} : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
// TP: %[[H1:.*]] = graph.matmul %arg1, %[[W1]] {graph.chip = 1 : i64}
// TP: graph.add {{.*}} {graph.chip = 0 : i64} : (tensor<1x8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
// TP: graph.relu {{.*}} {graph.chip = 1 : i64}
// TP: %[[P0:.*]] = graph.matmul {{.*}} {graph.chip = 0 : i64} : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
// TP: %[[P1:.*]] = graph.matmul {{.*}} {graph.chip = 1 : i64}
// TP: %[[S:.*]]:2 = graph.all_reduce %[[P0]], %[[P1]] {chips = array<i64: 0, 1>}
// TP: %[[O:.*]] = graph.add %[[S]]#0, %arg0 {graph.chip = 0 : i64}
// TP-NOT: graph.add
// TP: return %[[O]]
// Two stages: fc1 on chip 0, fc2 and the residual add on chip 1; the input
// both chips read is a replica per chip, written by the host, not a trip
// over the link. The inputs the estimate has in flight (latency over
// interval, the link's 1 us latency included), for placement's room for
// their copies; only a pipelined split (pp > 1) has it.
// PP-LABEL: func.func @mlp(%arg0: tensor<1x8xf32> {graph.name = "x", graph.part = array<i64: -1, 0, 2>}, %arg1: tensor<1x8xf32> {graph.name = "x", graph.part = array<i64: -1, 1, 2>})
// PP-SAME: graph.in_flight = 23 : i64
// PP-SAME: graph.pp = 2 : i64, graph.tp = 1 : i64
// PP: graph.matmul %arg0, {{.*}} {graph.chip = 0 : i64} : (tensor<1x8xf32>, tensor<8x16xf32>)
// PP: graph.matmul {{.*}} {graph.chip = 1 : i64} : (tensor<1x16xf32>, tensor<16x8xf32>)
// PP: graph.add {{.*}}, %arg1 {graph.chip = 1 : i64}
// The chips as the first two of an 8-chip system: marked for the network.
// SYS-LABEL: func.func @mlp(
// SYS-SAME: graph.system_chips = 8 : i64
// NOSYS-LABEL: func.func @mlp(
// NOSYS-NOT: graph.system_chips
// NOSYS: return
// AUTO: graph.partition_report = "tp {{[12]}} x pp {{[12]}} on 2 chips (objective latency); tp 1 x pp 2: latency {{.*}} us, interval {{.*}} us, 0 collectives; tp 2 x pp 1: latency {{.*}} us, interval {{.*}} us, 1 collectives"
func.func @mlp(%x: tensor<1x8xf32> {graph.name = "x"}) -> (tensor<1x8xf32> {graph.name = "y"}) {
  %w1 = graph.constant {value = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]]> : tensor<8x16xf32>} : () -> tensor<8x16xf32>
  %b1 = graph.constant {value = dense<0.1> : tensor<16xf32>} : () -> tensor<16xf32>
  %w2 = graph.constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %h = graph.matmul %x, %w1 : (tensor<1x8xf32>, tensor<8x16xf32>) -> tensor<1x16xf32>
  %hb = graph.add %h, %b1 : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  %r = graph.relu %hb : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %y = graph.matmul %r, %w2 : (tensor<1x16xf32>, tensor<16x8xf32>) -> tensor<1x8xf32>
  %o = graph.add %y, %x : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  return %o : tensor<1x8xf32>
}

// -----

// Attention heads: the fused QKV projection is cut into Q, K and V (its
// output is only read in column slices), each split by heads; the cached
// keys are a per-chip input part (axis 1: heads), and so is the present
// cache output. The batched matmuls stay local to each chip.
// TP-LABEL: func.func @heads(
// TP-SAME: %arg2: tensor<1x1x3x4xf32> {graph.name = "past_k", graph.part = array<i64: 1, 0, 2>}
// TP-SAME: %arg3: tensor<1x1x3x4xf32> {graph.name = "past_k", graph.part = array<i64: 1, 1, 2>}
// TP-SAME: -> (tensor<1x1x4x4xf32> {graph.name = "present_k", graph.part = array<i64: 1, 0, 2>}, tensor<1x1x4x4xf32> {graph.name = "present_k", graph.part = array<i64: 1, 1, 2>}
// TP-NOT: graph.all_gather
// TP: graph.concat %arg2, {{.*}} {axis = 2 : i64, graph.chip = 0 : i64} : (tensor<1x1x3x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x1x4x4xf32>
// TP: graph.matmul {{.*}} {graph.chip = 1 : i64} : (tensor<1x1x1x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x1x4xf32>
// TP: graph.all_reduce
// TP-NOT: graph.all_
func.func @heads(%x: tensor<1x1x8xf32> {graph.name = "x"}, %pk: tensor<1x2x3x4xf32> {graph.name = "past_k"}) -> (tensor<1x2x4x4xf32> {graph.name = "present_k"}, tensor<1x1x8xf32> {graph.name = "y"}) {
  %wqkv = graph.constant {value = dense<0.5> : tensor<8x16xf32>} : () -> tensor<8x16xf32>
  %wo = graph.constant {value = dense<0.25> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %qk = graph.matmul %x, %wqkv : (tensor<1x1x8xf32>, tensor<8x16xf32>) -> tensor<1x1x16xf32>
  %q = graph.slice %qk {axes = array<i64: 2>, ends = array<i64: 8>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<1x1x16xf32>) -> tensor<1x1x8xf32>
  %k = graph.slice %qk {axes = array<i64: 2>, ends = array<i64: 16>, starts = array<i64: 8>, steps = array<i64: 1>} : (tensor<1x1x16xf32>) -> tensor<1x1x8xf32>
  %q4 = graph.reshape %q : (tensor<1x1x8xf32>) -> tensor<1x1x2x4xf32>
  %qh = graph.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x1x2x4xf32>) -> tensor<1x2x1x4xf32>
  %k4 = graph.reshape %k : (tensor<1x1x8xf32>) -> tensor<1x1x2x4xf32>
  %kh = graph.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x1x2x4xf32>) -> tensor<1x2x1x4xf32>
  %kc = graph.concat %pk, %kh {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %kt = graph.transpose %kc {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.matmul %qh, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  %p = graph.softmax %s {axis = 3 : i64} : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %c = graph.matmul %p, %kc : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  %ct = graph.transpose %c {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  %m = graph.reshape %ct : (tensor<1x1x2x4xf32>) -> tensor<1x1x8xf32>
  %y = graph.matmul %m, %wo : (tensor<1x1x8xf32>, tensor<8x8xf32>) -> tensor<1x1x8xf32>
  %o = graph.add %y, %x : (tensor<1x1x8xf32>, tensor<1x1x8xf32>) -> tensor<1x1x8xf32>
  return %kc, %o : tensor<1x2x4x4xf32>, tensor<1x1x8xf32>
}
