//===- Passes.td - spatial dialect passes ------------------*- tablegen -*-===//
#ifndef LOOM_SPATIAL_PASSES
#define LOOM_SPATIAL_PASSES

include "mlir/Pass/PassBase.td"

def GraphToSpatial : Pass<"graph-to-spatial", "mlir::func::FuncOp"> {
  let summary = "Place each graph.kernel on a tile region";
  let description = [{
    Lowers a function of `graph.constant`, `graph.kernel` and `func.return`
    to the spatial dialect, one kernel at a time in program order:

    - Each kernel is costed with the shared cost model on every rectangle of
      the tile grid no larger than its work (matrix output blocks, or vector
      lane-groups). It gets the smallest rectangle whose estimate is within
      `tolerance` percent of the best, so a small kernel does not occupy
      tiles that do not pay for themselves. The rectangle's origin is the
      one that brings the inputs in with the fewest bytes x hops, among
      those whose tiles still have SRAM for the kernel's weights (ties: the
      tiles holding the fewest weight bytes so far, which spreads weights
      over the chip).
    - Results are sharded along `chooseShardDim` (the outermost dimension
      that divides the tile count). Every input is expected in the kernel's
      own placement; weights (`graph.constant` at function level) are placed
      there, function arguments where their first user wants them, and a
      `spatial.transfer` (XY routes, bytes, hops, links) is inserted
      wherever a value lives elsewhere.

    That is the `sequential` mapping (one input at a time). With
    `mapping=pipelined` every kernel gets its own rectangle, packed along a
    snake of bands of the grid so neighbouring kernels are adjacent, sized
    to balance the estimated stage times; `hybrid` cuts the kernels into
    groups, each pipelined over the whole chip; `auto` estimates all three
    (see Mapping.h) and keeps the best for `objective` (latency of one
    input, or throughput: the initiation interval of a stream). The choice
    and the estimates are recorded on the function as `spatial.mapping`,
    `spatial.pipeline_groups` and `spatial.mapping_report`, and each
    kernel's pipeline group as its `group`.

    Ops other than kernels, constants and the return are rejected: run
    `graph-form-kernels` first.
  }];
  let dependentDialects = ["loom::spatial::SpatialDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"tiny\"",
           "Target preset name or JSON file">,
    Option<"tolerance", "tolerance", "double", /*default=*/"3.0",
           "Percent above the best estimate a smaller region may cost">,
    Option<"mapping", "mapping", "std::string", /*default=*/"\"sequential\"",
           "auto, sequential, pipelined or hybrid">,
    Option<"objective", "objective", "std::string", /*default=*/"\"latency\"",
           "What auto minimises: latency or throughput (the interval "
           "between inputs of a stream)">
  ];
}

def SpatialLowerCollectives : Pass<"spatial-lower-collectives", "mlir::func::FuncOp"> {
  let summary = "Lower spatial.collective to chip-to-chip transfers and "
                "per-chip kernels";
  let description = [{
    Every `spatial.collective` becomes point-to-point `spatial.transfer`s
    between chips (each over its chip-network route) and small kernels on
    each chip's first tile that slice, sum and concatenate, by its
    `algorithm` (`#spatial.collective_algorithm<...>`):

    - direct all-reduce: every chip cuts its operand into one chunk per
      chip (along the operand's longest dimension) and sends chunk j to
      chip j, which sums the chunks (in chip order); then every chip sends
      its summed chunk to every other chip and each concatenates them
      (a reduce-scatter then an all-gather, both in one step).
    - ring all-reduce: the same chunks go around the ring: n - 1 steps in
      which every chip passes a partial sum to the next chip, which adds its
      own chunk, then n - 1 steps passing the finished chunks on.
    - hierarchical all-reduce: a direct reduce-scatter inside each node,
      then for each chunk a direct all-reduce between the chips of equal
      rank in the nodes, then a direct all-gather inside each node.
    - all-gather: every chip sends its piece to every other chip (direct
      and hierarchical) or passes pieces around the ring (ring), and each
      concatenates them along `axis`.

    A tensor with fewer elements along its longest dimension than there are
    chips is cut into fewer chunks, and a ring then falls back to direct.
    Kernel ids are renumbered in program order afterwards. The schedule
    (`spatial-to-sched`) books each transfer on the chip links of its
    route, so the collective's timing is as static as the rest.
  }];
  let dependentDialects = ["::loom::graph::GraphDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"tiny\"",
           "Target preset name or JSON file">,
  ];
}

#endif // LOOM_SPATIAL_PASSES
