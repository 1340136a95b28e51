//===- SpatialBase.td - The spatial dialect ----------------*- tablegen -*-===//
//
// The spatial dialect, its op base class and its signed 64-bit integer
// attribute: what its attributes (SpatialAttrs.td) and ops (SpatialOps.td)
// build on.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SPATIAL_BASE
#define LOOM_SPATIAL_BASE

include "mlir/IR/OpBase.td"

/// A 64-bit signless integer attribute read back as a signed int64_t (I64Attr
/// returns uint64_t, which would turn -1 into 2^64 - 1).
def Spatial_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
    "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

def Spatial_Dialect : Dialect {
  let name = "spatial";
  let cppNamespace = "::loom::spatial";
  let summary = "Kernels placed on tile regions, with explicit on-chip transfers";
  let description = [{
    The `spatial` dialect says where everything lives: on which chip
    (`chip`, default 0) and on which tiles of it. A
    *placement* is a tile region (`region = array<i64: row, col, rows,
    cols>`, the top-left tile and the size of a rectangle of the tile grid)
    and a *shard dimension*: the tensor is split into `rows * cols` contiguous
    blocks along that dimension, block `i` (row-major in the region) on tile
    `i`; the block size is `ceil(size / tiles)`, so trailing tiles may hold
    less or nothing. A shard dimension of -1 keeps the whole tensor on the
    region's first tile, and -2 puts the whole tensor on every tile of the
    region (replicated: a multicast operand). An optional `layout =
    array<i64: block, halo_lo, halo_hi>` widens each tile's block: block `i`
    holds elements `[i * block - halo_lo, (i + 1) * block + halo_hi)` of the
    shard dimension, clipped to the tensor (the last block to its end), which
    is how a convolution split by output rows gets its input rows with their
    halo.

    - `spatial.weight`: a constant resident in the SRAM of its placement for
      the whole program.
    - `spatial.kernel`: a fused group of graph ops (the body of a
      `graph.kernel`) run on a tile region; its results are sharded per
      `shard_dims`. It carries the cost model's estimate.
    - `spatial.transfer`: moves a tensor from one placement to another over
      the mesh (dimension-order XY routing); it records the bytes that change
      tiles, the longest route in hops and the mesh links it uses.

    Function arguments carry their placement as `spatial.region` and
    `spatial.shard_dim` argument attributes.
  }];
  // A kernel's kind, precision and bound are the graph dialect's
  // attributes, and its body holds graph ops.
  let dependentDialects = ["::loom::graph::GraphDialect"];
  // A collective's kind and algorithm (SpatialAttrs.td).
  let useDefaultAttributePrinterParser = 1;
}

class Spatial_Op<string mnemonic, list<Trait> traits = []>
    : Op<Spatial_Dialect, mnemonic, traits>;

#endif // LOOM_SPATIAL_BASE
