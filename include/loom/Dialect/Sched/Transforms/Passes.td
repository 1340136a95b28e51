//===- Passes.td - sched dialect passes --------------------*- tablegen -*-===//
#ifndef LOOM_SCHED_PASSES
#define LOOM_SCHED_PASSES

include "mlir/Pass/PassBase.td"

def SpatialToSched : Pass<"spatial-to-sched", "mlir::func::FuncOp"> {
  let summary = "List-schedule a spatial function and allocate its SRAM";
  let description = [{
    Gives every instruction an exact start cycle and every buffer an SRAM
    offset:

    - A kernel becomes one instruction per tile of its region on the matrix
      unit (matmul, conv), the vector unit (vector kinds, and a matmul's or
      conv's epilogue, which runs beside the matrix unit) or the DMA unit
      (data movement), each as long as the kernel's cost-model estimate. A
      transfer becomes one DMA instruction per sending tile and one
      instruction per mesh link it uses, each moving its bytes at the link
      bandwidth plus the hop latency of the longest route.
    - List scheduling in program order over a reservation table per
      resource (each tile's matrix, vector and DMA unit; each mesh link): a
      kernel's or transfer's instructions start together, at the earliest
      cycle after all their producers have finished where all their
      resources are free.
    - Every tensor shard is a buffer on its tile: weights live for the
      whole program, model inputs from cycle 0, other values from their
      producer's start; each lives until its last reader ends (model
      outputs until the end). Offsets are best-fit per tile
      (`assignSramOffsets`); the peak is reported against the lower bound.

    A tile whose live bytes exceed its SRAM fails the pass with one
    diagnostic at the kernel that pushed it over.

    Software pipelining: when the function's `spatial.mapping` is
    "pipelined" or "hybrid" (set by graph-to-spatial), the tasks are modulo
    scheduled for a stream of inputs instead: the initiation interval (II)
    starts at the resource bound (the busiest unit or link's cycles per
    input) and rises by 1/32 until every task finds a start, in program
    order, whose resources are free modulo II; iteration k runs k * II
    cycles later. Buffers rotate over ceil(lifetime / II) copies, weights
    are resident, and SRAM offsets are best-fit over lifetimes taken modulo
    II. Should II reach one input's latency, the list schedule is used.
    With `max-ii`, an II above the limit fails with a diagnostic naming the
    busiest unit or mesh link and the kernels or transfers that load it.
    A transfer between tiles on a target without a mesh has no route and
    fails the pass.
  }];
  let dependentDialects = ["loom::sched::SchedDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"tiny\"",
           "Target preset name or JSON file">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"1",
           "Byte alignment of SRAM offsets">,
    Option<"maxII", "max-ii", "int64_t", /*default=*/"0",
           "Fail unless a new input can start every this many cycles (0: "
           "no limit)">
  ];
}

#endif // LOOM_SCHED_PASSES
