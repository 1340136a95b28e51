// Tests graph-partition's attention past the key-value heads when the k
// and v projections computed per KV head would not fit: each chip would
// hold twice its share of k's and v's weights (786,432 bytes more on a
// chip of 4 MiB of tiny), so each computes its own columns and the pairs
// of chips that share a KV head gather them (partition-heads.mlir has the
// shared projections).
// RUN: %loom-opt --graph-partition="target=tiny chips=4 tp=4 pp=1" %s | FileCheck %s

// CHECK-LABEL: func.func @wide(
// CHECK-SAME: graph.partition_report = "{{.*}}3 collectives (gathered: 2 projections computed per group of 2 ranks would not fit)"
// CHECK: graph.all_gather {{.*}} {axis = 2 : i64, chips = array<i64: 0, 1>} : (tensor<1x1x6144xf32>, tensor<1x1x6144xf32>) -> (tensor<1x1x12288xf32>, tensor<1x1x12288xf32>)
// CHECK: graph.all_gather {{.*}} {axis = 2 : i64, chips = array<i64: 2, 3>} : (tensor<1x1x6144xf32>, tensor<1x1x6144xf32>) -> (tensor<1x1x12288xf32>, tensor<1x1x12288xf32>)
// CHECK: graph.all_reduce
// CHECK: return
func.func @wide(%x: tensor<1x1x16xf32> {graph.name = "x", graph.whole}, %pk: tensor<1x2x3x12288xf32> {graph.name = "past_key"}, %pv: tensor<1x2x3x12288xf32> {graph.name = "past_value"}) -> (tensor<1x1x16xf32> {graph.name = "y"}, tensor<1x2x4x12288xf32> {graph.name = "present_key"}, tensor<1x2x4x12288xf32> {graph.name = "present_value"}) {
  %wq = graph.constant {value = dense<0.5> : tensor<16x49152xf32>} : () -> tensor<16x49152xf32>
  %wk = graph.constant {value = dense<0.25> : tensor<16x24576xf32>} : () -> tensor<16x24576xf32>
  %wv = graph.constant {value = dense<0.125> : tensor<16x24576xf32>} : () -> tensor<16x24576xf32>
  %wo = graph.constant {value = dense<0.5> : tensor<49152x16xf32>} : () -> tensor<49152x16xf32>
  %q0 = graph.matmul %x, %wq : (tensor<1x1x16xf32>, tensor<16x49152xf32>) -> tensor<1x1x49152xf32>
  %q = graph.reshape %q0 : (tensor<1x1x49152xf32>) -> tensor<1x2x2x12288xf32>
  %k0 = graph.matmul %x, %wk : (tensor<1x1x16xf32>, tensor<16x24576xf32>) -> tensor<1x1x24576xf32>
  %k = graph.reshape %k0 : (tensor<1x1x24576xf32>) -> tensor<1x2x1x12288xf32>
  %v0 = graph.matmul %x, %wv : (tensor<1x1x16xf32>, tensor<16x24576xf32>) -> tensor<1x1x24576xf32>
  %v = graph.reshape %v0 : (tensor<1x1x24576xf32>) -> tensor<1x2x1x12288xf32>
  %key = graph.concat %pk, %k {axis = 2 : i64} : (tensor<1x2x3x12288xf32>, tensor<1x2x1x12288xf32>) -> tensor<1x2x4x12288xf32>
  %value = graph.concat %pv, %v {axis = 2 : i64} : (tensor<1x2x3x12288xf32>, tensor<1x2x1x12288xf32>) -> tensor<1x2x4x12288xf32>
  %kt = graph.transpose %key {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x12288xf32>) -> tensor<1x2x12288x4xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x2x12288xf32>, tensor<1x2x12288x4xf32>) -> tensor<1x2x2x4xf32>
  %p = graph.softmax %s {axis = 3 : i64} : (tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %c = graph.matmul %p, %value : (tensor<1x2x2x4xf32>, tensor<1x2x4x12288xf32>) -> tensor<1x2x2x12288xf32>
  %m = graph.reshape %c : (tensor<1x2x2x12288xf32>) -> tensor<1x1x49152xf32>
  %y = graph.matmul %m, %wo : (tensor<1x1x49152xf32>, tensor<49152x16xf32>) -> tensor<1x1x16xf32>
  return %y, %key, %value : tensor<1x1x16xf32>, tensor<1x2x4x12288xf32>, tensor<1x2x4x12288xf32>
}
