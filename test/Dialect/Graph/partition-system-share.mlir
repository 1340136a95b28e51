// Tests graph-partition's estimate of a tensor-parallel group's collective
// as the group sits in the compiled system. On tiny-dragonfly (nodes of 2
// chips, 4 links a chip), tp 2 is one node: alone it keeps all 4 links
// between its chips; as the first 2 of 4 chips (two nodes) half of them,
// the other half being global. So tp 2 x pp 2 on 4 chips prices the
// all-reduce of a 256x512 fp32 partial sum at 2 links, as tp 2 on 2 chips
// of a 4-chip system does (43.2 us in all), not at the 4 of tp 2 on 2 chips
// alone (30.1 us; the pipeline was priced so until 2026-12-01).
// RUN: %loom-opt --graph-partition="target=%S/../Sched/Inputs/tiny-dragonfly.json chips=4 tp=2 pp=2" %s | FileCheck %s --check-prefix=PIPE
// RUN: %loom-opt --graph-partition="target=%S/../Sched/Inputs/tiny-dragonfly.json chips=2 tp=2 pp=1 system-chips=4" %s | FileCheck %s --check-prefix=SLICE
// RUN: %loom-opt --graph-partition="target=%S/../Sched/Inputs/tiny-dragonfly.json chips=2 tp=2 pp=1" %s | FileCheck %s --check-prefix=ALONE
// PIPE: graph.partition_report = "tp 2 x pp 2 on 4 chips (as asked); tp 2 x pp 2: latency 43.20 us,
// SLICE: graph.partition_report = "tp 2 x pp 1 on 2 chips (as asked); tp 2 x pp 1: latency 43.19 us,
// ALONE: graph.partition_report = "tp 2 x pp 1 on 2 chips (as asked); tp 2 x pp 1: latency 30.09 us,
//
// Under a narrow policy the partial sum crosses at bf16 (graph-precision-
// policy's wire format), half the bytes: halving the links then adds 6.55
// us (17.80 - 11.25), half the 13.10 us it adds at fp32 (43.19 - 30.09).
// RUN: %loom-opt --graph-partition="target=%S/../Sched/Inputs/tiny-dragonfly.json chips=2 tp=2 pp=1 system-chips=4 precision=bf16" %s | FileCheck %s --check-prefix=SLICE16
// RUN: %loom-opt --graph-partition="target=%S/../Sched/Inputs/tiny-dragonfly.json chips=2 tp=2 pp=1 precision=bf16" %s | FileCheck %s --check-prefix=ALONE16
// SLICE16: graph.partition_report = "tp 2 x pp 1 on 2 chips (as asked); tp 2 x pp 1: latency 17.80 us,
// ALONE16: graph.partition_report = "tp 2 x pp 1 on 2 chips (as asked); tp 2 x pp 1: latency 11.25 us,

func.func @mlp(%x: tensor<256x512xf32> {graph.name = "x"}) -> (tensor<256x512xf32> {graph.name = "y"}) {
  %w1 = graph.constant {value = dense<0.5> : tensor<512x512xf32>} : () -> tensor<512x512xf32>
  %w2 = graph.constant {value = dense<0.25> : tensor<512x512xf32>} : () -> tensor<512x512xf32>
  %h = graph.matmul %x, %w1 : (tensor<256x512xf32>, tensor<512x512xf32>) -> tensor<256x512xf32>
  %r = graph.relu %h : (tensor<256x512xf32>) -> tensor<256x512xf32>
  %y = graph.matmul %r, %w2 : (tensor<256x512xf32>, tensor<512x512xf32>) -> tensor<256x512xf32>
  %o = graph.add %y, %x : (tensor<256x512xf32>, tensor<256x512xf32>) -> tensor<256x512xf32>
  return %o : tensor<256x512xf32>
}
