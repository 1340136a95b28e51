//===- SpatialAttrs.td - A collective's kind and algorithm -*- tablegen -*-===//
//
// The attributes spatial.collective states its kind and algorithm in. Each
// holds the compiler's C++ enum (loom/Target/Collective.h), the one the
// cost model prices a collective by and the chip network chooses an
// algorithm as, and prints its spelling:
// `#spatial.collective_kind<all_reduce>`,
// `#spatial.collective_algorithm<ring>`. The parser refuses a spelling that
// names no value, with the list of those that do. The generated accessors
// (getKind(), getAlgorithm()) return the enum itself.
//
// They are the spatial dialect's, not the graph dialect's beside a
// kernel's kind and precision: only spatial.collective has them (the graph
// dialect's collectives are ops of their own, graph.all_reduce and
// graph.all_gather, and choose no algorithm).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SPATIAL_ATTRS
#define LOOM_SPATIAL_ATTRS

include "loom/Dialect/Graph/IR/GraphAttrs.td"
include "loom/Dialect/Spatial/IR/SpatialBase.td"

def Spatial_CollectiveKindAttr
    : Loom_EnumValueAttr<Spatial_Dialect, "CollectiveKind", "collective_kind",
                         "::loom::CollectiveKind"> {
  let summary = "a collective kind: #spatial.collective_kind<all_reduce|"
                "all_gather>";
  let description = [{
    all_reduce (every chip gets the sum of the operands) or all_gather
    (every chip gets their concatenation): the kinds of
    `loom::CollectiveKind` spatial-lower-collectives lowers; the cost
    model's other kinds (reduce_scatter, all_to_all, broadcast, send_recv)
    are refused.

    Example: `kind = #spatial.collective_kind<all_reduce>`
  }];
  let genVerifyDecl = 1;
}

def Spatial_CollectiveAlgorithmAttr
    : Loom_EnumValueAttr<Spatial_Dialect, "CollectiveAlgorithm",
                         "collective_algorithm",
                         "::loom::CollectiveAlgorithm"> {
  let summary = "a collective algorithm: #spatial.collective_algorithm<ring|"
                "direct|hierarchical>";
  let description = [{
    ring, direct or hierarchical (`loom::CollectiveAlgorithm`), as
    `ChipNetwork::collectiveAlgorithm` chose it for the topology.

    Example: `algorithm = #spatial.collective_algorithm<ring>`
  }];
}

#endif // LOOM_SPATIAL_ATTRS
