//===- SpatialOps.td - The spatial dialect -----------------*- tablegen -*-===//
//
// Kernels placed on rectangles of tiles, weights resident in the SRAM of the
// tiles that use them, and explicit on-chip transfers between placements.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SPATIAL_OPS
#define LOOM_SPATIAL_OPS

include "loom/Dialect/Graph/IR/GraphAttrs.td"
include "loom/Dialect/Spatial/IR/SpatialAttrs.td"
include "loom/Dialect/Spatial/IR/SpatialBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Spatial_WeightOp : Spatial_Op<"weight", [Pure]> {
  let summary = "A constant resident in SRAM on the tiles of its placement";
  let description = [{
    Weights live for the whole program, sharded over `region` along
    `shard_dim` like any other tensor.

    Example:
    ```mlir
    %w = spatial.weight {region = array<i64: 0, 0, 2, 2>, shard_dim = 0 : i64, value = dense<1.0> : tensor<8x16xf32>} : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value, DenseI64ArrayAttr:$region,
                       Spatial_I64Attr:$shard_dim,
                       DefaultValuedAttr<Spatial_I64Attr, "0">:$chip,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$layout);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Spatial_KernelOp : Spatial_Op<"kernel", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A fused group of graph ops placed on a tile region";
  let description = [{
    The body is the body of the `graph.kernel` it came from, its terminator
    now `spatial.yield`. `id` numbers kernels in program order; `kernel_name` is
    the ONNX node of its anchor op. `region` is the rectangle of tiles it runs
    on; result `i` is sharded along `shard_dims[i]` over it. Every input is
    expected in this kernel's own placement (the region, sharded by the
    default rule of `chooseShardDim`); `graph-to-spatial` inserts transfers
    where it is not. `cycles` and `bound` are the cost model's estimate on
    the region, `flops` the useful matrix FLOPs and `bytes` the SRAM bytes
    read and written. `group` is the kernel's pipeline group: in a
    pipelined or hybrid mapping the kernels of one group have disjoint
    regions, and only kernels of different groups share tiles. `storage`
    is the `graph.kernel`'s: the format its results are stored in, when
    narrower than their type (`#graph.precision<...>`, bf16, fp16 or fp8).

    Example:
    ```mlir
    %y = spatial.kernel %x, %w {block = array<i64: 16, 16, 16>, bound = #graph.bound<compute>, bytes = 1536 : i64, cycles = 40 : i64, flops = 4096 : i64, id = 0 : i64, kernel_name = "mm", kind = #graph.kind<matmul>, precision = #graph.precision<fp32>, region = array<i64: 0, 0, 1, 1>, shard_dims = array<i64: -1>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> {
    ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>):
      %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      spatial.yield %m : tensor<4x16xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, Spatial_I64Attr:$id,
                       StrAttr:$kernel_name, Graph_KernelKindAttr:$kind,
                       Graph_PrecisionAttr:$precision,
                       OptionalAttr<DenseI64ArrayAttr>:$block,
                       DenseI64ArrayAttr:$region,
                       DenseI64ArrayAttr:$shard_dims, Spatial_I64Attr:$cycles,
                       Graph_CostBoundAttr:$bound, Spatial_I64Attr:$flops, Spatial_I64Attr:$bytes,
                       DefaultValuedAttr<Spatial_I64Attr, "0">:$group,
                       DefaultValuedAttr<Spatial_I64Attr, "0">:$chip,
                       OptionalAttr<Graph_PrecisionAttr>:$storage,
                       OptionalAttr<StrAttr>:$decomposition);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results) $body
  }];
  let hasVerifier = 1;
}

def Spatial_YieldOp : Spatial_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"KernelOp">]> {
  let summary = "Returns a spatial kernel's results";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
}

def Spatial_TransferOp : Spatial_Op<"transfer", [Pure,
    AllTypesMatch<["source", "result"]>]> {
  let summary = "Moves a tensor between placements over the on-chip mesh";
  let description = [{
    The result is the source, re-sharded from (`from_region`,
    `from_shard_dim`, `from_layout`) to (`to_region`, `to_shard_dim`,
    `to_layout`); a destination may be replicated or haloed, so several
    tiles can receive the same bytes. `bytes` counts the
    bytes that change tiles plus those copied within a tile; `hops` is the
    longest route (XY dimension-order routing); `links` lists, sorted, the
    ids of the directed mesh links the routes use (see `loom::spatial::Mesh`).

    Between chips (`from_chip` != `to_chip`) the tensor crosses the chip
    network instead: `hops` counts chip-to-chip hops and `chip_links` lists,
    in route order, the chip links it uses (see `loom::ChipNetwork`); the
    on-chip legs to and from each chip's port are not modelled.

    Example:
    ```mlir
    %t = spatial.transfer %x {bytes = 96 : i64, from_region = array<i64: 0, 0, 1, 2>, from_shard_dim = 0 : i64, hops = 1 : i64, links = array<i64: 0>, to_region = array<i64: 0, 0, 1, 1>, to_shard_dim = -1 : i64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source, DenseI64ArrayAttr:$from_region,
                       Spatial_I64Attr:$from_shard_dim, DenseI64ArrayAttr:$to_region,
                       Spatial_I64Attr:$to_shard_dim, Spatial_I64Attr:$bytes, Spatial_I64Attr:$hops,
                       DenseI64ArrayAttr:$links,
                       DefaultValuedAttr<Spatial_I64Attr, "0">:$from_chip,
                       DefaultValuedAttr<Spatial_I64Attr, "0">:$to_chip,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$chip_links,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$from_layout,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$to_layout);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$source attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Spatial_CollectiveOp : Spatial_Op<"collective", [Pure]> {
  let summary = "An all-reduce or all-gather across chips";
  let description = [{
    Operand `i` lives on chip `chips[i]`, whole on that chip's first tile
    (region 0, 0, 1, 1; shard dimension -1), and so does result `i`.
    `kind` (`#spatial.collective_kind<...>`) all_reduce: every result is
    the sum of the operands; all_gather: every result is their
    concatenation along `axis`.
    `algorithm` (`#spatial.collective_algorithm<...>`) is how
    `spatial-lower-collectives` turns it into chip-to-chip transfers and
    per-chip kernels, chosen for the topology: ring (reduce-scatter and
    all-gather around a ring of direct links), direct (every chip sends
    each other chip its chunk at once, over direct links), or hierarchical
    (direct inside each node, then across nodes between the chips of equal
    rank, then direct inside each node again).
    `bytes` is one operand's size.

    Example:
    ```mlir
    %r:2 = spatial.collective %a, %b {algorithm = #spatial.collective_algorithm<direct>, axis = -1 : i64, bytes = 32 : i64, chips = array<i64: 0, 1>, kind = #spatial.collective_kind<all_reduce>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
                       Spatial_CollectiveKindAttr:$kind,
                       Spatial_I64Attr:$axis, DenseI64ArrayAttr:$chips,
                       Spatial_CollectiveAlgorithmAttr:$algorithm,
                       Spatial_I64Attr:$bytes);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

#endif // LOOM_SPATIAL_OPS
