// Tests graph-partition's attention past the key-value heads: with 2 KV
// heads of 2 query heads each on 4 chips, every chip takes one query head
// (q split over the kv and group dims at once) and the KV head it reads,
// which it shares with the other chip of that head (split in 2 pieces over
// 4 ranks): past_key parts 0, 0, 1, 1; present_key given once per piece.
// The k and v projections are computed per KV head: chips 0 and 1 both
// multiply by k's columns 0-3 (KV head 0), chips 2 and 3 by columns 4-7,
// so nothing is gathered (before, each chip computed 2 columns and the
// pairs were gathered: one collective more per layer, and on tsp-v1 its
// synchronisation). At tp 2 (the KV heads alone) nothing is shared.
// (partition-heads-wide.mlir: when those would not fit, k and v are
// gathered in pairs.)
// The other functions gather such splits: a split of two dims is gathered
// as one (reshape, all_gather, reshape); a shared piece is cut once more
// per rank when it can be (refined), else every rank's copy is gathered
// and one kept (shared).
// RUN: %loom-opt --split-input-file --graph-partition="target=tiny chips=4 tp=4 pp=1" %s | FileCheck %s
// RUN: %loom-opt --split-input-file --graph-partition="target=tiny chips=2 tp=2 pp=1" %s | FileCheck %s --check-prefix=TP2

// CHECK-LABEL: func.func @attention(
// CHECK-SAME: graph.name = "past_key", graph.part = array<i64: 1, 0, 2>
// CHECK-SAME: graph.name = "past_key", graph.part = array<i64: 1, 0, 2>
// CHECK-SAME: graph.name = "past_key", graph.part = array<i64: 1, 1, 2>
// CHECK-SAME: graph.name = "past_key", graph.part = array<i64: 1, 1, 2>
// CHECK-SAME: -> (tensor<1x1x16xf32> {graph.name = "y"}, tensor<1x1x4x4xf32> {graph.name = "present_key", graph.part = array<i64: 1, 0, 2>}, tensor<1x1x4x4xf32> {graph.name = "present_key", graph.part = array<i64: 1, 1, 2>}, tensor<1x1x4x4xf32> {graph.name = "present_value"
// CHECK-SAME: graph.partition_report = "{{.*}}2 projections computed per group of 2 ranks"
// CHECK-NOT: graph.all_gather
// CHECK: graph.reshape %{{.*}} {graph.chip = 3 : i64} : (tensor<1x1x4xf32>) -> tensor<1x1x1x4xf32>
// CHECK: %[[K0:.*]] = graph.constant {value = dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]
// CHECK: %[[K1:.*]] = graph.constant {value = dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]
// CHECK: %[[K2:.*]] = graph.constant {value = dense<{{\[\[}}4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]
// CHECK: %[[K3:.*]] = graph.constant {value = dense<{{\[\[}}4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]
// CHECK: graph.matmul %{{.*}}, %[[K0]] {graph.chip = 0 : i64} : (tensor<1x1x16xf32>, tensor<16x4xf32>) -> tensor<1x1x4xf32>
// CHECK: graph.matmul %{{.*}}, %[[K1]] {graph.chip = 1 : i64}
// CHECK: graph.matmul %{{.*}}, %[[K2]] {graph.chip = 2 : i64}
// CHECK: graph.matmul %{{.*}}, %[[K3]] {graph.chip = 3 : i64}
// CHECK: graph.matmul {{.*}} {graph.chip = 3 : i64} : (tensor<1x1x1x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x1x4xf32>
// CHECK: graph.matmul {{.*}} {graph.chip = 3 : i64} : (tensor<1x1x1x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x1x4xf32>
// CHECK: graph.reshape {{.*}} : (tensor<1x1x1x4xf32>) -> tensor<1x1x4xf32>
// CHECK: graph.all_reduce
// CHECK-NOT: graph.all_gather
// CHECK: return

