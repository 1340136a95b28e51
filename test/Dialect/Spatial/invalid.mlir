// Tests that each verifier in SpatialOps.cpp rejects what it should.
// RUN: %loom-opt --split-input-file --verify-diagnostics %s

// Tests that a region needs four entries.
func.func @short_region() -> tensor<4xf32> {
  // expected-error @+1 {{region must have 4 entries (row, col, rows, cols)}}
  %w = spatial.weight {region = array<i64: 0, 0, 1>, shard_dim = -1 : i64, value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// Tests that an empty region is rejected.
func.func @empty_region() -> tensor<4xf32> {
  // expected-error @+1 {{region must have row, col >= 0 and rows, cols >= 1}}
  %w = spatial.weight {region = array<i64: 0, 0, 0, 1>, shard_dim = -1 : i64, value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// Tests that a shard dimension must be a dimension of the tensor.
func.func @bad_shard_dim() -> tensor<4xf32> {
  // expected-error @+1 {{shard dimension 1 is out of range for rank 1}}
  %w = spatial.weight {region = array<i64: 0, 0, 1, 1>, shard_dim = 1 : i64, value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// Tests that a kernel has one shard dimension per result.
func.func @shard_dims_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 2 shard dimensions for 1 results}}
  %y = spatial.kernel %x {bound = #graph.bound<compute>, bytes = 0 : i64, cycles = 1 : i64, flops = 0 : i64, id = 0 : i64, kernel_name = "k", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1, -1>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    spatial.yield %a : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// Tests that a kernel's precision is fp32, bf16, fp16 or fp8.
func.func @bad_precision(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{precision must be fp32, bf16, fp16, fp8 or int8, got 'fp64'}}
  %y = spatial.kernel %x {bound = #graph.bound<compute>, bytes = 0 : i64, cycles = 1 : i64, flops = 0 : i64, id = 0 : i64, kernel_name = "k", kind = #graph.kind<elementwise>, precision = #graph.precision<fp64>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    spatial.yield %a : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// Tests that the parser refuses a bound that names no resource, listing them.
func.func @bad_bound(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{bound must be compute, sram, mesh, link, offchip or fill_drain, got 'dram'}}
  %y = spatial.kernel %x {bound = #graph.bound<dram>, bytes = 0 : i64, cycles = 1 : i64, flops = 0 : i64, id = 0 : i64, kernel_name = "k", kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    spatial.yield %a : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// Tests that a transfer's links are sorted.
func.func @unsorted_links(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{links must be sorted}}
  %t = spatial.transfer %x {bytes = 16 : i64, from_region = array<i64: 0, 0, 1, 1>, from_shard_dim = -1 : i64, hops = 2 : i64, links = array<i64: 3, 1>, to_region = array<i64: 0, 2, 1, 1>, to_shard_dim = -1 : i64} : tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// Tests that the parser refuses a collective algorithm that names none,
// listing those spatial-lower-collectives knows.
func.func @collective_algorithm(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{collective algorithm must be ring, direct or hierarchical, got 'tree'}}
  %r:2 = spatial.collective %a, %b {algorithm = #spatial.collective_algorithm<tree>, axis = -1 : i64, bytes = 16 : i64, chips = array<i64: 0, 1>, kind = #spatial.collective_kind<all_reduce>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Tests that the parser refuses a collective kind that names none.
func.func @collective_kind(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{collective kind must be all_reduce or all_gather, got 'sum'}}
  %r:2 = spatial.collective %a, %b {algorithm = #spatial.collective_algorithm<ring>, axis = -1 : i64, bytes = 16 : i64, chips = array<i64: 0, 1>, kind = #spatial.collective_kind<sum>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Tests that a kind the cost model prices but spatial-lower-collectives
// does not lower is refused.
func.func @collective_kind_reduce_scatter(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{collective kind must be all_reduce or all_gather, got 'reduce_scatter'}}
  %r:2 = spatial.collective %a, %b {algorithm = #spatial.collective_algorithm<ring>, axis = -1 : i64, bytes = 16 : i64, chips = array<i64: 0, 1>, kind = #spatial.collective_kind<reduce_scatter>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Tests that an all-gather's axis is a dimension of its operands.
func.func @collective_axis(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'spatial.collective' op axis 1 is out of range}}
  %r:2 = spatial.collective %a, %b {algorithm = #spatial.collective_algorithm<direct>, axis = 1 : i64, bytes = 16 : i64, chips = array<i64: 0, 1>, kind = #spatial.collective_kind<all_gather>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// Tests that a transfer between chips names its chip links.
func.func @transfer_chip_links(%a: tensor<4xf32>) {
  // expected-error @+1 {{'spatial.transfer' op a transfer between chips needs its chip links}}
  %t = spatial.transfer %a {bytes = 16 : i64, from_chip = 0 : i64, from_region = array<i64: 0, 0, 1, 1>, from_shard_dim = -1 : i64, hops = 1 : i64, links = array<i64>, to_chip = 1 : i64, to_region = array<i64: 0, 0, 1, 1>, to_shard_dim = -1 : i64} : tensor<4xf32>
  return
}