// TP2-LABEL: func.func @attention(
// TP2-SAME: graph.name = "past_key", graph.part = array<i64: 1, 0, 2>
// TP2-SAME: graph.name = "past_key", graph.part = array<i64: 1, 1, 2>
// TP2-NOT: graph.all_gather
// TP2: graph.matmul {{.*}} {graph.chip = 1 : i64} : (tensor<1x1x2x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x2x4xf32>
// TP2: graph.all_reduce
// TP2-NOT: graph.all_gather
// TP2: return
func.func @attention(%x: tensor<1x1x16xf32> {graph.name = "x", graph.whole}, %pk: tensor<1x2x3x4xf32> {graph.name = "past_key"}, %pv: tensor<1x2x3x4xf32> {graph.name = "past_value"}) -> (tensor<1x1x16xf32> {graph.name = "y"}, tensor<1x2x4x4xf32> {graph.name = "present_key"}, tensor<1x2x4x4xf32> {graph.name = "present_value"}) {
  %wq = graph.constant {value = dense<0.5> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %wk = graph.constant {value = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %wv = graph.constant {value = dense<0.125> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %wo = graph.constant {value = dense<0.5> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %q0 = graph.matmul %x, %wq : (tensor<1x1x16xf32>, tensor<16x16xf32>) -> tensor<1x1x16xf32>
  %q = graph.reshape %q0 : (tensor<1x1x16xf32>) -> tensor<1x2x2x4xf32>
  %k0 = graph.matmul %x, %wk : (tensor<1x1x16xf32>, tensor<16x8xf32>) -> tensor<1x1x8xf32>
  %k = graph.reshape %k0 : (tensor<1x1x8xf32>) -> tensor<1x2x1x4xf32>
  %v0 = graph.matmul %x, %wv : (tensor<1x1x16xf32>, tensor<16x8xf32>) -> tensor<1x1x8xf32>
  %v = graph.reshape %v0 : (tensor<1x1x8xf32>) -> tensor<1x2x1x4xf32>
  %key = graph.concat %pk, %k {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %value = graph.concat %pv, %v {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %kt = graph.transpose %key {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
  %p = graph.softmax %s {axis = 3 : i64} : (tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %c = graph.matmul %p, %value : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
  %m = graph.reshape %c : (tensor<1x2x2x4xf32>) -> tensor<1x1x16xf32>
  %y = graph.matmul %m, %wo : (tensor<1x1x16xf32>, tensor<16x16xf32>) -> tensor<1x1x16xf32>
  return %y, %key, %value : tensor<1x1x16xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @merged(
// CHECK: graph.exp %{{.*}} {graph.chip = 0 : i64} : (tensor<1x1x1x4xf32>)
// CHECK: graph.reshape %{{.*}} {graph.chip = 0 : i64} : (tensor<1x1x1x4xf32>) -> tensor<1x1x4xf32>
// CHECK: graph.all_gather {{.*}} {axis = 1 : i64, {{.*}}} : (tensor<1x1x4xf32>, {{.*}}) -> (tensor<1x4x4xf32>,
// CHECK: graph.reshape %{{.*}} {graph.chip = 0 : i64} : (tensor<1x4x4xf32>) -> tensor<1x2x2x4xf32>
func.func @merged(%x: tensor<1x1x16xf32> {graph.name = "x", graph.whole}) -> (tensor<1x2x2x4xf32> {graph.name = "q"}) {
  %wq = graph.constant {value = dense<0.5> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %q0 = graph.matmul %x, %wq : (tensor<1x1x16xf32>, tensor<16x16xf32>) -> tensor<1x1x16xf32>
  %q = graph.reshape %q0 : (tensor<1x1x16xf32>) -> tensor<1x2x2x4xf32>
  %e = graph.exp %q : (tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %e : tensor<1x2x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @refined(
// CHECK: graph.slice {{.*}} {axes = array<i64: 1, 2>, ends = array<i64: 1, 4>, graph.chip = 3 : i64, starts = array<i64: 0, 2>, {{.*}}} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x4xf32>
// CHECK: graph.all_gather {{.*}} {axis = 1 : i64, {{.*}}} : (tensor<1x2x4xf32>, {{.*}}) -> (tensor<1x8x4xf32>,
// CHECK: graph.reshape {{.*}} : (tensor<1x8x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: graph.reduce_mean
func.func @refined(%x: tensor<1x1x16xf32> {graph.name = "x", graph.whole}, %pk: tensor<1x2x3x4xf32> {graph.name = "past_key"}) -> (tensor<1x2x4x1xf32> {graph.name = "mean"}) {
  %wk = graph.constant {value = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %k0 = graph.matmul %x, %wk : (tensor<1x1x16xf32>, tensor<16x8xf32>) -> tensor<1x1x8xf32>
  %k = graph.reshape %k0 : (tensor<1x1x8xf32>) -> tensor<1x2x1x4xf32>
  %key = graph.concat %pk, %k {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %m = graph.reduce_mean %key {axes = array<i64: 3>, keepdims = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x1xf32>
  return %m : tensor<1x2x4x1xf32>
}

// -----

// CHECK-LABEL: func.func @shared(
// CHECK: graph.all_gather {{.*}} {axis = 1 : i64, {{.*}}} : (tensor<1x1x3x4xf32>, {{.*}}) -> (tensor<1x4x3x4xf32>,
// CHECK: graph.reshape {{.*}} {graph.chip = 0 : i64} : (tensor<1x4x3x4xf32>) -> tensor<1x2x2x1x3x4xf32>
// CHECK: graph.slice {{.*}} {axes = array<i64: 2>, ends = array<i64: 1>, graph.chip = 0 : i64, starts = array<i64: 0>, {{.*}}} : (tensor<1x2x2x1x3x4xf32>) -> tensor<1x2x1x1x3x4xf32>
// CHECK: graph.reshape {{.*}} : (tensor<1x2x1x1x3x4xf32>) -> tensor<1x2x3x4xf32>
// CHECK: graph.reduce_mean
func.func @shared(%x: tensor<1x1x16xf32> {graph.name = "x", graph.whole}, %pk: tensor<1x2x2x4xf32> {graph.name = "past_key"}) -> (tensor<1x2x3x1xf32> {graph.name = "mean"}) {
  %wk = graph.constant {value = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %k0 = graph.matmul %x, %wk : (tensor<1x1x16xf32>, tensor<16x8xf32>) -> tensor<1x1x8xf32>
  %k = graph.reshape %k0 : (tensor<1x1x8xf32>) -> tensor<1x2x1x4xf32>
  %key = graph.concat %pk, %k {axis = 2 : i64} : (tensor<1x2x2x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x3x4xf32>
  %m = graph.reduce_mean %key {axes = array<i64: 3>, keepdims = true} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x1xf32>
  return %m : tensor<1x2x3x1xf32>
}
